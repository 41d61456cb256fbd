import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { Criticality } from "@novu/api/models/operations/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
let fcmId: string;
let workflow: { _id: string; triggers: { identifier: string }[] };
let critical: { _id: string };
beforeAll(async () => {
  stack = await startStack({ worker: false });
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
  fcmId = (await stack.request<Data<{ _id: string }>>("POST", "/v1/integrations", { providerId: "fcm", channel: "push", active: true })).body.data._id;
  await stack.request("POST", "/v1/integrations", { providerId: "slack", channel: "chat", identifier: "team-slack", active: true });
  workflow = (
    await stack.request<Data<typeof workflow>>("POST", "/v1/workflows", {
      name: "Weekly digest",
      active: true,
      steps: [{ template: { type: "in_app", content: "Hi" } }, { template: { type: "push", title: "Hi", content: "Hi" } }],
    })
  ).body.data;
  critical = (
    await stack.request<Data<typeof critical>>("POST", "/v1/workflows", {
      name: "Password reset",
      active: true,
      critical: true,
      steps: [{ template: { type: "email", subject: "Reset", content: "Reset" } }],
    })
  ).body.data;
  await novu.subscribers.create({ subscriberId: "sdk-user" });
});
afterAll(async () => {
  await stack?.stop();
});

describe("@novu/api 3.19.1 against the gateway: credentials and preferences", () => {
  it("subscribers.credentials.append binds and appends device tokens", async () => {
    const first = await novu.subscribers.credentials.append({ providerId: "fcm", credentials: { deviceTokens: ["sdk-1", "sdk-2"] } }, "sdk-user");
    expect(first.result.channels).toEqual([{ providerId: "fcm", integrationId: fcmId, credentials: { deviceTokens: ["sdk-1", "sdk-2"] } }]);
    const second = await novu.subscribers.credentials.append({ providerId: "fcm", credentials: { deviceTokens: ["sdk-2", "sdk-3"] } }, "sdk-user");
    expect(second.result.channels?.[0]?.credentials.deviceTokens).toEqual(["sdk-1", "sdk-2", "sdk-3"]);
    const chat = await novu.subscribers.credentials.append(
      { providerId: "slack", integrationIdentifier: "team-slack", credentials: { webhookUrl: "https://hooks.slack.com/sdk", title: "On call" } },
      "sdk-user",
    );
    expect(chat.result.channels?.[1]).toMatchObject({
      providerId: "slack",
      integrationIdentifier: "team-slack",
      credentials: { webhookUrl: "https://hooks.slack.com/sdk", title: "On call" },
    });
  });

  it("subscribers.credentials.update replaces tokens and credentials.delete removes the channel", async () => {
    const replaced = await novu.subscribers.credentials.update({ providerId: "fcm", credentials: { deviceTokens: ["only"] } }, "sdk-user");
    expect(replaced.result.channels?.[0]?.credentials.deviceTokens).toEqual(["only"]);
    await novu.subscribers.credentials.delete("sdk-user", "slack");
    expect((await novu.subscribers.retrieve("sdk-user")).result.channels?.map((channel) => channel.providerId)).toEqual(["fcm"]);
  });

  it("surfaces a missing integration, an unknown subscriber and bad values as typed errors", async () => {
    const noIntegration = await novu.subscribers.credentials
      .append({ providerId: "apns", credentials: { deviceTokens: ["x"] } }, "sdk-user")
      .catch((error: unknown) => error);
    expect(noIntegration).toBeInstanceOf(errors.ErrorDto);
    expect((noIntegration as errors.ErrorDto).statusCode).toBe(400);
    const unknown = await novu.subscribers.credentials.append({ providerId: "fcm", credentials: {} }, "sdk-nobody").catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(errors.ErrorDto);
    const invalid = await novu.subscribers.credentials
      .append({ providerId: "slack", credentials: { webhookUrl: "not a url" } }, "sdk-user")
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(errors.ValidationErrorDto);
  });

  it("subscribers.preferences.list parses the preferences for every criticality", async () => {
    const listed = await novu.subscribers.preferences.list({ subscriberId: "sdk-user" });
    expect(listed.result.global).toEqual({ enabled: true, channels: { inApp: true, push: true } });
    expect(listed.result.workflows).toEqual([
      {
        enabled: true,
        channels: { inApp: true, push: true },
        overrides: [
          { channel: "in_app", source: "template" },
          { channel: "push", source: "template" },
        ],
        workflow: { slug: expect.stringMatching(/^weekly-digest_wf_/), identifier: "weekly-digest", name: "Weekly digest", updatedAt: expect.any(String) },
      },
    ]);
    const criticalOnly = await novu.subscribers.preferences.list({ subscriberId: "sdk-user", criticality: Criticality.Critical });
    expect(criticalOnly.result.workflows.map((preference) => preference.workflow.identifier)).toEqual(["password-reset"]);
    const all = await novu.subscribers.preferences.list({ subscriberId: "sdk-user", criticality: Criticality.All });
    expect(all.result.workflows).toHaveLength(2);
  });

  it("subscribers.preferences.update changes workflow and global choices, and takes a schedule", async () => {
    const perWorkflow = await novu.subscribers.preferences.update({ workflowId: workflow._id, channels: { push: false } }, "sdk-user");
    expect(perWorkflow.result.workflows[0]).toMatchObject({
      channels: { inApp: true, push: false },
      overrides: [
        { channel: "in_app", source: "template" },
        { channel: "push", source: "subscriber" },
      ],
    });
    const global = await novu.subscribers.preferences.update({ channels: { inApp: false, push: true } }, "sdk-user");
    expect(global.result.global.channels).toEqual({ inApp: false, push: true });
    expect(global.result.workflows[0]?.channels).toEqual({ inApp: false, push: true });

    const schedule = { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] } } };
    await novu.subscribers.preferences.update({ schedule }, "sdk-user");
    expect((await novu.subscribers.preferences.list({ subscriberId: "sdk-user" })).result.global.schedule).toEqual(schedule);
  });

  it("surfaces a critical workflow and non-boolean channels as typed errors", async () => {
    const refused = await novu.subscribers.preferences
      .update({ workflowId: critical._id, channels: { email: false } }, "sdk-user")
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(errors.ErrorDto);
    expect((refused as errors.ErrorDto).statusCode).toBe(400);
    const missing = await novu.subscribers.preferences.update({ workflowId: "no-such-workflow", channels: {} }, "sdk-user").catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(errors.ErrorDto);
    expect((missing as errors.ErrorDto).statusCode).toBe(404);
  });

  it("subscribers.preferences.bulkUpdate changes several workflows at once, and refuses a bad batch whole", async () => {
    const updated = await novu.subscribers.preferences.bulkUpdate(
      { preferences: [{ workflowId: workflow.triggers[0]!.identifier, channels: { inApp: false, push: true } }] },
      "sdk-user",
    );
    expect(updated.result).toEqual([
      expect.objectContaining({
        level: "template",
        enabled: true,
        channels: { inApp: false, push: true },
        workflow: expect.objectContaining({ id: workflow._id }),
      }),
    ]);
    const tooMany = Array.from({ length: 101 }, () => ({ workflowId: workflow._id, channels: { push: false } }));
    const refused = await novu.subscribers.preferences.bulkUpdate({ preferences: tooMany }, "sdk-user").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(errors.ValidationErrorDto);
    // An empty batch is Novu's 400, after an unknown subscriber's 404.
    const empty = await novu.subscribers.preferences.bulkUpdate({ preferences: [] }, "sdk-user").catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(errors.ErrorDto);
    expect((empty as errors.ErrorDto).statusCode).toBe(400);
    expect((empty as errors.ErrorDto).message).toBe("No preferences provided for bulk update");
    const nobody = await novu.subscribers.preferences.bulkUpdate({ preferences: [] }, "sdk-nobody").catch((error: unknown) => error);
    expect((nobody as errors.ErrorDto).statusCode).toBe(404);
    const listed = await novu.subscribers.preferences.list({ subscriberId: "sdk-user" });
    expect(listed.result.workflows[0]?.channels).toEqual({ inApp: false, push: true });
  });
});
