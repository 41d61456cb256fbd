import { startSmtpSink, type SmtpSink } from "@notify/testing";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../src/openapi.js";
import { createIntegration, delivered, settledMessage, sinkCredentials } from "./delivery-helpers.js";
import { environmentIdentifier } from "./inbox-helpers.js";
import { newMessage, seeder, type Seeder } from "./messages-fixtures.js";
import { startStack, type Data, type Json, type Stack } from "./stack.js";

// Real answers of the running stack, each held to the success schema the served API description
// documents for its route (additional fields included: the shapes are closed), so the description
// cannot drift from what the gateway answers without this failing.

let stack: Stack;
let sink: SmtpSink;
let seed: Seeder;
let document: OpenApiDocument;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
/** The operations whose answers were checked, as `METHOD /openapi/{path}`. */
const checked = new Set<string>();

/** The document's `#/components/schemas/…` references, as references into the schema ajv holds them in. */
const relinked = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"components#/$defs/')) as object;

beforeAll(async () => {
  sink = await startSmtpSink();
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
  document = (await (await fetch(`${stack.url}/openapi.json`)).json()) as OpenApiDocument;
  ajv.addSchema({ $id: "components", $defs: relinked(document.components.schemas) });
}, 120_000);
afterAll(async () => {
  seed?.close();
  await stack?.stop();
  await sink?.close();
});

interface Success {
  content?: { "application/json": { schema: object } };
}

/**
 * Sends `path` (an instance of `operation`'s path), expects the operation's documented success
 * status, checks the body against the documented schema and answers it.
 */
async function documented<T = Json>(operation: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
  const [method, template] = operation.split(" ") as [string, string];
  const described = document.paths[template]?.[method.toLowerCase() as "get"];
  if (!described) throw new Error(`${operation} is not in the API description`);
  const [status, success] = Object.entries(described.responses).find(([code]) => code.startsWith("2")) as [string, Success];
  const reply = await stack.request(method, path, body, headers);
  expect(reply.status, `${operation}: ${JSON.stringify(reply.body)}`).toBe(Number(status));
  const schema = success.content?.["application/json"].schema;
  if (schema) {
    const validate: ValidateFunction = ajv.compile(relinked(schema));
    expect(validate(reply.body) ? [] : validate.errors, `${operation} answered ${JSON.stringify(reply.body)}`).toEqual([]);
  } else {
    expect(reply.body, operation).toBeUndefined();
  }
  checked.add(operation);
  return reply.body as T;
}

describe("the documented success answers", () => {
  let workflowId: string;
  let workflowIdentifier: string;
  let ada: { id: string; subscriberId: string };

  it("of subscribers, their credentials and preferences", async () => {
    const created = await documented<Data<{ _id: string; _organizationId: string; _environmentId: string }>>("POST /v1/subscribers", "/v1/subscribers", {
      subscriberId: "doc-ada",
      firstName: "Ada",
      email: "ada@docs.test",
      data: { plan: "pro" },
    });
    ada = { id: created.data._id, subscriberId: "doc-ada" };
    seed = seeder(stack, { organizationId: created.data._organizationId, environmentId: created.data._environmentId });
    await documented("GET /v1/subscribers", "/v1/subscribers?limit=5");
    await documented("POST /v1/subscribers/bulk", "/v1/subscribers/bulk", { subscribers: [{ subscriberId: "doc-bulk" }, { subscriberId: "doc-ada" }] });
    await documented("GET /v1/subscribers/{subscriberId}", "/v1/subscribers/doc-ada");
    await documented("PUT /v1/subscribers/{subscriberId}", "/v1/subscribers/doc-ada", { lastName: "Lovelace", locale: "en" });
    await documented("PATCH /v1/subscribers/{subscriberId}/online-status", "/v1/subscribers/doc-ada/online-status", { isOnline: true });
    await createIntegration(stack, { providerId: "fcm", channel: "push" });
    await documented("PATCH /v1/subscribers/{subscriberId}/credentials", "/v1/subscribers/doc-ada/credentials", {
      providerId: "fcm",
      credentials: { deviceTokens: ["token-1"] },
    });
    await documented("PUT /v1/subscribers/{subscriberId}/credentials", "/v1/subscribers/doc-ada/credentials", {
      providerId: "fcm",
      credentials: { deviceTokens: ["token-2"] },
    });
    await documented("DELETE /v1/subscribers/{subscriberId}/credentials/{providerId}", "/v1/subscribers/doc-ada/credentials/fcm");
    await documented("POST /v2/subscribers", "/v2/subscribers", { subscriberId: "doc-grace", firstName: "Grace" });
    await documented("GET /v2/subscribers", "/v2/subscribers?limit=2");
    await documented("GET /v2/subscribers/{subscriberId}", "/v2/subscribers/doc-grace");
    await documented("PATCH /v2/subscribers/{subscriberId}", "/v2/subscribers/doc-grace", { timezone: "Europe/London", data: null });
    await documented("DELETE /v2/subscribers/{subscriberId}", "/v2/subscribers/doc-grace");
    await documented("DELETE /v1/subscribers/{subscriberId}", "/v1/subscribers/doc-bulk");

    const workflow = await documented<Data<{ _id: string; triggers: { identifier: string }[] }>>("POST /v1/workflows", "/v1/workflows", {
      name: "Docs receipt",
      active: true,
      tags: ["billing"],
      steps: [
        { template: { type: "in_app", content: "You paid {{amount}}", cta: { type: "redirect", data: { url: "https://example.com" } } } },
        { template: { type: "email", subject: "Receipt", content: [{ type: "text", content: "You paid {{amount}}." }] } },
      ],
    });
    workflowId = workflow.data._id;
    workflowIdentifier = workflow.data.triggers[0]!.identifier;

    await documented("GET /v2/subscribers/{subscriberId}/preferences", "/v2/subscribers/doc-ada/preferences");
    await documented("PATCH /v2/subscribers/{subscriberId}/preferences", "/v2/subscribers/doc-ada/preferences", { channels: { email: true } });
    await documented("PATCH /v2/subscribers/{subscriberId}/preferences", "/v2/subscribers/doc-ada/preferences", {
      channels: { push: false },
      workflowId,
    });
    await documented("PATCH /v2/subscribers/{subscriberId}/preferences/bulk", "/v2/subscribers/doc-ada/preferences/bulk", {
      preferences: [{ workflowId, channels: { in_app: true } }],
    });
    await documented("GET /v1/subscribers/{subscriberId}/preferences", "/v1/subscribers/doc-ada/preferences");
    await documented("GET /v1/subscribers/{subscriberId}/preferences/{parameter}", "/v1/subscribers/doc-ada/preferences/global");
    await documented("GET /v1/subscribers/{subscriberId}/preferences/{parameter}", "/v1/subscribers/doc-ada/preferences/template");
    await documented("PATCH /v1/subscribers/{subscriberId}/preferences", "/v1/subscribers/doc-ada/preferences", {
      preferences: [{ type: "email", enabled: true }],
    });
    await documented("PATCH /v1/subscribers/{subscriberId}/preferences/{parameter}", `/v1/subscribers/doc-ada/preferences/${workflowId}`, {
      channel: { type: "in_app", enabled: true },
    });
  });

  it("of messages, the feed and the notifications of a subscriber", async () => {
    const transactionId = `doc-${Date.now()}`;
    const created = await seed.create([
      newMessage(ada, { templateId: workflowId, transactionId, tags: ["billing"] }),
      ...Array.from({ length: 5 }, () => newMessage(ada, { templateId: workflowId })),
    ]);
    const [first, second, third, fourth, fifth, sixth] = created.messages.map((message) => message.id) as [string, string, string, string, string, string];
    await documented("POST /v1/subscribers/{subscriberId}/messages/mark-as", "/v1/subscribers/doc-ada/messages/mark-as", { messageId: first, markAs: "seen" });
    await documented("POST /v1/subscribers/{subscriberId}/messages/markAs", "/v1/subscribers/doc-ada/messages/markAs", {
      messageId: [first],
      mark: { read: true },
    });
    await documented("POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}", `/v1/subscribers/doc-ada/messages/${second}/actions/primary`, {
      status: "done",
      payload: { chosen: true },
    });
    await documented("GET /v1/subscribers/{subscriberId}/notifications/unseen", "/v1/subscribers/doc-ada/notifications/unseen");
    await documented("GET /v1/subscribers/{subscriberId}/notifications/feed", "/v1/subscribers/doc-ada/notifications/feed?limit=5");
    await documented("GET /v1/messages", "/v1/messages?subscriberId=doc-ada");
    await documented("POST /v1/subscribers/{subscriberId}/messages/mark-all", "/v1/subscribers/doc-ada/messages/mark-all", { markAs: "read" });

    const base = "/v2/subscribers/doc-ada/notifications";
    await documented("GET /v2/subscribers/{subscriberId}/notifications", `${base}?limit=5`);
    await documented(
      "GET /v2/subscribers/{subscriberId}/notifications/count",
      `${base}/count?filters=${encodeURIComponent(JSON.stringify([{ read: false }]))}`,
    );
    await documented("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unread", `${base}/${third}/unread`);
    await documented("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/snooze", `${base}/${third}/snooze`, {
      snoozeUntil: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const actions = `${base}/${third}/actions/primary`;
    await documented("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/actions/{actionType}/complete", `${actions}/complete`);
    await documented("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/actions/{actionType}/revert", `${actions}/revert`);

    const session = await documented<Data<{ token: string }>>(
      "POST /v1/inbox/session",
      "/v1/inbox/session",
      { applicationIdentifier: await environmentIdentifier(stack), subscriberId: "doc-ada" },
      { authorization: "" },
    );
    const inbox = { authorization: `Bearer ${session.data.token}` };
    await documented("GET /v1/inbox/notifications", "/v1/inbox/notifications?limit=5", undefined, inbox);
    await documented(
      "GET /v1/inbox/notifications/count",
      `/v1/inbox/notifications/count?filters=${encodeURIComponent(JSON.stringify([{}]))}`,
      undefined,
      inbox,
    );
    await documented("PATCH /v1/inbox/notifications/{id}/read", `/v1/inbox/notifications/${third}/read`, undefined, inbox);
    await documented("GET /v1/inbox/preferences", "/v1/inbox/preferences", undefined, inbox);
    await documented("GET /v1/inbox/preferences/global", "/v1/inbox/preferences/global", undefined, inbox);
    await documented("PATCH /v1/inbox/preferences", "/v1/inbox/preferences", { email: true }, inbox);
    await documented("PATCH /v1/inbox/preferences/{workflowId}", `/v1/inbox/preferences/${workflowId}`, { in_app: true }, inbox);
    await documented("PATCH /v1/inbox/preferences/bulk", "/v1/inbox/preferences/bulk", { preferences: [{ workflowId, email: true }] }, inbox);

    for (const change of ["read", "unread", "archive", "unarchive"]) {
      await documented(`PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/${change}`, `${base}/${third}/${change}`);
      await documented(`PATCH /v1/inbox/notifications/{id}/${change}`, `/v1/inbox/notifications/${third}/${change}`, undefined, inbox);
    }
    // Only a snoozed notification can be unsnoozed.
    const snoozeUntil = new Date(Date.now() + 3_600_000).toISOString();
    await documented("PATCH /v1/inbox/notifications/{id}/snooze", `/v1/inbox/notifications/${third}/snooze`, { snoozeUntil }, inbox);
    await documented("PATCH /v1/inbox/notifications/{id}/unsnooze", `/v1/inbox/notifications/${third}/unsnooze`, undefined, inbox);
    await documented("PATCH /v1/inbox/notifications/{id}/snooze", `/v1/inbox/notifications/${third}/snooze`, { snoozeUntil }, inbox);
    await documented("PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/unsnooze", `${base}/${third}/unsnooze`);
    await documented("PATCH /v1/inbox/notifications/{id}/snooze", `/v1/inbox/notifications/${third}/snooze`, { snoozeUntil }, inbox);
    for (const action of ["complete", "revert"]) {
      await documented(`PATCH /v1/inbox/notifications/{id}/${action}`, `/v1/inbox/notifications/${third}/${action}`, { actionType: "primary" }, inbox);
    }
    for (const change of ["seen", "read", "archive", "read-archive"]) {
      await documented(`POST /v2/subscribers/{subscriberId}/notifications/${change}`, `${base}/${change}`, { notificationIds: [fourth] });
      await documented(`POST /v1/inbox/notifications/${change}`, `/v1/inbox/notifications/${change}`, { notificationIds: [fifth] }, inbox);
    }
    await documented("POST /v2/subscribers/{subscriberId}/notifications/delete", `${base}/delete`, { notificationIds: [fourth] });
    await documented("POST /v1/inbox/notifications/delete", "/v1/inbox/notifications/delete", { notificationIds: [fifth] }, inbox);
    await documented("DELETE /v2/subscribers/{subscriberId}/notifications/{notificationId}", `${base}/${sixth}`);
    await documented("DELETE /v1/inbox/notifications/{id}/delete", `/v1/inbox/notifications/${third}/delete`, undefined, inbox);

    await documented("DELETE /v1/messages/{messageId}", `/v1/messages/${second}`);
    await documented("DELETE /v1/messages/transaction/{transactionId}", `/v1/messages/transaction/${transactionId}`);
  });

  it("of triggers, the activity feed and execution details", async () => {
    await createIntegration(stack, {
      providerId: "nodemailer",
      channel: "email",
      identifier: "docs-sink",
      credentials: sinkCredentials(sink, { senderName: "Notify" }),
    });
    const transactionId = `doc-trigger-${Date.now()}`;
    await documented("POST /v1/events/trigger", "/v1/events/trigger", { name: workflowIdentifier, to: "doc-ada", payload: { amount: "12" }, transactionId });
    await documented("POST /v1/events/trigger/bulk", "/v1/events/trigger/bulk", {
      events: [
        { name: workflowIdentifier, to: "doc-ada", payload: { amount: "1" }, transactionId: `${transactionId}-bulk` },
        { name: "no-such-workflow", to: "doc-ada" },
      ],
    });
    await documented("POST /v1/events/trigger/broadcast", "/v1/events/trigger/broadcast", { name: workflowIdentifier, payload: { amount: "2" } });
    await documented("DELETE /v1/events/trigger/{transactionId}", `/v1/events/trigger/${transactionId}-bulk`);

    const email = await settledMessage(stack, transactionId, "email", delivered);
    await documented("GET /v1/execution-details", `/v1/execution-details?notificationId=${email._notificationId}&subscriberId=doc-ada`);
    await documented("GET /v1/notifications", `/v1/notifications?transactionId=${transactionId}`);
    await documented("GET /v1/notifications/{notificationId}", `/v1/notifications/${email._notificationId}`);
    await documented("GET /v1/notifications/stats", "/v1/notifications/stats");
    await documented("GET /v1/notifications/graph/stats", "/v1/notifications/graph/stats");
  });

  it("of integrations, topics and their subscriptions", async () => {
    const integration = await documented<Data<{ _id: string }>>("POST /v1/integrations", "/v1/integrations", {
      providerId: "sendgrid",
      channel: "email",
      identifier: "docs-sendgrid",
      credentials: { apiKey: "SG.docs", from: "docs@example.com" },
    });
    await documented("GET /v1/integrations", "/v1/integrations");
    await documented("GET /v1/integrations/active", "/v1/integrations/active");
    await documented("PUT /v1/integrations/{integrationId}", `/v1/integrations/${integration.data._id}`, { name: "Docs SendGrid", active: true });
    await documented("POST /v1/integrations/{integrationId}/set-primary", `/v1/integrations/${integration.data._id}/set-primary`);
    await documented("DELETE /v1/integrations/{integrationId}", `/v1/integrations/${integration.data._id}`);

    await documented("POST /v1/topics", "/v1/topics", { key: "doc-topic", name: "Docs" });
    await documented("POST /v1/topics/{topicKey}/subscribers", "/v1/topics/doc-topic/subscribers", { subscribers: ["doc-ada", "doc-nobody"] });
    await documented("GET /v1/topics/{topicKey}/subscribers/{externalSubscriberId}", "/v1/topics/doc-topic/subscribers/doc-ada");
    await documented("GET /v1/topics", "/v1/topics");
    await documented("GET /v1/topics/{topicKey}", "/v1/topics/doc-topic");
    await documented("PATCH /v1/topics/{topicKey}", "/v1/topics/doc-topic", { name: "Docs renamed" });
    await documented("POST /v2/topics", "/v2/topics", { key: "doc-topic-2", name: "Docs two" });
    await documented("GET /v2/topics", "/v2/topics");
    await documented("GET /v2/topics/{topicKey}", "/v2/topics/doc-topic-2");
    await documented("PATCH /v2/topics/{topicKey}", "/v2/topics/doc-topic-2", { name: "Docs two renamed" });
    await documented("POST /v2/topics/{topicKey}/subscriptions", "/v2/topics/doc-topic-2/subscriptions", { subscriberIds: ["doc-ada", "doc-nobody"] });
    await documented("GET /v2/topics/{topicKey}/subscriptions", "/v2/topics/doc-topic-2/subscriptions");
    await documented("GET /v2/topics/{topicKey}/subscriptions/{identifier}", "/v2/topics/doc-topic-2/subscriptions/tk_doc-topic-2:si_doc-ada");
    await documented("PATCH /v2/topics/{topicKey}/subscriptions/{identifier}", "/v2/topics/doc-topic-2/subscriptions/tk_doc-topic-2:si_doc-ada", {
      name: "Ada's subscription",
    });
    await documented("GET /v2/subscribers/{subscriberId}/subscriptions", "/v2/subscribers/doc-ada/subscriptions");
    await documented("DELETE /v2/topics/{topicKey}/subscriptions", "/v2/topics/doc-topic-2/subscriptions", { subscriberIds: ["doc-ada"] });
    await documented("DELETE /v2/topics/{topicKey}", "/v2/topics/doc-topic-2");
    await documented("POST /v1/topics/{topicKey}/subscribers/removal", "/v1/topics/doc-topic/subscribers/removal", { subscribers: ["doc-ada"] });
    await documented("DELETE /v1/topics/{topicKey}", "/v1/topics/doc-topic");
  });

  it("of channel connections and endpoints", async () => {
    await createIntegration(stack, { providerId: "slack", channel: "chat", identifier: "docs-slack" });
    await documented("POST /v1/subscribers", "/v1/subscribers", { subscriberId: "doc-slacker" });
    const connection = { integrationIdentifier: "docs-slack", subscriberId: "doc-slacker", workspace: { id: "T1" }, auth: { accessToken: "xoxb-docs" } };
    await documented("POST /v1/channel-connections", "/v1/channel-connections", { identifier: "doc-connection", ...connection });
    await documented("GET /v1/channel-connections", "/v1/channel-connections");
    await documented("GET /v1/channel-connections/{identifier}", "/v1/channel-connections/doc-connection");
    await documented("PATCH /v1/channel-connections/{identifier}", "/v1/channel-connections/doc-connection", {
      workspace: { id: "T1", name: "Docs" },
      auth: { accessToken: "xoxb-docs-2" },
    });
    const endpoint = { identifier: "doc-endpoint", subscriberId: "doc-slacker", integrationIdentifier: "docs-slack", connectionIdentifier: "doc-connection" };
    await documented("POST /v1/channel-endpoints", "/v1/channel-endpoints", { ...endpoint, type: "slack_channel", endpoint: { channelId: "C1" } });
    await documented("GET /v1/channel-endpoints", "/v1/channel-endpoints");
    await documented("GET /v1/channel-endpoints/{identifier}", "/v1/channel-endpoints/doc-endpoint");
    await documented("PATCH /v1/channel-endpoints/{identifier}", "/v1/channel-endpoints/doc-endpoint", { endpoint: { channelId: "C2" } });
    await documented("DELETE /v1/channel-endpoints/{identifier}", "/v1/channel-endpoints/doc-endpoint");
    await documented("DELETE /v1/channel-connections/{identifier}", "/v1/channel-connections/doc-connection");
  });

  it("of workflows, tenants, contexts, feeds, notification groups and environments", async () => {
    await documented("GET /v1/workflows", "/v1/workflows");
    await documented("GET /v1/workflows/{workflowId}", `/v1/workflows/${workflowId}`);
    await documented("PUT /v1/workflows/{workflowId}", `/v1/workflows/${workflowId}`, { description: "Receipts", tags: ["billing", "docs"] });
    await documented("PUT /v1/workflows/{workflowId}/status", `/v1/workflows/${workflowId}/status`, { active: true });
    await documented("GET /v1/notification-templates", "/v1/notification-templates");
    await documented("GET /v1/notification-templates/{workflowId}", `/v1/notification-templates/${workflowId}`);
    const v2 = await documented<Data<{ workflowId: string; steps: { stepId: string }[] }>>("POST /v2/workflows", "/v2/workflows", {
      name: "Docs v2",
      workflowId: "docs-v2",
      steps: [{ name: "Note", type: "in_app", controlValues: { body: "Hello" } }],
    });
    await documented("GET /v2/workflows", "/v2/workflows");
    await documented("GET /v2/workflows/{workflowId}", "/v2/workflows/docs-v2");
    await documented("PATCH /v2/workflows/{workflowId}", "/v2/workflows/docs-v2", { tags: ["docs"] });
    await documented("PUT /v2/workflows/{workflowId}", "/v2/workflows/docs-v2", {
      name: "Docs v2",
      steps: [{ name: "Note", type: "in_app", controlValues: { body: "Hello again" } }],
    });
    await documented("GET /v2/workflows/{workflowId}/steps/{stepId}", `/v2/workflows/docs-v2/steps/${v2.data.steps[0]!.stepId}`);
    await documented("POST /v2/workflows/{workflowId}/step/{stepId}/preview", `/v2/workflows/docs-v2/step/${v2.data.steps[0]!.stepId}/preview`, {
      previewPayload: { payload: { name: "Ada" }, subscriber: { firstName: "Ada", data: { plan: "pro" } } },
    });
    await documented("POST /v2/workflows/{workflowId}/step/{stepId}/preview", `/v2/workflows/docs-v2/step/${v2.data.steps[0]!.stepId}/preview`, {
      controlValues: { body: "{{#if open}}never closed" },
    });
    await documented("DELETE /v2/workflows/{workflowId}", "/v2/workflows/docs-v2");

    await documented("POST /v1/tenants", "/v1/tenants", { identifier: "doc-tenant", name: "Docs", data: { tier: "gold" } });
    await documented("GET /v1/tenants", "/v1/tenants");
    await documented("GET /v1/tenants/{identifier}", "/v1/tenants/doc-tenant");
    await documented("PATCH /v1/tenants/{identifier}", "/v1/tenants/doc-tenant", { name: "Docs renamed" });
    await documented("DELETE /v1/tenants/{identifier}", "/v1/tenants/doc-tenant");
    await documented("POST /v2/contexts", "/v2/contexts", { type: "tenant", id: "doc-context", data: { tier: "gold" } });
    await documented("GET /v2/contexts", "/v2/contexts?limit=1");
    await documented("GET /v2/contexts/{type}/{id}", "/v2/contexts/tenant/doc-context");
    await documented("PATCH /v2/contexts/{type}/{id}", "/v2/contexts/tenant/doc-context", { data: { tier: "silver" } });
    await documented("DELETE /v2/contexts/{type}/{id}", "/v2/contexts/tenant/doc-context");
    const feed = await documented<Data<{ _id: string }>>("POST /v1/feeds", "/v1/feeds", { name: "docs-feed" });
    await documented("GET /v1/feeds", "/v1/feeds");
    await documented("DELETE /v1/feeds/{feedId}", `/v1/feeds/${feed.data._id}`);
    const group = await documented<Data<{ _id: string }>>("POST /v1/notification-groups", "/v1/notification-groups", { name: "Docs group" });
    await documented("GET /v1/notification-groups", "/v1/notification-groups");
    await documented("GET /v1/notification-groups/{id}", `/v1/notification-groups/${group.data._id}`);
    await documented("PATCH /v1/notification-groups/{id}", `/v1/notification-groups/${group.data._id}`, { name: "Docs group renamed" });
    await documented("DELETE /v1/notification-groups/{id}", `/v1/notification-groups/${group.data._id}`);
    await documented("GET /v1/environments/me", "/v1/environments/me");
    await documented("GET /v1/environments", "/v1/environments");
    const staging = await documented<Data<{ _id: string }>>("POST /v1/environments", "/v1/environments", { name: "Docs staging", color: "#010101" });
    await documented("PUT /v1/environments/{environmentId}", `/v1/environments/${staging.data._id}`, { name: "Docs staging renamed" });
    await documented("POST /v2/environments/{targetEnvironmentId}/diff", `/v2/environments/${staging.data._id}/diff`, {});
    await documented("POST /v2/environments/{targetEnvironmentId}/publish", `/v2/environments/${staging.data._id}/publish`, {});
    await documented("GET /v2/environments/{environmentId}/tags", `/v2/environments/${staging.data._id}/tags`);
    await documented("DELETE /v1/environments/{environmentId}", `/v1/environments/${staging.data._id}`);
    await documented("DELETE /v1/workflows/{workflowId}", `/v1/workflows/${workflowId}`);
  });

  it("cover the thirteen endpoints of the service interface", () => {
    expect(
      [
        "PATCH /v1/subscribers/{subscriberId}/credentials",
        "PATCH /v2/subscribers/{subscriberId}/preferences",
        "GET /v2/subscribers/{subscriberId}/preferences",
        "POST /v1/subscribers/{subscriberId}/messages/mark-as",
        "POST /v1/subscribers/{subscriberId}/messages/mark-all",
        "GET /v1/subscribers/{subscriberId}/notifications/unseen",
        "POST /v1/integrations/{integrationId}/set-primary",
        "GET /v1/integrations/active",
        "GET /v1/topics/{topicKey}/subscribers/{externalSubscriberId}",
        "DELETE /v1/messages/transaction/{transactionId}",
        "POST /v1/events/trigger",
        "POST /v1/events/trigger/bulk",
        "POST /v1/events/trigger/broadcast",
      ].filter((operation) => !checked.has(operation)),
    ).toEqual([]);
  });
});
