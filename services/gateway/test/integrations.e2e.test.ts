import { randomBytes } from "node:crypto";
import { connectRedis, createPool, type Pool, type Redis } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Json, type Stack } from "./stack.js";

let stack: Stack;
let pool: Pool;
let redis: Redis;
beforeAll(async () => {
  stack = await startStack();
  pool = createPool(stack.database.url, 2);
  redis = await connectRedis("redis://127.0.0.1:6379");
});
afterAll(async () => {
  await redis?.close();
  await pool?.end();
  await stack?.stop();
});

const OBJECT_ID = /^[0-9a-f]{24}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** The fields of the spec's Integration table that every response carries. */
const INTEGRATION_FIELDS = [
  "_id",
  "_environmentId",
  "_organizationId",
  "name",
  "identifier",
  "providerId",
  "channel",
  "credentials",
  "configurations",
  "active",
  "deleted",
  "primary",
  "conditions",
];

interface Integration {
  _id: string;
  name: string;
  channel: string;
  providerId: string;
  primary: boolean;
  active: boolean;
  priority: number;
  identifier: string;
  credentials: Record<string, unknown>;
  _environmentId: string;
}

/** A key for a new environment of the default organization, and a request function using it. */
async function environment(name: string, organization?: string) {
  const key = await stack.createKey(name, organization);
  const headers = { authorization: `ApiKey ${key}` };
  return {
    key,
    request: <T = Json>(method: string, path: string, body?: unknown) => stack.request<T>(method, path, body, headers),
  };
}

async function create(as: Awaited<ReturnType<typeof environment>>, body: Record<string, unknown>): Promise<Integration> {
  const reply = await as.request<Data<Integration>>("POST", "/v1/integrations", body);
  expect(reply.status).toBe(201);
  return reply.body.data;
}

async function list(as: Awaited<ReturnType<typeof environment>>): Promise<Integration[]> {
  const reply = await as.request<Data<Integration[]>>("GET", "/v1/integrations");
  expect(reply.status).toBe(200);
  return reply.body.data;
}

const primariesOf = (integrations: Integration[], channel: string) =>
  integrations.filter((integration) => integration.channel === channel && integration.primary);

describe("integrations", () => {
  it("every environment has an active Novu in-app integration, with every field of the spec", async () => {
    const as = await environment("Fresh");
    const integrations = await list(as);
    expect(integrations).toHaveLength(1);
    const [inApp] = integrations;
    for (const field of INTEGRATION_FIELDS) expect(inApp).toHaveProperty(field);
    expect(inApp).toMatchObject({ providerId: "novu", channel: "in_app", active: true, primary: false, deleted: false, conditions: [] });
    expect(inApp!._id).toMatch(OBJECT_ID);
  });

  it("creates an integration with Novu's default name and identifier, and the given credentials", async () => {
    const as = await environment("Create");
    const reply = await as.request("POST", "/v1/integrations", {
      providerId: "sendgrid",
      channel: "email",
      credentials: { apiKey: "SG.key", from: "noreply@example.com", senderName: "Acme", secure: true, notACredential: "dropped" },
      configurations: { inboundWebhookEnabled: false },
      check: false,
    });
    expect(reply.status).toBe(201);
    const integration = reply.body.data;
    for (const field of INTEGRATION_FIELDS) expect(integration).toHaveProperty(field);
    expect(integration).toMatchObject({
      name: "SendGrid",
      providerId: "sendgrid",
      channel: "email",
      active: false,
      primary: false,
      deleted: false,
      conditions: [],
      credentials: { apiKey: "SG.key", from: "noreply@example.com", senderName: "Acme", secure: true },
      configurations: { inboundWebhookEnabled: false },
    });
    expect(integration.credentials).not.toHaveProperty("notACredential");
    // Made from the name as Novu slugs it (camelCase split).
    expect(integration.identifier).toMatch(/^send-grid-[\w-]+$/);
    expect(integration.createdAt).toMatch(ISO);
    expect(integration).not.toHaveProperty("deletedAt");
  });

  it("keeps the settings Novu's providers read beyond the spec's: OneSignal's apiVersion, SES's configuration set", async () => {
    const as = await environment("Beyond");
    const oneSignal = await as.request("POST", "/v1/integrations", {
      providerId: "one-signal",
      channel: "push",
      credentials: { apiKey: "os-key", applicationId: "app-1", apiVersion: "externalId" },
    });
    expect(oneSignal.body.data.credentials).toMatchObject({ applicationId: "app-1", apiVersion: "externalId" });
    const ses = await as.request<Data<{ _id: string; configurations: object }>>("POST", "/v1/integrations", {
      providerId: "ses",
      channel: "email",
      credentials: { region: "eu-west-1" },
      configurations: { inboundWebhookEnabled: true, configurationSetName: "notify-events" },
    });
    expect(ses.body.data.configurations).toEqual({ inboundWebhookEnabled: true, configurationSetName: "notify-events" });
    const listed = await as.request<Data<{ _id: string; configurations: object }[]>>("GET", "/v1/integrations");
    expect(listed.body.data.find((integration) => integration._id === ses.body.data._id)?.configurations).toMatchObject({
      configurationSetName: "notify-events",
    });
  });

  it("answers 409 for an identifier taken in the environment, and stores nothing", async () => {
    const as = await environment("Conflict");
    await create(as, { providerId: "twilio", channel: "sms", identifier: "sms-main" });
    const before = await list(as);
    const reply = await as.request("POST", "/v1/integrations", { providerId: "plivo", channel: "sms", identifier: "sms-main" });
    expect(reply.status).toBe(409);
    expect(reply.body).toMatchObject({ statusCode: 409, message: "Integration with identifier already exists" });
    expect(await list(as)).toEqual(before);
  });

  it("answers 400 for a second Novu in-app provider", async () => {
    const as = await environment("SecondInApp");
    const reply = await as.request("POST", "/v1/integrations", { providerId: "novu", channel: "in_app", active: true });
    expect(reply.status).toBe(400);
    expect(await list(as)).toHaveLength(1);
  });

  it.each([
    ["an unknown channel", { providerId: "x", channel: "fax" }, "channel"],
    ["a missing channel", { providerId: "x" }, "channel"],
    ["a missing providerId", { channel: "email" }, "providerId"],
    ["a providerId that is not a string", { providerId: 42, channel: "email" }, "providerId"],
    ["an empty providerId", { providerId: "", channel: "email" }, "providerId"],
    ["a name over 255 characters", { providerId: "x", channel: "email", name: "n".repeat(256) }, "name"],
    ["active not a boolean", { providerId: "x", channel: "email", active: "yes" }, "active"],
    ["credentials not an object", { providerId: "x", channel: "email", credentials: "secret" }, "credentials"],
    ["a credential of the wrong type", { providerId: "x", channel: "email", credentials: { apiKey: 12 } }, "credentials.apiKey"],
    ["conditions not an array", { providerId: "x", channel: "email", conditions: {} }, "conditions"],
    [
      "a condition with an unknown operator",
      {
        providerId: "x",
        channel: "email",
        conditions: [{ isNegated: false, type: "TEXT", value: "AND", children: [{ field: "a", value: "b", operator: "ROUGHLY", on: "payload" }] }],
      },
      "conditions[0].children[0].operator",
    ],
    [
      "a condition whose value is not a string",
      {
        providerId: "x",
        channel: "email",
        conditions: [{ isNegated: false, type: "TEXT", value: "AND", children: [{ field: "a", value: 1, operator: "EQUAL", on: "payload" }] }],
      },
      "conditions[0].children[0].value",
    ],
    [
      "a condition with over 100 children",
      {
        providerId: "x",
        channel: "email",
        conditions: [
          {
            isNegated: false,
            type: "TEXT",
            value: "AND",
            children: Array.from({ length: 101 }, () => ({ field: "a", value: "b", operator: "EQUAL", on: "payload" })),
          },
        ],
      },
      "conditions[0].children",
      "children must contain no more than 100 elements",
    ],
  ])("422 for %s, with nothing stored", async (_, body, field, message?: string) => {
    const as = await environment(`Invalid ${field} ${Object.keys(body).join()}`);
    const before = await list(as);
    const reply = await as.request("POST", "/v1/integrations", body);
    expect(reply.status).toBe(422);
    expect(reply.body.errors).toHaveProperty([field]);
    expect(reply.body.errors[field].messages.length).toBeGreaterThan(0);
    if (message) expect(reply.body.errors[field].messages).toEqual([message]);
    expect(await list(as)).toEqual(before);
  });

  it("400 for a body that is not JSON", async () => {
    const reply = await stack.request("POST", "/v1/integrations", "{providerId:");
    expect(reply.status).toBe(400);
  });

  it("updates the given fields and answers 404, 409, 400 and 422 as it should", async () => {
    const as = await environment("Update");
    const integration = await create(as, { providerId: "mailgun", channel: "email", credentials: { apiKey: "k1", domain: "mg.example.com" } });
    await create(as, { providerId: "mailgun", channel: "email", identifier: "taken" });

    const renamed = await as.request("PUT", `/v1/integrations/${integration._id}`, { name: "Transactional", credentials: { apiKey: "k2" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: "Transactional", credentials: { apiKey: "k2" } });
    expect(renamed.body.data.credentials).not.toHaveProperty("domain");

    expect((await as.request("PUT", `/v1/integrations/${"0".repeat(24)}`, { name: "x" })).status).toBe(404);
    expect((await as.request("PUT", `/v1/integrations/${integration._id}`, { identifier: "taken" })).status).toBe(409);
    const empty = await as.request("PUT", `/v1/integrations/${integration._id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe("No properties found for update");
    const invalidId = await as.request("PUT", "/v1/integrations/not-an-id", { name: "x" });
    expect(invalidId.status).toBe(422);
    expect(invalidId.body.errors.integrationId.messages).toEqual(["integrationId must be a mongodb id"]);
    expect((await as.request("PUT", `/v1/integrations/${integration._id}`, { active: "no" })).status).toBe(422);
    const unchanged = (await list(as)).find((item) => item._id === integration._id);
    expect(unchanged).toMatchObject({ name: "Transactional", active: false });
  });

  it("deletes softly: gone from every list, and set-primary no longer finds it", async () => {
    const as = await environment("Delete");
    const doomed = await create(as, { providerId: "sendgrid", channel: "email", active: true });
    const kept = await create(as, { providerId: "ses", channel: "email", active: true });
    const reply = await as.request("DELETE", `/v1/integrations/${doomed._id}`);
    expect(reply.status).toBe(200);
    expect(reply.body.data.map((item) => item._id)).not.toContain(doomed._id);
    expect(reply.body.data.map((item) => item._id)).toContain(kept._id);
    expect((await list(as)).map((item) => item._id)).not.toContain(doomed._id);
    const active = await as.request("GET", "/v1/integrations/active");
    expect(active.body.data.map((item) => item._id)).not.toContain(doomed._id);
    expect((await as.request("POST", `/v1/integrations/${doomed._id}/set-primary`)).status).toBe(404);
    expect((await as.request("DELETE", `/v1/integrations/${doomed._id}`)).status).toBe(404);
    const { rows } = await pool.query("SELECT deleted, deleted_at, deleted_by FROM integrations.integrations WHERE id = $1", [doomed._id]);
    expect(rows[0]).toMatchObject({ deleted: true, deleted_by: doomed._environmentId });
    expect(rows[0].deleted_at).toBeInstanceOf(Date);
  });

  it("stores secret credentials encrypted", async () => {
    const as = await environment("AtRest");
    const integration = await create(as, { providerId: "twilio", channel: "sms", credentials: { accountSid: "AC1", token: "tw-secret-token" } });
    const { rows } = await pool.query("SELECT credentials::text AS open, encode(secrets, 'escape') AS sealed FROM integrations.integrations WHERE id = $1", [
      integration._id,
    ]);
    expect(rows[0].open).toContain("AC1");
    expect(rows[0].open + rows[0].sealed).not.toContain("tw-secret-token");
    expect((await list(as)).find((item) => item._id === integration._id)?.credentials).toMatchObject({ token: "tw-secret-token" });
  });
});

describe("set primary (spec 7)", () => {
  it("answers 200 with the integration, which is now the channel's only primary", async () => {
    const as = await environment("Primary");
    const first = await create(as, { providerId: "sendgrid", channel: "email", active: true });
    expect(first.primary).toBe(true);
    const second = await create(as, {
      providerId: "mailgun",
      channel: "email",
      active: false,
      conditions: [{ isNegated: false, type: "TEXT", value: "AND", children: [] }],
    });
    const sms = await create(as, { providerId: "twilio", channel: "sms", active: true });

    const reply = await as.request("POST", `/v1/integrations/${second._id}/set-primary`);
    expect(reply.status).toBe(200);
    for (const field of INTEGRATION_FIELDS) expect(reply.body.data).toHaveProperty(field);
    expect(reply.body.data).toMatchObject({ _id: second._id, primary: true, active: true, conditions: [] });

    const integrations = await list(as);
    expect(primariesOf(integrations, "email").map((item) => item._id)).toEqual([second._id]);
    expect(primariesOf(integrations, "sms").map((item) => item._id)).toEqual([sms._id]);
    const emails = integrations.filter((item) => item.channel === "email");
    expect(Object.fromEntries(emails.map((item) => [item._id, item.priority]))).toEqual({ [second._id]: 2, [first._id]: 1 });
  });

  it("returns an integration that is already primary unchanged", async () => {
    const as = await environment("AlreadyPrimary");
    const first = await create(as, { providerId: "sendgrid", channel: "email", active: true });
    const reply = await as.request("POST", `/v1/integrations/${first._id}/set-primary`);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual(first);
  });

  it.each(["in_app", "chat", "push"])("answers 400 for a %s integration", async (channel) => {
    const as = await environment(`NoPrimary ${channel}`);
    const integration =
      channel === "in_app" ? (await list(as))[0]! : await create(as, { providerId: channel === "chat" ? "slack" : "fcm", channel, active: true });
    const reply = await as.request("POST", `/v1/integrations/${integration._id}/set-primary`);
    expect(reply.status).toBe(400);
    expect(reply.body.message).toBe(`Channel ${channel} does not support primary`);
    expect((await list(as)).find((item) => item._id === integration._id)?.primary).toBe(false);
  });

  it("answers 404 to another environment's key and 422 for an id that is not 24-hex", async () => {
    const owner = await environment("Owner");
    const integration = await create(owner, { providerId: "sendgrid", channel: "email", active: false });
    const stranger = await environment("Stranger");
    const reply = await stranger.request("POST", `/v1/integrations/${integration._id}/set-primary`);
    expect(reply.status).toBe(404);
    expect((await list(owner)).find((item) => item._id === integration._id)).toMatchObject({ primary: false, active: false });
    const invalid = await owner.request("POST", "/v1/integrations/12345/set-primary");
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors).toHaveProperty("integrationId");
  });

  it("leaves exactly one primary when many calls race on one channel", async () => {
    const as = await environment("Race");
    const candidates: Integration[] = [];
    for (let index = 0; index < 6; index += 1) candidates.push(await create(as, { providerId: `p${index}`, channel: "sms", active: index % 2 === 0 }));
    for (let round = 0; round < 3; round += 1) {
      const replies = await Promise.all(candidates.map((candidate) => as.request("POST", `/v1/integrations/${candidate._id}/set-primary`)));
      expect(replies.map((reply) => reply.status)).toEqual(candidates.map(() => 200));
      expect(primariesOf(await list(as), "sms")).toHaveLength(1);
    }
    const { rows } = await pool.query(
      "SELECT count(*)::int AS count FROM integrations.integrations WHERE environment_id = $1 AND channel = 'sms' AND is_primary AND NOT deleted",
      [candidates[0]!._environmentId],
    );
    expect(rows[0].count).toBe(1);
  });
});

describe("active integrations (spec 8)", () => {
  it("lists the organization's active, non-deleted integrations, without other environments' secrets", async () => {
    const development = await environment("Active Dev", "Active Org");
    const production = await environment("Active Prod", "Active Org");
    const elsewhere = await environment("Active Else", "Another Org");

    const live = await create(development, {
      providerId: "sendgrid",
      channel: "email",
      active: true,
      credentials: { apiKey: "dev-secret", from: "a@example.com" },
    });
    const inactive = await create(development, { providerId: "mailgun", channel: "email", active: false });
    const deleted = await create(development, { providerId: "ses", channel: "email", active: true });
    await development.request("DELETE", `/v1/integrations/${deleted._id}`);
    const productionSms = await create(production, {
      providerId: "twilio",
      channel: "sms",
      active: true,
      credentials: { token: "prod-secret", from: "+1555" },
    });
    const foreign = await create(elsewhere, { providerId: "sendgrid", channel: "email", active: true });

    const reply = await development.request<Data<Integration[]>>("GET", "/v1/integrations/active");
    expect(reply.status).toBe(200);
    const active = reply.body.data;
    const ids = active.map((item) => item._id);
    expect(ids).toContain(live._id);
    expect(ids).toContain(productionSms._id);
    expect(ids).not.toContain(inactive._id);
    expect(ids).not.toContain(deleted._id);
    expect(ids).not.toContain(foreign._id);
    expect(active.every((item) => item.active)).toBe(true);
    // Each environment's default in-app integration is listed too.
    expect(
      active
        .filter((item) => item.providerId === "novu")
        .map((item) => item._environmentId)
        .sort(),
    ).toEqual([live._environmentId, productionSms._environmentId].sort());
    for (const item of active) for (const field of INTEGRATION_FIELDS) expect(item).toHaveProperty(field);

    expect(active.find((item) => item._id === live._id)?.credentials).toEqual({ apiKey: "dev-secret", from: "a@example.com" });
    expect(active.find((item) => item._id === productionSms._id)?.credentials).toEqual({ from: "+1555" });

    const fromProduction = (await production.request<Data<Integration[]>>("GET", "/v1/integrations/active")).body.data;
    expect(fromProduction.find((item) => item._id === productionSms._id)?.credentials).toEqual({ token: "prod-secret", from: "+1555" });
    expect(fromProduction.find((item) => item._id === live._id)?.credentials).toEqual({ from: "a@example.com" });
  });
});

describe("idempotency of the routes that answer secrets", () => {
  /** Every string value in Redis (the whole instance: not only idempotency entries). */
  async function redisValues(): Promise<string[]> {
    const values: string[] = [];
    for await (const keys of redis.scanIterator({ MATCH: "*", COUNT: 1000, TYPE: "string" })) {
      if (keys.length > 0) values.push(...(await redis.mGet(keys)).filter((value): value is string => value !== null));
    }
    return values;
  }
  const secret = () => `secret-${randomBytes(12).toString("hex")}`;

  it("keeps no credential of POST /v1/integrations in Redis, and a replay answers the integration as it now is", async () => {
    const as = await environment("Idempotent");
    const [apiKey, password, signingKey] = [secret(), secret(), secret()];
    const body = {
      providerId: "sendgrid",
      channel: "email",
      active: true,
      credentials: { apiKey, password, from: "no-reply@example.com" },
      configurations: { inboundWebhookSigningKey: signingKey },
    };
    const headers = { authorization: `ApiKey ${as.key}`, "idempotency-key": `create-${secret()}` };
    const first = await stack.request("POST", "/v1/integrations", body, headers);
    expect(first.status).toBe(201);
    expect(first.body.data.credentials).toMatchObject({ apiKey, password });
    expect(first.body.data.configurations.inboundWebhookSigningKey).toBe(signingKey);

    const values = await redisValues();
    expect(values.some((value) => value.includes(String(first.body.data._id)))).toBe(true);
    for (const value of values) for (const hidden of [apiKey, password, signingKey]) expect(value).not.toContain(hidden);

    const replay = await stack.request("POST", "/v1/integrations", body, headers);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotency-replay")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect((await list(as)).filter((one) => one.providerId === "sendgrid")).toHaveLength(1);

    expect((await stack.request("POST", "/v1/integrations", { ...body, name: "Other" }, headers)).status).toBe(422);
    await as.request("PUT", `/v1/integrations/${first.body.data._id}`, { name: "Renamed" });
    const renamed = await stack.request("POST", "/v1/integrations", body, headers);
    expect(renamed.body.data).toMatchObject({ _id: first.body.data._id, name: "Renamed", credentials: { apiKey, password } });

    await as.request("DELETE", `/v1/integrations/${first.body.data._id}`);
    const gone = await stack.request("POST", "/v1/integrations", body, headers);
    expect(gone.status).toBe(404);
    expect((await list(as)).filter((one) => one.providerId === "sendgrid")).toEqual([]);
  });

  it("keeps no failure of a sensitive route: the retry runs again", async () => {
    const as = await environment("Idempotent failures");
    const apiKey = secret();
    await create(as, { providerId: "mailgun", channel: "email", identifier: "taken" });
    const body = { providerId: "sendgrid", channel: "email", identifier: "taken", credentials: { apiKey } };
    const headers = { authorization: `ApiKey ${as.key}`, "idempotency-key": `fail-${secret()}` };
    expect((await stack.request("POST", "/v1/integrations", body, headers)).status).toBe(409);
    for (const value of await redisValues()) expect(value).not.toContain(apiKey);
    const taken = (await list(as)).find((one) => one.identifier === "taken")!;
    await as.request("DELETE", `/v1/integrations/${taken._id}`);
    const retried = await stack.request("POST", "/v1/integrations", body, headers);
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotency-replay")).toBeNull();
    expect(retried.body.data.credentials.apiKey).toBe(apiKey);
  });

  it("keeps no credential of set-primary in Redis, and replays it with 200", async () => {
    const as = await environment("Idempotent primary");
    const apiKey = secret();
    await create(as, { providerId: "mailgun", channel: "email", active: true });
    const target = await create(as, { providerId: "sendgrid", channel: "email", credentials: { apiKey } });
    const headers = { authorization: `ApiKey ${as.key}`, "idempotency-key": `primary-${secret()}` };
    const first = await stack.request("POST", `/v1/integrations/${target._id}/set-primary`, undefined, headers);
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ primary: true, credentials: { apiKey } });
    for (const value of await redisValues()) expect(value).not.toContain(apiKey);
    const replay = await stack.request("POST", `/v1/integrations/${target._id}/set-primary`, undefined, headers);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotency-replay")).toBe("true");
    expect(replay.body).toEqual(first.body);
  });
});

describe("readiness", () => {
  it("the dependency health checks the integrations and topics services", async () => {
    const ready = await fetch(`${stack.url}/readyz/dependencies`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { checks: Record<string, string> };
    expect(body.checks).toMatchObject({ integrations: "up", topics: "up" });
  });
});
