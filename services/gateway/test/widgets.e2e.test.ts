import { HeadlessService } from "@novu/headless";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflow } from "./delivery-helpers.js";
import { environmentIdentifier, requireHmac, subscriberHash } from "./inbox-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let applicationIdentifier: string;
let workflowId: string;
let workflow: string;
let feedId: string;
const services: HeadlessService[] = [];

beforeAll(async () => {
  stack = await startStack();
  applicationIdentifier = await environmentIdentifier(stack);
  const feed = await stack.request<Data<{ _id: string }>>("POST", "/v1/feeds", { name: "Orders" });
  expect(feed.status).toBe(201);
  feedId = feed.body.data._id;
  workflow = await createWorkflow(stack, "Notification Center order", [
    {
      template: {
        type: "in_app",
        content: "Order {{orderId}} has shipped",
        feedId,
        cta: { type: "redirect", data: { url: "/orders/{{orderId}}" }, action: { buttons: [{ type: "primary", content: "Track" }] } },
      },
    },
  ]);
  const listed = await stack.request<Data<{ _id: string; triggers: { identifier: string }[] }[]>>("GET", "/v1/workflows?limit=100");
  workflowId = listed.body.data.find((one) => one.triggers[0]!.identifier === workflow)!._id;
});

afterAll(async () => {
  for (const service of services) (service as unknown as { socket?: { disconnect(): void } }).socket?.disconnect();
  await stack?.stop();
});

/** A callback of the headless client as a promise: its onSuccess, or its onError. */
function settled<T>(
  call: (callbacks: { listener: () => void; onSuccess: (value?: unknown) => void; onError: (error: unknown) => void }) => unknown,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    call({ listener: () => undefined, onSuccess: (value) => resolve(value as T), onError: reject });
  });
}

/** The Notification Center's headless client of the subscriber, its session open. */
async function openCenter(subscriberId: string, extra: { subscriberHash?: string } = {}) {
  const headless = new HeadlessService({
    backendUrl: stack.url,
    socketUrl: stack.url,
    applicationIdentifier,
    subscriberId,
    ...extra,
    config: { retry: 0 },
  });
  services.push(headless);
  const session = await settled<{ token: string; profile: { _id: string } }>((callbacks) => headless.initializeSession(callbacks));
  return { headless, session };
}

async function trigger(to: string, orderId: string) {
  const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to, payload: { orderId } });
  expect(reply.status).toBe(201);
}

/** A widget route called as @novu/client calls it, with the session's token. */
const widget = <T = Data<{ count: number }>>(method: string, path: string, token: string, body?: unknown) =>
  stack.request<T>(method, `/v1/widgets${path}`, body, { authorization: `Bearer ${token}` });

describe("the Notification Center (@novu/headless) against the gateway's /v1/widgets routes", () => {
  it("opens a session, lists the feed, counts, marks, acts and hears new notifications live", async () => {
    await stack.request("POST", "/v1/subscribers", { subscriberId: "nc-ada", firstName: "Ada" });
    await trigger("nc-ada", "A-1");
    const { headless, session } = await openCenter("nc-ada");
    expect(session.token).toEqual(expect.any(String));
    expect(session.profile).toMatchObject({ _id: expect.stringMatching(/^[0-9a-f]{24}$/), firstName: "Ada" });

    await eventually(async () => {
      const page = await settled<{ data: { content: string }[] }>((callbacks) => headless.fetchNotifications({ page: 0, ...callbacks }));
      return page.data.length === 1 ? true : undefined;
    });
    const page = await settled<{
      data: { _id: string; content: string; seen: boolean; read: boolean }[];
      page: number;
      totalCount: number;
      hasMore: boolean;
      pageSize: number;
    }>((callbacks) => headless.fetchNotifications({ page: 0, ...callbacks }));
    expect(page).toMatchObject({ page: 0, totalCount: 1, hasMore: false, pageSize: 10 });
    expect(page.data[0]).toMatchObject({ content: "Order A-1 has shipped", seen: false, read: false });
    const first = page.data[0]!._id;
    expect(await settled((callbacks) => headless.fetchUnseenCount(callbacks))).toEqual({ count: 1 });
    expect(await settled((callbacks) => headless.fetchUnreadCount(callbacks))).toEqual({ count: 1 });

    // Live: a new notification, then the counts, over the same socket.io endpoint as @novu/js's.
    const received: { content: string }[] = [];
    const unseen: number[] = [];
    headless.listenNotificationReceive({ listener: (message) => received.push(message as unknown as { content: string }) });
    headless.listenUnseenCountChange({ listener: (count) => unseen.push(count) });
    await eventually(async () => ((headless as unknown as { socket?: { connected: boolean } }).socket?.connected ? true : undefined));
    await trigger("nc-ada", "A-2");
    await eventually(async () => (received.length > 0 && unseen.includes(2) ? true : undefined), 15_000);
    expect(received[0]).toMatchObject({ content: "Order A-2 has shipped" });

    const read = await settled<{ _id: string; read: boolean; seen: boolean }[]>((callbacks) =>
      headless.markNotificationsAsRead({ messageId: first, ...callbacks }),
    );
    expect(read).toEqual([expect.objectContaining({ _id: first, read: true, seen: true })]);
    expect(await settled((callbacks) => headless.fetchUnreadCount(callbacks))).toEqual({ count: 1 });
    const unread = await settled<{ read: boolean }[]>((callbacks) => headless.markNotificationsAs({ messageId: first, mark: { read: false }, ...callbacks }));
    expect(unread[0]).toMatchObject({ read: false });
    // The Notification Center marks every unseen message it has fetched at once, more than a page's worth.
    const fetched = [first, ...Array.from({ length: 150 }, (_, index) => index.toString(16).padStart(24, "0"))];
    const marked = await widget<Data<{ _id: string }[]>>("POST", "/messages/mark-as", session.token, { messageId: fetched, markAs: "seen" });
    expect(marked.status).toBe(201);
    expect(marked.body.data.map((message) => message._id)).toEqual([first]);
    expect(await settled<number>((callbacks) => headless.markAllMessagesAsSeen(callbacks))).toBe(1);
    expect(await settled((callbacks) => headless.fetchUnseenCount(callbacks))).toEqual({ count: 0 });
    expect(await settled<number>((callbacks) => headless.markAllMessagesAsRead(callbacks))).toBe(2);

    const acted = await settled<{ cta: { action: { status: string } } }>((callbacks) =>
      headless.updateAction({ messageId: first, actionButtonType: "primary" as never, status: "done" as never, payload: { via: "center" }, ...callbacks }),
    );
    expect(acted.cta.action.status).toBe("done");

    // The counts by feed and state the Notification Center's tabs ask for.
    const { token } = session;
    await trigger("nc-ada", "A-3");
    await eventually(async () => ((await widget("GET", "/notifications/count?read=false", token)).body.data.count === 1 ? true : undefined));
    expect((await widget("GET", `/notifications/count?feedIdentifier=${feedId}&seen=false`, token)).body).toEqual({ data: { count: 0 } });
    expect((await widget("GET", "/notifications/count?read=true", token)).body).toEqual({ data: { count: 2 } });
    // An action is all a v1 message action changes: the message stays unread, as in Novu.
    const newest = (await widget<{ data: { _id: string }[] }>("GET", "/notifications/feed", token)).body.data[0]!._id;
    const pending = await settled<{ read: boolean; seen: boolean; cta: { action: { status: string } } }>((callbacks) =>
      headless.updateAction({ messageId: newest, actionButtonType: "primary" as never, status: "done" as never, ...callbacks }),
    );
    expect(pending).toMatchObject({ read: false, seen: false, cta: { action: { status: "done" } } });
    expect((await widget("GET", "/notifications/count?read=false", token)).body).toEqual({ data: { count: 1 } });
    // A browser is shown a message's workflow by id and tags only, none of its steps.
    const [item] = (await widget<{ data: { template: unknown }[] }>("GET", "/notifications/feed", token)).body.data;
    expect(item!.template).toEqual({ _id: workflowId, tags: [] });
    expect((await widget("GET", "/notifications/unseen?limit=101", token)).status).toBe(422);

    expect(await settled((callbacks) => headless.fetchOrganization(callbacks))).toMatchObject({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: expect.any(String),
    });
    // The organization's branding, which the Notification Center is drawn with.
    expect((await stack.request("PUT", "/v1/organizations/branding", { color: "#0055ff", fontFamily: "Inter" })).status).toBe(200);
    expect((await widget<Data<unknown>>("GET", "/organization", token)).body.data).toMatchObject({ branding: { color: "#0055ff", fontFamily: "Inter" } });
  });

  it("removes a notification, some and all of a feed's, only the session subscriber's", async () => {
    await trigger("nc-bob", "B-1");
    await trigger("nc-bob", "B-2");
    await trigger("nc-bob", "B-3");
    await trigger("nc-cy", "C-1");
    const { headless, session } = await openCenter("nc-bob");
    const cy = await openCenter("nc-cy");
    const ids = async (token: string) => {
      const reply = await widget<{ data: { _id: string }[] }>("GET", "/notifications/feed?limit=100", token);
      return reply.body.data.map((message) => message._id);
    };
    await eventually(async () => ((await ids(session.token)).length === 3 && (await ids(cy.session.token)).length === 1 ? true : undefined));
    const [third, second, firstOfBob] = await ids(session.token);
    const [ofCy] = await ids(cy.session.token);

    await settled((callbacks) => headless.removeNotification({ messageId: third!, ...callbacks }));
    // Another subscriber's message is not the session's to remove: nothing happens, as in Novu.
    expect((await widget("DELETE", `/messages/${ofCy}`, session.token)).status).toBe(200);
    expect(await ids(cy.session.token)).toEqual([ofCy]);
    expect(await ids(session.token)).toEqual([second, firstOfBob]);

    await settled((callbacks) => headless.removeNotifications({ messageIds: [second!], ...callbacks }));
    expect(await ids(session.token)).toEqual([firstOfBob]);
    expect((await widget("POST", "/messages/bulk/delete", session.token, { messageIds: [] })).status).toBe(422);

    expect((await widget("DELETE", "/messages?feedId=0123456789abcdef01234567", session.token)).status).toBe(404);
    expect((await widget("DELETE", `/messages?feedId=${feedId}`, session.token)).status).toBe(204);
    expect(await ids(session.token)).toEqual([]);
    expect(await ids(cy.session.token)).toEqual([ofCy]);
    await settled((callbacks) => cy.headless.removeAllNotifications(callbacks));
    expect(await ids(cy.session.token)).toEqual([]);
  });

  it("shows each message's actor: the trigger's actor's avatar, an icon or an image, as the Notification Center draws them", async () => {
    const actors = await createWorkflow(stack, "Notification Center actors", [
      { template: { type: "in_app", content: "From a user", actor: { type: "user" } } },
      { template: { type: "in_app", content: "From the system", actor: { type: "system_icon", data: "warning" } } },
      { template: { type: "in_app", content: "With an image", actor: { type: "system_custom", data: "https://cdn.example.com/{{kind}}.png" } } },
      { template: { type: "in_app", content: "From nobody", actor: { type: "none" } } },
    ]);
    const reply = await stack.request("POST", "/v1/events/trigger", {
      name: actors,
      to: "nc-fay",
      actor: { subscriberId: "nc-actor", avatar: "https://cdn.example.com/actor.png" },
      payload: { kind: "bell" },
    });
    expect(reply.status).toBe(201);
    const { session } = await openCenter("nc-fay");
    const feed = async () => (await widget<{ data: { content: string; actor?: unknown }[] }>("GET", "/notifications/feed", session.token)).body.data;
    await eventually(async () => ((await feed()).length === 4 ? true : undefined));
    const byContent = Object.fromEntries((await feed()).map((message) => [message.content, message.actor]));
    expect(byContent).toEqual({
      "From a user": { type: "user", data: "https://cdn.example.com/actor.png" },
      "From the system": { type: "system_icon", data: "warning" },
      "With an image": { type: "system_custom", data: "https://cdn.example.com/bell.png" },
      "From nobody": undefined,
    });
  });

  it("reads and changes the subscriber's preferences, of a workflow and global", async () => {
    const { headless } = await openCenter("nc-dee");
    const listed = await settled<{ template: { _id: string }; preference: { channels: Record<string, boolean> } }[]>((callbacks) =>
      headless.fetchUserPreferences(callbacks),
    );
    const mine = listed.find((preference) => preference.template._id === workflowId)!;
    // Only the channels the workflow has steps for, as Novu's widget routes answer.
    expect(mine.preference.channels).toEqual({ in_app: true });
    const updated = await settled<{ preference: { channels: Record<string, boolean> } }>((callbacks) =>
      headless.updateUserPreferences({ templateId: workflowId, channelType: "in_app", checked: false, ...callbacks }),
    );
    expect(updated.preference.channels).toEqual({ in_app: false });
    // A whole preference's enabled is ignored, as Novu's widget routes ignore it.
    const global = await settled<{ preference: { channels: Record<string, boolean> } }>((callbacks) =>
      headless.updateUserGlobalPreferences({ preferences: [{ channelType: "in_app" as never, enabled: true }], enabled: false, ...callbacks }),
    );
    expect(global.preference.channels).toMatchObject({ in_app: true });
    const globals = await settled<{ preference: { channels: Record<string, boolean> } }[]>((callbacks) => headless.fetchUserGlobalPreferences(callbacks));
    expect(globals[0]!.preference.channels).toMatchObject({ in_app: true });
  });

  it("answers malformed input with a 4xx JSON error and changes nothing", async () => {
    await trigger("nc-gus", "G-1");
    const { session } = await openCenter("nc-gus");
    const feed = async () => (await widget<{ data: { _id: string; read: boolean; seen: boolean }[] }>("GET", "/notifications/feed", session.token)).body.data;
    await eventually(async () => ((await feed()).length === 1 ? true : undefined));
    const before = await feed();
    const id = before[0]!._id;
    const malformed: [string, string, unknown][] = [
      ["GET", "/notifications/feed?page=-1", undefined],
      ["GET", "/notifications/feed?limit=abc", undefined],
      ["GET", "/notifications/feed?payload=not-base64-json", undefined],
      ["GET", "/notifications/count?seen=maybe", undefined],
      ["GET", "/notifications/unread?limit=0", undefined],
      ["POST", "/messages/mark-as", { messageId: ["nope"], markAs: "read" }],
      ["POST", "/messages/mark-as", { messageId: id, markAs: "archived" }],
      ["POST", "/messages/markAs", { messageId: id, mark: {} }],
      ["POST", `/messages/${id}/actions/tertiary`, { status: "done" }],
      ["POST", `/messages/${id}/actions/primary`, { status: "finished" }],
      ["POST", "/messages/bulk/delete", { messageIds: "all" }],
      ["POST", "/messages/bulk/delete", { messageIds: ["nope"] }],
      ["DELETE", "/messages?feedId=nope", undefined],
      ["POST", "/messages/read", { feedId: 7 }],
      ["PATCH", "/preferences", { preferences: [{ type: "fax", enabled: false }] }],
      ["PATCH", `/preferences/${workflowId}`, { channel: { type: "email", enabled: "no" } }],
      ["GET", "/preferences/everything", undefined],
      ["POST", "/usage/log", { name: 7 }],
    ];
    for (const [method, path, body] of malformed) {
      const reply = await widget<{ statusCode: number; message: unknown }>(method, path, session.token, body);
      expect([method, path, reply.status >= 400 && reply.status < 500]).toEqual([method, path, true]);
      expect(reply.body.statusCode).toBe(reply.status);
    }
    expect(await feed()).toEqual(before);
  });

  it("asks a subscriberHash where the environment requires one, and refuses unknown apps and missing tokens", async () => {
    const refused = await stack.request("POST", "/v1/widgets/session/initialize", { applicationIdentifier: "nope", subscriberId: "nc-x" });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe("Please provide a valid app identifier");
    expect((await stack.request("GET", "/v1/widgets/notifications/feed", undefined, { authorization: "Bearer forged" })).status).toBe(401);
    await requireHmac(stack, true);
    try {
      const unsigned = await stack.request("POST", "/v1/widgets/session/initialize", { applicationIdentifier, subscriberId: "nc-eve" });
      expect(unsigned.status).toBe(400);
      expect(unsigned.body.message).toBe("Please provide a valid HMAC hash");
      // With the hash, the profile sent is written.
      const { session } = await openCenter("nc-eve", { subscriberHash: subscriberHash(stack.key, "nc-eve") });
      expect(session.token).toEqual(expect.any(String));
      const signed = await stack.request<Data<{ profile: { firstName?: string } }>>("POST", "/v1/widgets/session/initialize", {
        applicationIdentifier,
        subscriberId: "nc-eve",
        hmacHash: subscriberHash(stack.key, "nc-eve"),
        firstName: "Eve",
      });
      expect(signed.status).toBe(201);
      expect(signed.body.data.profile.firstName).toBe("Eve");
    } finally {
      await requireHmac(stack, false);
    }
    // Without it, a known subscriber's profile is left as it is.
    const unverified = await stack.request<Data<{ profile: { firstName?: string } }>>("POST", "/v1/widgets/session/initialize", {
      applicationIdentifier,
      subscriberId: "nc-eve",
      firstName: "Mallory",
    });
    expect(unverified.body.data.profile.firstName).toBe("Eve");
  });
});
