import { Code } from "@connectrpc/connect";
import { fieldErrorsOf, objectId } from "@notify/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretBox } from "../src/secrets.js";
import { callAs, inMemoryClient, newScope, openDatabase, rpcError, type Fixture, type TestScope } from "./fixtures.js";

let fixture: Fixture;
let client: ReturnType<typeof inMemoryClient>;
beforeAll(async () => {
  fixture = await openDatabase();
  client = inMemoryClient(fixture.pool);
});
afterAll(() => fixture?.close());

const email = (fields: { name?: string; active?: boolean; identifier?: string } = {}) => ({
  providerId: "sendgrid",
  channel: "email",
  active: fields.active ?? true,
  ...(fields.name ? { name: fields.name } : {}),
  ...(fields.identifier ? { identifier: fields.identifier } : {}),
});

async function channelState(scope: TestScope, channel: string) {
  const { integrations } = await client.listIntegrations({ channel }, callAs(scope));
  return Object.fromEntries(
    integrations.map((integration) => [integration.name, { primary: integration.primary, priority: integration.priority, active: integration.active }]),
  );
}

async function primaryCount(environmentId: string, channel: string): Promise<number> {
  const { rows } = await fixture.pool.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM integrations.integrations WHERE environment_id = $1 AND channel = $2 AND is_primary AND NOT deleted",
    [environmentId, channel],
  );
  return rows[0]!.count;
}

describe("every environment's default in-app integration", () => {
  it("exists from the environment's first call, once, even when replicas race", async () => {
    const scope = newScope();
    const replicas = Array.from({ length: 6 }, () => inMemoryClient(fixture.pool));
    await Promise.all(replicas.map((replica) => replica.listIntegrations({}, callAs(scope))));
    const { integrations } = await client.listIntegrations({}, callAs(scope));
    expect(integrations).toHaveLength(1);
    expect(integrations[0]).toMatchObject({ providerId: "novu", channel: "in_app", active: true, primary: false, name: "Novu Inbox" });
    expect(integrations[0]!.identifier).toMatch(/^novu-inbox-[\w-]+$/);
  });

  it("is not made again once deleted", async () => {
    const scope = newScope();
    const [inApp] = (await client.listIntegrations({}, callAs(scope))).integrations;
    await client.deleteIntegration({ id: inApp!.id }, callAs(scope));
    const restarted = inMemoryClient(fixture.pool);
    expect((await restarted.listIntegrations({}, callAs(scope))).integrations).toEqual([]);
  });

  it("allows only one Novu in-app provider per environment", async () => {
    const scope = newScope();
    const error = await rpcError(client.createIntegration({ providerId: "novu", channel: "in_app", active: true }, callAs(scope)));
    expect(error.code).toBe(Code.FailedPrecondition);
  });
});

describe("creating", () => {
  const scope = newScope();
  const call = callAs(scope);

  it("names and identifies an integration as Novu does when the caller does not", async () => {
    const created = await client.createIntegration({ providerId: "mailgun", channel: "email" }, call);
    expect(created).toMatchObject({ name: "Mailgun", active: false, primary: false, priority: 0, deleted: false });
    expect(created.identifier).toMatch(/^mailgun-[\w-]{8}$/);
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    // Novu's name for the provider, not its id: an SMTP server is "Custom SMTP".
    const smtp = await client.createIntegration({ providerId: "nodemailer", channel: "email" }, call);
    expect(smtp.name).toBe("Custom SMTP");
    expect(smtp.identifier).toMatch(/^custom-smtp-[\w-]{8}$/);
  });

  it("answers ALREADY_EXISTS for an identifier taken in the environment, and not across environments", async () => {
    await client.createIntegration({ providerId: "twilio", channel: "sms", identifier: "sms-main" }, call);
    const error = await rpcError(client.createIntegration({ providerId: "plivo", channel: "sms", identifier: "sms-main" }, call));
    expect(error.code).toBe(Code.AlreadyExists);
    await client.createIntegration({ providerId: "twilio", channel: "sms", identifier: "sms-main" }, callAs(newScope()));
  });

  it("answers INVALID_ARGUMENT for an unknown channel, an empty provider and an over-long name", async () => {
    const error = await rpcError(client.createIntegration({ providerId: " ", channel: "fax", name: "x".repeat(256) }, call));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(error) ?? {}).sort()).toEqual(["channel", "name", "providerId"]);
  });

  it("makes an active email integration primary when the channel has none, and puts later ones right below it", async () => {
    const own = newScope();
    await client.createIntegration({ ...email({ name: "first" }) }, callAs(own));
    await client.createIntegration({ ...email({ name: "second" }) }, callAs(own));
    await client.createIntegration({ ...email({ name: "inactive", active: false }) }, callAs(own));
    await client.createIntegration({ ...email({ name: "third" }) }, callAs(own));
    expect(await channelState(own, "email")).toEqual({
      first: { primary: true, priority: 3, active: true },
      second: { primary: false, priority: 1, active: true },
      inactive: { primary: false, priority: 0, active: false },
      third: { primary: false, priority: 2, active: true },
    });
  });

  it("does not make a conditional integration primary", async () => {
    const own = newScope();
    const conditions = [
      { isNegated: false, type: "TEXT", value: "AND", children: [{ field: "identifier", value: "acme", operator: "EQUAL", on: "subscriber" }] },
    ];
    const created = await client.createIntegration({ ...email(), conditions }, callAs(own));
    expect(created.primary).toBe(false);
    expect(created.conditions).toEqual([
      expect.objectContaining({ type: "TEXT", value: "AND", children: [expect.objectContaining({ field: "identifier", operator: "EQUAL" })] }),
    ]);
  });

  it("does not make chat, push or in-app integrations primary", async () => {
    const created = await client.createIntegration({ providerId: "slack", channel: "chat", active: true }, call);
    expect(created).toMatchObject({ primary: false, priority: 0, active: true });
  });
});

describe("set primary", () => {
  it("demotes the channel's primary, activates the target, clears its conditions and renumbers priorities", async () => {
    const scope = newScope();
    const call = callAs(scope);
    await client.createIntegration(email({ name: "a" }), call);
    await client.createIntegration(email({ name: "b" }), call);
    const c = await client.createIntegration(
      { ...email({ name: "c", active: false }), conditions: [{ isNegated: false, type: "TEXT", value: "OR", children: [] }] },
      call,
    );
    const promoted = await client.setPrimaryIntegration({ id: c.id }, call);
    expect(promoted).toMatchObject({ active: true, primary: true, conditions: [], priority: 3 });
    expect(await channelState(scope, "email")).toEqual({
      a: { primary: false, priority: 2, active: true },
      b: { primary: false, priority: 1, active: true },
      c: { primary: true, priority: 3, active: true },
    });
  });

  it("returns an integration that is primary already unchanged", async () => {
    const scope = newScope();
    const created = await client.createIntegration(email(), callAs(scope));
    const again = await client.setPrimaryIntegration({ id: created.id }, callAs(scope));
    expect(again).toEqual(created);
  });

  it("refuses channels without primaries, unknown ids and other environments' integrations", async () => {
    const scope = newScope();
    const chat = await client.createIntegration({ providerId: "slack", channel: "chat", active: true }, callAs(scope));
    expect((await rpcError(client.setPrimaryIntegration({ id: chat.id }, callAs(scope)))).code).toBe(Code.FailedPrecondition);
    const [inApp] = (await client.listIntegrations({ channel: "in_app" }, callAs(scope))).integrations;
    expect((await rpcError(client.setPrimaryIntegration({ id: inApp!.id }, callAs(scope)))).code).toBe(Code.FailedPrecondition);
    expect((await rpcError(client.setPrimaryIntegration({ id: objectId() }, callAs(scope)))).code).toBe(Code.NotFound);
    const mine = await client.createIntegration(email({ active: false }), callAs(scope));
    const sibling = newScope(scope.organizationId);
    expect((await rpcError(client.setPrimaryIntegration({ id: mine.id }, callAs(sibling)))).code).toBe(Code.NotFound);
    expect((await client.listIntegrations({ channel: "email" }, callAs(scope))).integrations[0]?.active).toBe(false);
  });

  it("never leaves two primaries, however many replicas race", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const candidates = [];
    for (let index = 0; index < 8; index += 1) candidates.push(await client.createIntegration(email({ name: `race-${index}`, active: false }), call));
    const replicas = Array.from({ length: 4 }, () => inMemoryClient(fixture.pool));
    for (let round = 0; round < 3; round += 1) {
      await Promise.all(candidates.map((candidate, index) => replicas[index % replicas.length]!.setPrimaryIntegration({ id: candidate.id }, call)));
      expect(await primaryCount(scope.environmentId, "email")).toBe(1);
    }
    const priorities = (await client.listIntegrations({ channel: "email" }, call)).integrations.map((integration) => integration.priority);
    expect(priorities.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("is backed by a unique index: the database itself refuses a second primary", async () => {
    const scope = newScope();
    const a = await client.createIntegration(email(), callAs(scope));
    const b = await client.createIntegration(email(), callAs(scope));
    expect(a.primary && !b.primary).toBe(true);
    await expect(fixture.pool.query("UPDATE integrations.integrations SET is_primary = true WHERE id = $1", [b.id])).rejects.toMatchObject({ code: "23505" });
  });
});

describe("updating", () => {
  it("deactivating the primary leaves the channel without one and renumbers the rest", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const a = await client.createIntegration(email({ name: "a" }), call);
    await client.createIntegration(email({ name: "b" }), call);
    await client.createIntegration(email({ name: "c" }), call);
    const updated = await client.updateIntegration({ id: a.id, active: false }, call);
    expect(updated).toMatchObject({ active: false, primary: false, priority: 0 });
    expect(await channelState(scope, "email")).toEqual({
      a: { primary: false, priority: 0, active: false },
      b: { primary: false, priority: 1, active: true },
      c: { primary: false, priority: 2, active: true },
    });
    // Activated again, on top but not the primary: Novu makes only a new integration the primary.
    const reactivated = await client.updateIntegration({ id: a.id, active: true }, call);
    expect(reactivated).toMatchObject({ active: true, primary: false, priority: 3 });
  });

  it("giving the primary conditions makes it an ordinary integration", async () => {
    const scope = newScope();
    const a = await client.createIntegration(email(), callAs(scope));
    const updated = await client.updateIntegration(
      { id: a.id, conditions: { filters: [{ isNegated: false, type: "TEXT", value: "AND", children: [] }] } },
      callAs(scope),
    );
    expect(updated).toMatchObject({ primary: false, active: true });
    expect(await primaryCount(scope.environmentId, "email")).toBe(0);
  });

  it("replaces credentials, configurations and names, keeps what is not given", async () => {
    const scope = newScope();
    const created = await client.createIntegration(
      {
        ...email({ name: "old" }),
        credentials: { apiKey: "k1", from: "a@example.com" },
        configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: "sig" },
      },
      callAs(scope),
    );
    const renamed = await client.updateIntegration({ id: created.id, name: "new" }, callAs(scope));
    expect(renamed.credentials).toMatchObject({ apiKey: "k1", from: "a@example.com" });
    expect(renamed.configurations).toMatchObject({ inboundWebhookEnabled: true, inboundWebhookSigningKey: "sig" });
    const replaced = await client.updateIntegration({ id: created.id, credentials: { secretKey: "s2" } }, callAs(scope));
    expect(replaced.credentials?.apiKey).toBeUndefined();
    expect(replaced.credentials?.secretKey).toBe("s2");
    expect(replaced.name).toBe("new");
  });

  it("refuses an empty update, a taken identifier and an unknown id", async () => {
    const scope = newScope();
    const a = await client.createIntegration(email({ identifier: "taken" }), callAs(scope));
    const b = await client.createIntegration(email(), callAs(scope));
    expect((await rpcError(client.updateIntegration({ id: a.id }, callAs(scope)))).code).toBe(Code.FailedPrecondition);
    expect((await rpcError(client.updateIntegration({ id: b.id, identifier: "taken" }, callAs(scope)))).code).toBe(Code.AlreadyExists);
    expect((await rpcError(client.updateIntegration({ id: objectId(), name: "x" }, callAs(scope)))).code).toBe(Code.NotFound);
  });
});

describe("getting one", () => {
  it("answers the environment's integration with its secrets, NOT_FOUND once deleted or from another environment", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const created = await client.createIntegration({ ...email(), credentials: { apiKey: "SG.get-one", user: "mailer" } }, call);
    expect(await client.getIntegration({ id: created.id }, call)).toEqual(created);
    expect((await rpcError(client.getIntegration({ id: created.id }, callAs(newScope(scope.organizationId))))).code).toBe(Code.NotFound);
    expect((await rpcError(client.getIntegration({ id: "not-an-id" }, call))).code).toBe(Code.NotFound);
    await client.deleteIntegration({ id: created.id }, call);
    expect((await rpcError(client.getIntegration({ id: created.id }, call))).code).toBe(Code.NotFound);
  });
});

describe("deleting", () => {
  it("soft-deletes: marked deleted with who and when, gone from every list, renumbering the rest", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const a = await client.createIntegration(email({ name: "a", identifier: "reused" }), call);
    await client.createIntegration(email({ name: "b" }), call);
    const remaining = await client.deleteIntegration({ id: a.id }, call);
    expect(remaining.integrations.map((integration) => integration.name).sort()).toEqual(["Novu Inbox", "b"]);
    expect(remaining.integrations.find((integration) => integration.name === "b")?.priority).toBe(1);
    const { rows } = await fixture.pool.query("SELECT deleted, deleted_at, deleted_by FROM integrations.integrations WHERE id = $1", [a.id]);
    expect(rows[0]).toMatchObject({ deleted: true, deleted_by: scope.environmentId });
    expect(rows[0].deleted_at).toBeInstanceOf(Date);
    expect((await client.listOrganizationActiveIntegrations({}, call)).integrations.map((integration) => integration.id)).not.toContain(a.id);
    expect((await rpcError(client.deleteIntegration({ id: a.id }, call))).code).toBe(Code.NotFound);
    expect((await rpcError(client.setPrimaryIntegration({ id: a.id }, call))).code).toBe(Code.NotFound);
    // The identifier of a deleted integration is free again.
    await client.createIntegration(email({ identifier: "reused" }), call);
  });
});

describe("secrets", () => {
  it("are sealed at rest, opened for the owning environment, withheld from the organization's other environments", async () => {
    const scope = newScope();
    const sibling = newScope(scope.organizationId);
    const created = await client.createIntegration(
      {
        ...email({ name: "sealed" }),
        credentials: { apiKey: "SG.plain-api-key", password: "hunter2", user: "mailer", secure: true },
        configurations: { inboundWebhookSigningKey: "whsec_123", inboundWebhookEnabled: true },
      },
      callAs(scope),
    );
    expect(created.credentials).toMatchObject({ apiKey: "SG.plain-api-key", password: "hunter2", user: "mailer", secure: true });

    const { rows } = await fixture.pool.query("SELECT credentials, configurations, secrets FROM integrations.integrations WHERE id = $1", [created.id]);
    const raw = JSON.stringify(rows[0].credentials) + JSON.stringify(rows[0].configurations) + (rows[0].secrets as Buffer).toString("latin1");
    for (const secret of ["SG.plain-api-key", "hunter2", "whsec_123"]) expect(raw).not.toContain(secret);
    expect(rows[0].credentials).toEqual({ user: "mailer", secure: true });

    const seenBySibling = (await client.listOrganizationActiveIntegrations({}, callAs(sibling))).integrations.find((i) => i.id === created.id);
    expect(seenBySibling?.credentials).toMatchObject({ user: "mailer", secure: true });
    expect(seenBySibling?.credentials?.apiKey).toBeUndefined();
    expect(seenBySibling?.credentials?.password).toBeUndefined();
    expect(seenBySibling?.configurations?.inboundWebhookSigningKey).toBeUndefined();
    expect(seenBySibling?.configurations?.inboundWebhookEnabled).toBe(true);
    const seenByOwner = (await client.listOrganizationActiveIntegrations({}, callAs(scope))).integrations.find((i) => i.id === created.id);
    expect(seenByOwner?.credentials?.apiKey).toBe("SG.plain-api-key");

    const otherOrganization = (await client.listOrganizationActiveIntegrations({}, callAs(newScope()))).integrations;
    expect(otherOrganization.map((integration) => integration.id)).not.toContain(created.id);
  });

  it("cannot be read with another key", async () => {
    const scope = newScope();
    await client.createIntegration({ ...email(), credentials: { apiKey: "k" } }, callAs(scope));
    const wrongKey = inMemoryClient(fixture.pool, createSecretBox(Buffer.alloc(32, 9)));
    expect((await rpcError(wrongKey.listIntegrations({ channel: "email" }, callAs(scope)))).code).toBe(Code.Internal);
  });
});

describe("lookups for the other services", () => {
  it("finds the newest active integration of a provider, by identifier when given", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const older = await client.createIntegration({ providerId: "fcm", channel: "push", active: true, identifier: "fcm-old" }, call);
    const newer = await client.createIntegration({ providerId: "fcm", channel: "push", active: true, identifier: "fcm-new" }, call);
    await client.createIntegration({ providerId: "fcm", channel: "push", active: false, identifier: "fcm-off" }, call);
    expect((await client.findActiveIntegration({ providerId: "fcm" }, call)).integration?.id).toBe(newer.id);
    expect((await client.findActiveIntegration({ providerId: "fcm", identifier: "fcm-old" }, call)).integration?.id).toBe(older.id);
    expect((await client.findActiveIntegration({ providerId: "fcm", identifier: "fcm-off" }, call)).integration).toBeUndefined();
    expect((await client.findActiveIntegration({ providerId: "apns" }, call)).integration).toBeUndefined();
    expect((await client.findActiveIntegration({ providerId: "fcm" }, callAs(newScope()))).integration).toBeUndefined();
  });

  it("selects the primary for email and sms, the newest active one otherwise, and lists conditional ones", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const primary = await client.createIntegration(email({ name: "primary" }), call);
    const second = await client.createIntegration(email({ name: "second", identifier: "second" }), call);
    const conditional = await client.createIntegration(
      { ...email({ name: "tenant-only" }), conditions: [{ isNegated: false, type: "TEXT", value: "AND", children: [] }] },
      call,
    );
    const selected = await client.selectIntegration({ channel: "email" }, call);
    expect(selected.integration?.id).toBe(primary.id);
    expect(selected.conditional.map((integration) => integration.id)).toEqual([conditional.id]);
    expect((await client.selectIntegration({ channel: "email", identifier: "second" }, call)).integration?.id).toBe(second.id);
    expect((await client.selectIntegration({ channel: "sms" }, call)).integration).toBeUndefined();
    const [inApp] = (await client.listIntegrations({ channel: "in_app" }, call)).integrations;
    expect((await client.selectIntegration({ channel: "in_app" }, call)).integration?.id).toBe(inApp!.id);
    await client.createIntegration({ providerId: "discord", channel: "chat", active: true }, call);
    const newestChat = await client.createIntegration({ providerId: "slack", channel: "chat", active: true }, call);
    expect((await client.selectIntegration({ channel: "chat" }, call)).integration?.id).toBe(newestChat.id);
    expect((await rpcError(client.selectIntegration({ channel: "pigeon" }, call))).code).toBe(Code.InvalidArgument);
  });
});
