import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Reply, type Stack } from "./stack.js";

/** URLs the outbound guard refuses: every form must be refused as it is written, naming the field. */
const FORBIDDEN_URLS = [
  "http://169.254.169.254/",
  "http://127.0.0.1/",
  "http://2130706433/",
  "http://[::ffff:127.0.0.1]/",
  "http://localhost/",
  "http://10.0.0.1:8080/hook",
  "http://[fd00::1]/",
  "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
];
const PUBLIC_URL = "https://hooks.slack.com/services/x";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  for (const [providerId, channel] of [
    ["slack", "chat"],
    ["discord", "chat"],
  ]) {
    expect((await stack.request("POST", "/v1/integrations", { providerId, channel, active: true })).status).toBe(201);
  }
});
afterAll(async () => {
  await stack?.stop();
});

const channelsOf = async (subscriberId: string) => (await stack.request("GET", `/v1/subscribers/${subscriberId}`)).body.data.channels;

function expectRefused(reply: Reply, field: string, value: string) {
  expect(reply.status).toBe(422);
  expect(reply.body.errors[field]).toEqual({ messages: [expect.stringMatching(/ must reach a public address: /)], value });
}

describe("user-set URLs are vetted when written", () => {
  it("accepts a public webhook URL and refuses forbidden ones on PATCH and PUT, changing nothing", async () => {
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId: "hooked" })).status).toBe(201);
    const accepted = await stack.request("PATCH", "/v1/subscribers/hooked/credentials", { providerId: "slack", credentials: { webhookUrl: PUBLIC_URL } });
    expect(accepted.status).toBe(200);
    const before = await channelsOf("hooked");
    expect(before[0].credentials.webhookUrl).toBe(PUBLIC_URL);
    for (const url of FORBIDDEN_URLS) {
      for (const method of ["PATCH", "PUT"]) {
        const reply = await stack.request(method, "/v1/subscribers/hooked/credentials", { providerId: "slack", credentials: { webhookUrl: url } });
        expectRefused(reply, "credentials.webhookUrl", url);
      }
    }
    expect(await channelsOf("hooked")).toEqual(before);
  });

  it("says why, naming the address a name resolves to", async () => {
    const reply = await stack.request("PATCH", "/v1/subscribers/hooked/credentials", {
      providerId: "slack",
      credentials: { webhookUrl: "http://localhost:8080/x" },
    });
    expect(reply.body.errors["credentials.webhookUrl"].messages).toEqual([
      "webhookUrl must reach a public address: localhost resolves to a refused address: 127.0.0.1 is a loopback address",
    ]);
  });

  it("refuses a subscriber created with a forbidden channel URL, creating nothing", async () => {
    const reply = await stack.request("POST", "/v1/subscribers", {
      subscriberId: "created-hooked",
      channels: [
        { providerId: "slack", credentials: { webhookUrl: PUBLIC_URL } },
        { providerId: "discord", credentials: { webhookUrl: "http://0x7f.1/" } },
      ],
    });
    expectRefused(reply, "channels[1].credentials.webhookUrl", "http://0x7f.1/");
    expect(reply.body.errors["channels[0].credentials.webhookUrl"]).toBeUndefined();
    expect((await stack.request("GET", "/v1/subscribers/created-hooked")).status).toBe(404);
  });

  it("refuses a trigger whose recipient brings a forbidden channel URL", async () => {
    const reply = await stack.request("POST", "/v1/events/trigger", {
      name: "any-workflow",
      to: { subscriberId: "inline-hooked", channels: [{ providerId: "slack", credentials: { webhookUrl: "http://169.254.169.254/" } }] },
    });
    expectRefused(reply, "to.channels[0].credentials.webhookUrl", "http://169.254.169.254/");
    expect((await stack.request("GET", "/v1/subscribers/inline-hooked")).status).toBe(404);
  });

  it("refuses integrations whose baseUrl, webhookUrl or host is forbidden, on create and update", async () => {
    const identifiers = async () => (await stack.request<Data<{ identifier: string }[]>>("GET", "/v1/integrations")).body.data.map((item) => item.identifier);
    const existing = await identifiers();
    for (const url of FORBIDDEN_URLS) {
      const reply = await stack.request("POST", "/v1/integrations", {
        providerId: "mailgun",
        channel: "email",
        identifier: "mailgun-forbidden",
        credentials: { apiKey: "k", baseUrl: url },
      });
      expectRefused(reply, "credentials.baseUrl", url);
    }
    const smtp = await stack.request("POST", "/v1/integrations", {
      providerId: "nodemailer",
      channel: "email",
      credentials: { host: "2130706433", port: "25" },
    });
    expectRefused(smtp, "credentials.host", "2130706433");
    expect(await identifiers()).toEqual(existing);

    const created = await stack.request<Data<{ _id: string }>>("POST", "/v1/integrations", {
      providerId: "mailgun",
      channel: "email",
      identifier: "mailgun-public",
      credentials: { apiKey: "k", baseUrl: "https://api.eu.mailgun.net", domain: "" },
    });
    expect(created.status).toBe(201);
    const id = created.body.data._id;
    const update = await stack.request("PUT", `/v1/integrations/${id}`, {
      credentials: { apiKey: "k", baseUrl: "https://api.mailgun.net", webhookUrl: "http://[::ffff:169.254.169.254]/" },
    });
    expectRefused(update, "credentials.webhookUrl", "http://[::ffff:169.254.169.254]/");
    expect(update.body.errors["credentials.baseUrl"]).toBeUndefined();
    const stored = (await stack.request<Data<{ _id: string; credentials: Record<string, unknown> }[]>>("GET", "/v1/integrations")).body.data.find(
      (item) => item._id === id,
    );
    expect(stored?.credentials.baseUrl).toBe("https://api.eu.mailgun.net");
    expect((await stack.request("PUT", `/v1/integrations/${id}`, { credentials: { apiKey: "k", baseUrl: "https://api.mailgun.net" } })).status).toBe(200);
  });
});

describe("OUTBOUND_ALLOWED_CIDRS", () => {
  let open: Stack;
  beforeAll(async () => {
    open = await startStack({ worker: false, outboundAllowedCidrs: "127.0.0.0/8" });
    expect((await open.request("POST", "/v1/integrations", { providerId: "slack", channel: "chat", active: true })).status).toBe(201);
    expect((await open.request("POST", "/v1/subscribers", { subscriberId: "local" })).status).toBe(201);
  });
  afterAll(async () => {
    await open?.stop();
  });

  it("accepts a listed range and still refuses metadata addresses", async () => {
    const local = await open.request("PATCH", "/v1/subscribers/local/credentials", {
      providerId: "slack",
      credentials: { webhookUrl: "http://127.0.0.1:9999/hook" },
    });
    expect(local.status).toBe(200);
    const metadata = await open.request("PATCH", "/v1/subscribers/local/credentials", {
      providerId: "slack",
      credentials: { webhookUrl: "http://169.254.169.254/" },
    });
    expectRefused(metadata, "credentials.webhookUrl", "http://169.254.169.254/");
  });
});
