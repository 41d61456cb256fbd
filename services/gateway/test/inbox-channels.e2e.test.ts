import type { Novu } from "@novu/js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration } from "./delivery-helpers.js";
import { openInbox, openSession } from "./inbox-helpers.js";
import { startStack, type Data, type Json, type Stack } from "./stack.js";

// The Inbox's chat connections and endpoints (@novu/js channelConnections and channelEndpoints)
// through the running stack: a session sees and changes its subscriber's own and the shared ones
// of exactly its contexts, never another subscriber's, and never a grant's tokens.

let stack: Stack;
const clients: Novu[] = [];

const grant = { workspace: { id: "T0001", name: "Acme" }, auth: { accessToken: "xoxb-inbox-channels-token" } };

async function apiCreate(path: string, body: Record<string, unknown>): Promise<void> {
  const reply = await stack.request("POST", path, body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
}

/** What the API says of a connection or endpoint (404 once gone). */
const apiRead = (path: string) => stack.request<Data<{ subscriberId: string | null; contextKeys: string[] }> & Json>("GET", path);

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The HTTP status a failed @novu/js call carried. */
const statusOf = (result: { error?: { originalError?: unknown } | undefined }) => (result.error?.originalError as { status?: number } | undefined)?.status;

async function inbox(subscriberId: string, context?: Record<string, string>): Promise<Novu> {
  const novu = await openInbox(stack, subscriberId, context ? { context } : {});
  clients.push(novu);
  return novu;
}

const identifiers = (items: { identifier: string }[] | undefined) => (items ?? []).map((item) => item.identifier).sort();

beforeAll(async () => {
  stack = await startStack();
  await createIntegration(stack, { providerId: "slack", channel: "chat", identifier: "inbox-slack" });
  for (const subscriberId of ["inbox-ann", "inbox-bob"]) {
    expect((await stack.request("POST", "/v1/subscribers", { subscriberId })).status).toBe(201);
  }
  const connection = { integrationIdentifier: "inbox-slack", ...grant };
  await apiCreate("/v1/channel-connections", { ...connection, identifier: "shared-ws", connectionMode: "shared", context: { tenant: "globex" } });
  await apiCreate("/v1/channel-connections", { ...connection, identifier: "ann-conn", subscriberId: "inbox-ann" });
  await apiCreate("/v1/channel-connections", { ...connection, identifier: "ann-acme-conn", subscriberId: "inbox-ann", context: { tenant: "acme" } });
  await apiCreate("/v1/channel-connections", { ...connection, identifier: "acme-ws", connectionMode: "shared", context: { tenant: "acme" } });
  await apiCreate("/v1/channel-connections", { ...connection, identifier: "bob-conn", subscriberId: "inbox-bob" });
  const endpoint = { integrationIdentifier: "inbox-slack", type: "slack_user", endpoint: { userId: "U0BOB" } };
  await apiCreate("/v1/channel-endpoints", { ...endpoint, identifier: "bob-ep", subscriberId: "inbox-bob" });
  await apiCreate("/v1/channel-endpoints", { ...endpoint, identifier: "ann-acme-ep", subscriberId: "inbox-ann", context: { tenant: "acme" } });
}, 120_000);

afterAll(async () => {
  for (const novu of clients) novu.socket.disconnect();
  await stack?.stop();
});

describe("the Inbox's channel connections (@novu/js channelConnections)", () => {
  it("lists and reads the session subscriber's own and the shared ones of its contexts, never tokens or another's", async () => {
    const ann = await inbox("inbox-ann");
    const listed = await ann.channelConnections.list();
    expect(listed.error).toBeUndefined();
    expect(identifiers(listed.data)).toEqual(["ann-conn"]);
    const acme = await inbox("inbox-ann", { tenant: "acme" });
    expect(identifiers((await acme.channelConnections.list()).data)).toEqual(["acme-ws", "ann-acme-conn"]);
    expect(identifiers((await acme.channelConnections.list({ connectionMode: "shared" })).data)).toEqual(["acme-ws"]);
    expect(identifiers((await acme.channelConnections.list({ connectionMode: "subscriber" })).data)).toEqual(["ann-acme-conn"]);
    expect(identifiers((await acme.channelConnections.list({ integrationIdentifier: "elsewhere" })).data)).toEqual([]);

    // What the wire carries: the client's fields only, enveloped as Novu answers.
    const session = await openSession(stack, "inbox-ann", { context: { tenant: "acme" } });
    const page = await stack.request<Json>("GET", "/v1/inbox/channel-connections?limit=1", undefined, bearer(session.token));
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ data: [{ identifier: expect.any(String) }], next: expect.any(String), previous: null });
    const read = await stack.request<Json>("GET", "/v1/inbox/channel-connections/acme-ws", undefined, bearer(session.token));
    expect(read.body).toEqual({ data: { identifier: "acme-ws", workspace: { id: "T0001", name: "Acme" }, createdAt: expect.any(String) } });
    expect(JSON.stringify([page.body, read.body])).not.toContain("xoxb");

    expect((await acme.channelConnections.get({ identifier: "ann-acme-conn" })).error).toBeUndefined();
    // Another subscriber's, another context's, or not of the kind asked: as if it did not exist.
    expect(statusOf(await acme.channelConnections.get({ identifier: "bob-conn" }))).toBe(404);
    expect(statusOf(await acme.channelConnections.get({ identifier: "shared-ws" }))).toBe(404);
    expect(statusOf(await acme.channelConnections.get({ identifier: "ann-conn" }))).toBe(404);
    expect(statusOf(await acme.channelConnections.get({ identifier: "acme-ws", connectionMode: "subscriber" }))).toBe(404);
    expect(statusOf(await acme.channelConnections.get({ identifier: "no-such" }))).toBe(404);

    // Naming another subscriber or other contexts is refused, not answered for the session's.
    const other = await stack.request<Json>("GET", "/v1/inbox/channel-connections?subscriberId=inbox-bob", undefined, bearer(session.token));
    expect([other.status, other.body]).toMatchObject([403, { message: expect.stringContaining("inbox-bob") }]);
    const otherContexts = await stack.request("GET", "/v1/inbox/channel-connections?contextKeys=tenant:globex", undefined, bearer(session.token));
    expect(otherContexts.status).toBe(403);
    const sameContexts = await stack.request(
      "GET",
      "/v1/inbox/channel-connections?contextKeys=tenant:acme&subscriberId=inbox-ann",
      undefined,
      bearer(session.token),
    );
    expect(sameContexts.status).toBe(200);
  });

  it("makes connections held by the session's subscriber and deletes only those it may see", async () => {
    const session = await openSession(stack, "inbox-ann", { context: { tenant: "initech" } });
    const made = await stack.request<Json>(
      "POST",
      "/v1/inbox/channel-connections",
      { identifier: "ann-made", integrationIdentifier: "inbox-slack", subscriberId: "inbox-ann", ...grant },
      bearer(session.token),
    );
    expect([made.status, made.body]).toEqual([201, { data: { identifier: "ann-made", workspace: grant.workspace, createdAt: expect.any(String) } }]);
    expect((await apiRead("/v1/channel-connections/ann-made")).body.data).toMatchObject({ subscriberId: "inbox-ann", contextKeys: ["tenant:initech"] });

    for (const [body, status] of [
      [{ connectionMode: "shared" }, 403],
      [{ subscriberId: "inbox-bob" }, 403],
      [{ context: { tenant: "globex" } }, 403],
      [{ integrationIdentifier: "no-such" }, 404],
      [{ workspace: "T0001" }, 422],
    ] as const) {
      const refused = await stack.request(
        "POST",
        "/v1/inbox/channel-connections",
        { identifier: "refused", integrationIdentifier: "inbox-slack", ...grant, ...body },
        bearer(session.token),
      );
      expect(refused.status, JSON.stringify(body)).toBe(status);
    }
    expect((await apiRead("/v1/channel-connections/refused")).status).toBe(404);

    const initech = await inbox("inbox-ann", { tenant: "initech" });
    for (const identifier of ["bob-conn", "shared-ws", "ann-acme-conn"]) {
      expect(statusOf(await initech.channelConnections.delete({ identifier })), identifier).toBe(404);
      expect((await apiRead(`/v1/channel-connections/${identifier}`)).status).toBe(200);
    }
    expect((await initech.channelConnections.delete({ identifier: "ann-made" })).error).toBeUndefined();
    expect((await apiRead("/v1/channel-connections/ann-made")).status).toBe(404);
    // A shared connection of the session's contexts is the session's to disconnect, as in Novu.
    await apiCreate("/v1/channel-connections", {
      integrationIdentifier: "inbox-slack",
      ...grant,
      identifier: "initech-ws",
      connectionMode: "shared",
      context: { tenant: "initech" },
    });
    expect((await initech.channelConnections.delete({ identifier: "initech-ws" })).error).toBeUndefined();
    expect((await apiRead("/v1/channel-connections/initech-ws")).status).toBe(404);
  });

  it("refuses OAuth and identity links as the API does (400; 404 for an unknown integration)", async () => {
    const ann = await inbox("inbox-ann");
    expect(statusOf(await ann.channelConnections.generateConnectOAuthUrl({ integrationIdentifier: "inbox-slack" }))).toBe(400);
    expect(statusOf(await ann.channelConnections.generateOAuthUrl({ integrationIdentifier: "inbox-slack" }))).toBe(400);
    expect(statusOf(await ann.channelEndpoints.generateLinkUserOAuthUrl({ integrationIdentifier: "inbox-slack", subscriberId: "inbox-ann" }))).toBe(400);
    expect(statusOf(await ann.channelEndpoints.link({ integrationIdentifier: "inbox-slack" }))).toBe(400);
    expect(statusOf(await ann.channelEndpoints.link({ integrationIdentifier: "no-such" }))).toBe(404);
  });
});

describe("the Inbox's channel endpoints (@novu/js channelEndpoints)", () => {
  it("makes, lists, reads and deletes the session subscriber's endpoints in its contexts only", async () => {
    const ann = await inbox("inbox-ann");
    const made = await ann.channelEndpoints.create({
      identifier: "ann-ep",
      integrationIdentifier: "inbox-slack",
      connectionIdentifier: "ann-conn",
      subscriberId: "inbox-ann",
      type: "slack_user",
      endpoint: { userId: "U0ANN" },
    });
    expect(made.error).toBeUndefined();
    expect(made.data).toEqual({ identifier: "ann-ep", type: "slack_user" });
    expect((await apiRead("/v1/channel-endpoints/ann-ep")).body.data).toMatchObject({
      subscriberId: "inbox-ann",
      contextKeys: [],
      connectionIdentifier: "ann-conn",
      endpoint: { userId: "U0ANN" },
    });
    expect(identifiers((await ann.channelEndpoints.list()).data)).toEqual(["ann-ep"]);
    const acme = await inbox("inbox-ann", { tenant: "acme" });
    expect(identifiers((await acme.channelEndpoints.list()).data)).toEqual(["ann-acme-ep"]);
    expect((await ann.channelEndpoints.get({ identifier: "ann-ep" })).data).toEqual({ identifier: "ann-ep", type: "slack_user" });
    expect(statusOf(await ann.channelEndpoints.get({ identifier: "ann-acme-ep" }))).toBe(404);
    expect(statusOf(await ann.channelEndpoints.get({ identifier: "bob-ep" }))).toBe(404);

    const refusals = [
      [{ subscriberId: "inbox-bob" }, 403],
      [{ connectionIdentifier: "bob-conn" }, 404],
      [{ connectionIdentifier: "acme-ws" }, 404],
      [{ type: "phone", endpoint: { phoneNumber: "+15550001" } }, 422],
    ] as const;
    for (const [fields, status] of refusals) {
      const refused = await ann.channelEndpoints.create({
        identifier: "refused-ep",
        integrationIdentifier: "inbox-slack",
        subscriberId: "inbox-ann",
        type: "slack_user",
        endpoint: { userId: "U0ANN" },
        ...fields,
      });
      expect(statusOf(refused), JSON.stringify(fields)).toBe(status);
    }
    expect((await apiRead("/v1/channel-endpoints/refused-ep")).status).toBe(404);

    expect(statusOf(await ann.channelEndpoints.delete({ identifier: "bob-ep" }))).toBe(404);
    expect((await apiRead("/v1/channel-endpoints/bob-ep")).status).toBe(200);
    expect((await ann.channelEndpoints.delete({ identifier: "ann-ep" })).error).toBeUndefined();
    expect((await apiRead("/v1/channel-endpoints/ann-ep")).status).toBe(404);
    const bob = await inbox("inbox-bob");
    expect(identifiers((await bob.channelEndpoints.list()).data)).toEqual(["bob-ep"]);
  });
});
