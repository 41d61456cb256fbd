import { Novu as NovuApi } from "@novu/api";
import type { Novu } from "@novu/js";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflow } from "./delivery-helpers.js";
import { contextHash, environmentIdentifier, openInbox, openSession, requireHmac, subscriberHash, type InboxOptions } from "./inbox-helpers.js";
import { failureOf } from "./sdk3-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

// Novu's contexts end to end: a trigger's context scopes its messages, an Inbox session with a
// context (@novu/js's `context` option) shows, counts, changes and hears exactly the messages of
// triggers with the same context keys, and templates read the context's stored data.

let stack: Stack;
let api: NovuApi;
let workflowId: string;
const clients: Novu[] = [];

beforeAll(async () => {
  stack = await startStack();
  api = new NovuApi({ secretKey: stack.key, serverURL: stack.url });
  workflowId = await createWorkflow(stack, "Context welcome", [
    {
      template: { type: "in_app", content: "{{#if context.tenant}}From {{context.tenant.data.name}} ({{context.tenant.id}}){{else}}From nobody{{/if}}: {{n}}" },
    },
  ]);
});

afterAll(async () => {
  for (const novu of clients) novu.socket.disconnect();
  await stack?.stop();
});

/** SDK calls that fail must not be retried for an hour. */
const once = { retries: { strategy: "none" as const } };

async function trigger(subscriberId: string, n: number, context?: Record<string, string | { id: string; data?: Record<string, unknown> }>) {
  const { result } = await api.trigger({ workflowId, to: subscriberId, payload: { n }, ...(context ? { context } : {}) }, undefined, once);
  expect(result.status).toBe("processed");
}

/** The @novu/js client of the subscriber in a session with `options` (a context, say). */
async function inbox(subscriberId: string, options: InboxOptions = {}): Promise<Novu> {
  const novu = await openInbox(stack, subscriberId, options);
  clients.push(novu);
  return novu;
}

/** The bodies of the session's notifications once it lists `count` of them, newest first. */
async function bodies(novu: Novu, count: number): Promise<string[]> {
  return eventually(async () => {
    // Read afresh each time: the client keeps a list it read, and a digest's message comes later.
    const { data, error } = await novu.notifications.list({ limit: 20, useCache: false });
    if (error) throw error;
    return data && data.notifications.length === count ? data.notifications.map((notification) => notification.body) : undefined;
  });
}

describe("contexts: triggers scope their messages, Inbox sessions see exactly their own", () => {
  it("shows each session the messages of its own context only, rendered with the context's stored data", async () => {
    const subscriberId = "ctx-ada";
    await trigger(subscriberId, 1, { tenant: { id: "acme", data: { name: "Acme Corp" } } });
    await trigger(subscriberId, 2);
    await trigger(subscriberId, 3, { tenant: "globex" });
    // A later trigger's data does not overwrite a context that exists.
    await trigger(subscriberId, 4, { tenant: { id: "acme", data: { name: "Not Acme" } } });
    await trigger(subscriberId, 5, { tenant: "acme", app: "jira" });

    const acme = await inbox(subscriberId, { context: { tenant: "acme" } });
    // Triggers run concurrently: the two messages may be written in either order.
    expect((await bodies(acme, 2)).sort()).toEqual(["From Acme Corp (acme): 1", "From Acme Corp (acme): 4"]);
    const plain = await inbox(subscriberId);
    expect(await bodies(plain, 1)).toEqual(["From nobody: 2"]);
    const globex = await inbox(subscriberId, { context: { tenant: { id: "globex" } } });
    expect(await bodies(globex, 1)).toEqual(["From  (globex): 3"]);
    // Both keys, in any order: the same context; one of them alone is another.
    const both = await inbox(subscriberId, { context: { app: "jira", tenant: "acme" } });
    expect(await bodies(both, 1)).toEqual(["From Acme Corp (acme): 5"]);

    const counted = await acme.notifications.count({ read: false });
    expect(counted.data?.count).toBe(2);
    const session = await openSession(stack, subscriberId, { context: { tenant: "acme", app: { id: "jira" } } });
    expect(session.contextKeys).toEqual(["app:jira", "tenant:acme"]);
    expect(session.unreadCount.total).toBe(1);

    // Marking all read in one context leaves the others unread.
    const { error } = await acme.notifications.readAll();
    expect(error).toBeUndefined();
    expect((await plain.notifications.count({ read: false })).data?.count).toBe(1);
    expect((await acme.notifications.count({ read: false })).data?.count).toBe(0);

    // The contexts exist, created by the triggers with their first data.
    const stored = await api.contexts.retrieve("acme", "tenant", undefined, once);
    expect(stored.result.data).toEqual({ name: "Acme Corp" });
  });

  it("does not let a session read or change a message of another context by its id", async () => {
    const subscriberId = "ctx-bob";
    await trigger(subscriberId, 1, { tenant: "acme" });
    const plain = await openSession(stack, subscriberId);
    const acmeSession = await openSession(stack, subscriberId, { context: { tenant: "acme" } });
    const [message] = await eventually(async () => {
      const listed = await stack.request<{ data: { id: string }[] }>("GET", "/v1/inbox/notifications", undefined, {
        authorization: `Bearer ${acmeSession.token}`,
      });
      return listed.body.data.length === 1 ? listed.body.data : undefined;
    });
    const asPlain = { authorization: `Bearer ${plain.token}` };
    expect((await stack.request("PATCH", `/v1/inbox/notifications/${message!.id}/read`, undefined, asPlain)).status).toBe(404);
    expect((await stack.request("DELETE", `/v1/inbox/notifications/${message!.id}/delete`, undefined, asPlain)).status).toBe(404);
    const asAcme = { authorization: `Bearer ${acmeSession.token}` };
    expect((await stack.request("PATCH", `/v1/inbox/notifications/${message!.id}/read`, undefined, asAcme)).status).toBe(200);

    // The API sees every context unless it names one.
    const all = await api.subscribers.notifications.list({ subscriberId }, once);
    expect(all.result.data).toHaveLength(1);
    const none = await stack.request<{ data: unknown[] }>("GET", `/v2/subscribers/${subscriberId}/notifications?contextKeys=tenant:globex`);
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);
    const ofAcme = await stack.request<{ data: unknown[] }>("GET", `/v2/subscribers/${subscriberId}/notifications?contextKeys=tenant:acme`);
    expect(ofAcme.body.data).toHaveLength(1);
    // The API's calls on one notification find it in the contexts they name, or in any.
    const notificationId = message!.id;
    const elsewhere = { subscriberId, notificationId, contextKeys: ["tenant:globex"] };
    expect((await failureOf(api.subscribers.notifications.markAsUnread(elsewhere, once))).statusCode).toBe(404);
    expect((await api.subscribers.notifications.markAsUnread({ subscriberId, notificationId, contextKeys: ["tenant:acme"] }, once)).result.isRead).toBe(false);
    expect((await api.subscribers.notifications.markAsRead({ subscriberId, notificationId }, once)).result.isRead).toBe(true);
    expect((await failureOf(api.subscribers.notifications.delete(elsewhere, once))).statusCode).toBe(404);
    // Bulk changes too: marking all read in another context changes nothing here.
    await api.subscribers.notifications.markAsUnread({ subscriberId, notificationId }, once);
    await api.subscribers.notifications.markAllAsRead({ contextKeys: ["tenant:globex"] }, subscriberId, undefined, once);
    expect((await openSession(stack, subscriberId, { context: { tenant: "acme" } })).unreadCount.total).toBe(1);
    await api.subscribers.notifications.markAllAsRead({ contextKeys: ["tenant:acme"] }, subscriberId, undefined, once);
    expect((await openSession(stack, subscriberId, { context: { tenant: "acme" } })).unreadCount.total).toBe(0);
  });

  it("filters the API's message list and activity feed by exact context keys, in any order", async () => {
    const subscriberId = "ctx-hal";
    await trigger(subscriberId, 1, { tenant: "acme", app: "jira" });
    await trigger(subscriberId, 2, { tenant: "acme" });
    await trigger(subscriberId, 3);
    const messages = async (contextKeys?: string[]) =>
      // Each message's number: what the content ends with.
      (await api.messages.retrieve({ subscriberId, ...(contextKeys ? { contextKeys } : {}) }, once)).result.data.map(
        (message) => String(message.content).split(": ")[1],
      );
    await eventually(async () => ((await messages()).length === 3 ? true : undefined));
    expect(await messages(["tenant:acme", "app:jira"])).toEqual(["1"]);
    expect(await messages(["tenant:acme"])).toEqual(["2"]);
    expect(await messages(["tenant:globex"])).toEqual([]);
    const activity = async (contextKeys?: string[]) =>
      (await api.notifications.list({ subscriberIds: [subscriberId], limit: 10, ...(contextKeys ? { contextKeys } : {}) }, once)).result.data.length;
    expect(await activity()).toBe(3);
    expect(await activity(["app:jira", "tenant:acme"])).toBe(1);
    expect(await activity(["tenant:globex"])).toBe(0);
    // Each answer names its trigger's contexts, as Novu's do.
    const [ofAcme] = (await api.messages.retrieve({ subscriberId, contextKeys: ["tenant:acme"] }, once)).result.data;
    expect(ofAcme?.contextKeys).toEqual(["tenant:acme"]);
    const [entry] = (await api.notifications.list({ subscriberIds: [subscriberId], limit: 10, contextKeys: ["tenant:acme", "app:jira"] }, once)).result.data;
    expect(entry?.contextKeys).toEqual(["app:jira", "tenant:acme"]);
    const refused = await stack.request("GET", "/v1/messages?contextKeys=not-a-key");
    expect(refused.status).toBe(422);
  });

  it("tells a session live of the messages of its own context only", async () => {
    const subscriberId = "ctx-cleo";
    const heard = new Map<string, string[]>();
    const listen = async (name: string, options: InboxOptions) => {
      const novu = await inbox(subscriberId, options);
      heard.set(name, []);
      novu.on("notifications.notification_received", ({ result }) => heard.get(name)!.push(result.body));
      await new Promise<void>((resolve, reject) => {
        const stop = novu.on("socket.connect.resolved", ({ error }) => {
          stop();
          if (error) reject(error);
          else resolve();
        });
      });
    };
    await listen("acme", { context: { tenant: "acme" } });
    await listen("plain", {});
    await trigger(subscriberId, 1, { tenant: "acme" });
    await trigger(subscriberId, 2);
    await eventually(async () => (heard.get("acme")!.length >= 1 && heard.get("plain")!.length >= 1 ? true : undefined));
    // Whatever else was coming has come by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard.get("acme")).toEqual(["From Acme Corp (acme): 1"]);
    expect(heard.get("plain")).toEqual(["From nobody: 2"]);
  });

  it("digests the events of each context apart", async () => {
    const digested = await createWorkflow(stack, "Context digest", [
      { template: { type: "digest" }, metadata: { type: "regular", amount: 1, unit: "seconds" } },
      { template: { type: "in_app", content: "{{step.total_count}}:{{#each step.events}}{{n}},{{/each}}" } },
    ]);
    const subscriberId = "ctx-gus";
    const send = async (n: number, context?: Record<string, string>) => {
      const { result } = await api.trigger({ workflowId: digested, to: subscriberId, payload: { n }, ...(context ? { context } : {}) }, undefined, once);
      expect(result.status).toBe("processed");
    };
    await send(1, { tenant: "acme" });
    await send(2, { tenant: "globex" });
    await send(3, { tenant: "acme" });
    await send(4);
    expect(await bodies(await inbox(subscriberId, { context: { tenant: "acme" } }), 1)).toEqual(["2:1,3,"]);
    expect(await bodies(await inbox(subscriberId, { context: { tenant: "globex" } }), 1)).toEqual(["1:2,"]);
    expect(await bodies(await inbox(subscriberId), 1)).toEqual(["1:4,"]);
  });

  it("requires the context's HMAC where subscribers must prove who they are", async () => {
    await requireHmac(stack, true);
    try {
      const subscriberId = "ctx-dora";
      const context = { tenant: { id: "acme", data: { plan: "gold" } } };
      const body = async (extra: Record<string, unknown>) =>
        stack.request<{ message: string }>(
          "POST",
          "/v1/inbox/session",
          { applicationIdentifier: await environmentIdentifier(stack), subscriber: { subscriberId }, ...extra },
          { authorization: "" },
        );
      const verified = { subscriberHash: subscriberHash(stack.key, subscriberId) };
      const unsigned = await body({ ...verified, context });
      expect(unsigned.status).toBe(400);
      expect(unsigned.body.message).toBe("Please provide a valid context HMAC hash");
      const forged = await body({ ...verified, context, contextHash: contextHash(stack.key, { tenant: "globex" }) });
      expect(forged.status).toBe(400);
      // Signed as canonical JSON: the order of its keys does not matter.
      const reordered = { tenant: { data: { plan: "gold" }, id: "acme" } };
      const signed = await body({ ...verified, context, contextHash: contextHash(stack.key, reordered) });
      expect(signed.status, JSON.stringify(signed.body)).toBe(201);
      // The real client, signed, with the subscriber's hash too.
      const novu = await inbox(subscriberId, { subscriberHash: true, context, contextHash: true });
      expect((await novu.notifications.list({ limit: 1 })).error).toBeUndefined();
    } finally {
      await requireHmac(stack, false);
    }
  });

  it("keeps a subscriber's preferences per context: a session's switch decides the triggers of its own contexts only", async () => {
    const subscriberId = "ctx-prefs";
    /** Whether a trigger (with a witness named beside the subscriber) leaves the subscriber an in-app message. */
    const delivered = async (context?: Record<string, string>) => {
      const { result } = await api.trigger(
        { workflowId, to: [subscriberId, "ctx-witness"], payload: { n: 0 }, ...(context ? { context } : {}) },
        undefined,
        once,
      );
      const recipients = await eventually(async () => {
        const reply = await stack.request<Data<{ subscriber: { subscriberId: string } }[]>>(
          "GET",
          `/v1/messages?transactionId=${result.transactionId}&limit=10`,
        );
        const ids = reply.body.data.map((message) => message.subscriber.subscriberId);
        return ids.includes("ctx-witness") ? ids : undefined;
      });
      return recipients.includes(subscriberId);
    };
    const acme = await inbox(subscriberId, { context: { tenant: "acme" } });
    const listed = await acme.preferences.list();
    const preference = listed.data!.find((candidate) => candidate.workflow?.identifier === workflowId)!;
    const switched = await preference.update({ channels: { in_app: false } });
    expect(switched.error).toBeUndefined();

    expect(await delivered({ tenant: "acme" })).toBe(false);
    expect(await delivered()).toBe(true);
    expect(await delivered({ tenant: "globex" })).toBe(true);
    const plain = await inbox(subscriberId);
    const plainListed = await plain.preferences.list();
    expect(plainListed.data!.find((candidate) => candidate.workflow?.identifier === workflowId)!.channels).toMatchObject({ in_app: true });

    // The server-side API names the contexts too: contextKeys to read, a context to write.
    const read = async (query: string) => {
      const reply = await stack.request<Data<{ workflows: { workflow: { identifier: string }; channels: Record<string, boolean> }[] }>>(
        "GET",
        `/v2/subscribers/${subscriberId}/preferences${query}`,
      );
      return reply.body.data.workflows.find((entry) => entry.workflow.identifier === workflowId)!.channels;
    };
    expect(await read("?contextKeys=tenant:acme")).toMatchObject({ in_app: false });
    expect(await read("")).toMatchObject({ in_app: true });
    const patched = await stack.request("PATCH", `/v2/subscribers/${subscriberId}/preferences`, {
      workflowId,
      channels: { in_app: false },
      context: { tenant: "globex" },
    });
    expect(patched.status).toBe(200);
    expect(await delivered({ tenant: "globex" })).toBe(false);
    expect(await delivered()).toBe(true);
  });

  it("refuses a context it cannot keep with a 422 naming the field, creating nothing", async () => {
    const refused = async (context: unknown) => {
      const reply = await stack.request<{ errors: Record<string, unknown> }>("POST", "/v1/events/trigger", { name: workflowId, to: "ctx-eve", context });
      expect(reply.status, JSON.stringify(reply.body)).toBe(422);
      return Object.keys(reply.body.errors);
    };
    expect(await refused({ a: "1", b: "2", c: "3", d: "4", e: "5", f: "6" })).toEqual(["context"]);
    expect((await refused({ tenant: "not valid!" }))[0]).toMatch(/^context/);
    expect((await refused({ tenant: { id: "acme", data: { big: "x".repeat(70_000) } } }))[0]).toMatch(/^context/);
    expect((await refused({ tenant: 7 }))[0]).toMatch(/^context/);
    const session = await stack.request(
      "POST",
      "/v1/inbox/session",
      { applicationIdentifier: await environmentIdentifier(stack), subscriber: { subscriberId: "ctx-eve" }, context: { "bad type": "x" } },
      { authorization: "" },
    );
    expect(session.status).toBe(422);
    const listed = await stack.request<{ data: { type: string; id: string }[] }>("GET", "/v2/contexts?search=not");
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
  });
});
