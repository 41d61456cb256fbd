import { randomUUID } from "node:crypto";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { triggersV1 } from "@notify/proto";
import { z } from "zod";
import { Code, ConnectError } from "@connectrpc/connect";
import { HttpError, httpErrorFromRpc } from "../errors.js";
import { jsonObject, keyString, outboundUrl } from "../validation.js";
import { contextBody, contextInputsOf } from "./context-inputs.js";
import { createSubscriberBody, fieldsOf } from "./subscribers.js";
import type { Branding } from "../organizations.js";

export const MAX_RECIPIENTS = 100;
export const MAX_BULK_EVENTS = 100;
const MAX_FREE_FORM_BYTES = 512 * 1024;

/** payload / overrides: an object of at most 512 KiB (its depth is bounded where bodies are read, body.ts). */
export const freeForm = jsonObject.refine(
  (value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_FREE_FORM_BYTES,
  `must be at most ${MAX_FREE_FORM_BYTES / 1024} KiB`,
);

const channel = z.object({
  providerId: z.string({ error: "providerId must be a string" }).min(1, "providerId should not be empty"),
  integrationIdentifier: z.string().optional(),
  credentials: z
    .object({
      webhookUrl: outboundUrl("webhookUrl").optional(),
      channel: z.string().optional(),
      deviceTokens: z.array(z.string()).max(100).optional(),
    })
    .default({}),
});

const subscriberObject = createSubscriberBody.extend({ channels: z.array(channel).max(20).optional() });
const topic = z.object({ type: z.literal("Topic"), topicKey: keyString("topicKey") });
// A subscriber id is trimmed, as Novu trims it (and a subscriber object's).
const recipient = z.union([z.string({ error: "must be a subscriber id, a subscriber object or a topic" }).trim(), topic, subscriberObject]);

const tenant = z.union([
  z.string().min(1).max(255),
  z.object({ identifier: keyString("identifier"), name: z.string().max(255).optional(), data: jsonObject.optional() }),
]);

export const triggerBody = z.object({
  name: keyString("name"),
  to: z.union([recipient, z.array(recipient).min(1, "to should not be empty").max(MAX_RECIPIENTS, `to must contain no more than ${MAX_RECIPIENTS} elements`)]),
  payload: freeForm.optional(),
  overrides: freeForm.optional(),
  transactionId: z.string().min(1).max(255).optional(),
  actor: z.union([z.string().min(1).max(255), subscriberObject]).optional(),
  tenant: tenant.optional(),
  context: contextBody.optional(),
});

export const bulkTriggerBody = z.object({
  events: z
    .array(z.unknown(), { error: "events must be an array" })
    .min(1, "events should not be empty")
    .max(MAX_BULK_EVENTS, `events must contain no more than ${MAX_BULK_EVENTS} elements`),
});

export const broadcastBody = triggerBody.omit({ to: true }).extend({ payload: freeForm });

type SubscriberObject = z.infer<typeof subscriberObject>;
const { BrandingSchema, TriggerEventSchema, RecipientSchema, SubscriberInputSchema, ChannelInputSchema, ActorSchema, TenantSchema, TenantInputSchema } =
  triggersV1;

function subscriberInput(value: SubscriberObject): triggersV1.SubscriberInput {
  const { subscriberId, channels, ...profile } = value;
  const input = create(SubscriberInputSchema, { subscriberId, fields: fieldsOf(profile) });
  for (const item of channels ?? []) {
    const channel = create(ChannelInputSchema, { providerId: item.providerId, credentials: { deviceTokens: item.credentials.deviceTokens ?? [] } });
    if (item.integrationIdentifier !== undefined) channel.integrationIdentifier = item.integrationIdentifier;
    if (item.credentials.webhookUrl !== undefined) channel.credentials!.webhookUrl = item.credentials.webhookUrl;
    if (item.credentials.channel !== undefined) channel.credentials!.channel = item.credentials.channel;
    input.channels.push(channel);
  }
  return input;
}

function recipientInput(value: z.infer<typeof recipient>): triggersV1.Recipient {
  const input = create(RecipientSchema);
  if (typeof value === "string") input.kind = { case: "subscriberId", value };
  else if ("type" in value && value.type === "Topic") input.kind = { case: "topicKey", value: value.topicKey };
  else input.kind = { case: "subscriber", value: subscriberInput(value as SubscriberObject) };
  return input;
}

function actorInput(actor: NonNullable<z.infer<typeof triggerBody>["actor"]>): triggersV1.Actor {
  const input = create(ActorSchema);
  input.kind = typeof actor === "string" ? { case: "subscriberId", value: actor } : { case: "subscriber", value: subscriberInput(actor) };
  return input;
}

function tenantInput(value: z.infer<typeof tenant>): triggersV1.Tenant {
  const input = create(TenantSchema);
  if (typeof value === "string") {
    input.kind = { case: "identifier", value };
    return input;
  }
  const object = create(TenantInputSchema, { identifier: value.identifier });
  if (value.name !== undefined) object.name = value.name;
  if (value.data) object.data = value.data as JsonObject;
  input.kind = { case: "tenant", value: object };
  return input;
}

/** What templates read of the organization's branding, carried by each of its events. */
type TemplateBranding = Pick<Branding, "logo" | "color">;

function eventFrom(body: Omit<z.infer<typeof triggerBody>, "to">, broadcast: boolean, branding: TemplateBranding): triggersV1.TriggerEvent {
  const event = create(TriggerEventSchema, { name: body.name, broadcast });
  if (branding.logo !== undefined || branding.color !== undefined) event.branding = create(BrandingSchema, branding);
  if (body.payload) event.payload = body.payload as JsonObject;
  if (body.overrides) event.overrides = body.overrides as JsonObject;
  if (body.transactionId) event.transactionId = body.transactionId;
  if (body.actor !== undefined) event.actor = actorInput(body.actor);
  if (body.tenant !== undefined) event.tenant = tenantInput(body.tenant);
  if (body.context !== undefined) event.context = contextInputsOf(body.context);
  return event;
}

export function eventOf(body: z.infer<typeof triggerBody>, branding: TemplateBranding): triggersV1.TriggerEvent {
  const event = eventFrom(body, false, branding);
  event.to = (Array.isArray(body.to) ? body.to : [body.to]).map(recipientInput);
  return event;
}

/** A broadcast, its transaction named before it is accepted (a UUID unless given), as Novu names it. */
export function broadcastEventOf(body: z.infer<typeof broadcastBody>, branding: TemplateBranding): triggersV1.TriggerEvent {
  const event = eventFrom(body, true, branding);
  event.transactionId ??= randomUUID();
  return event;
}

/**
 * A broadcast's answer: as Novu answers it, processed whatever the workflow's state (inactive,
 * without active steps, its tenant unknown: nothing is sent then); only an error is the request's.
 */
export function broadcastOutcome(outcome: triggersV1.TriggerOutcome, transactionId: string) {
  singleOutcome(outcome);
  return { acknowledged: true, status: "processed", transactionId };
}

export function resultToJson(result: triggersV1.TriggerResult) {
  return {
    acknowledged: result.acknowledged,
    status: result.status,
    ...(result.error.length > 0 ? { error: result.error } : {}),
    ...(result.transactionId !== undefined ? { transactionId: result.transactionId } : {}),
  };
}

/** A single trigger: an event-level error is the request's error (e.g. 422 workflow_not_found). */
export function singleOutcome(outcome: triggersV1.TriggerOutcome) {
  if (outcome.outcome.case === "result") return resultToJson(outcome.outcome.value);
  const error = outcome.outcome.value;
  if (error && error.payloadErrors.length > 0) {
    // Novu's PayloadValidationException: its fields at the top level and in ctx.
    const details = { type: "PAYLOAD_VALIDATION_ERROR", errors: error.payloadErrors, schema: error.payloadSchema ?? {} };
    throw new HttpError(400, error.message, { ...details, ctx: details });
  }
  throw httpErrorFromRpc(new ConnectError(error?.message ?? "error", (error?.code ?? Code.Unknown) as Code));
}

/** In a bulk, an event's error is that event's result: status "error", the request still succeeds. */
export function bulkOutcome(outcome: triggersV1.TriggerOutcome) {
  if (outcome.outcome.case === "result") return resultToJson(outcome.outcome.value);
  return { acknowledged: true, status: "error", error: [outcome.outcome.value?.message ?? "error"] };
}

/** What resultToJson answers, and a bulk's failed event. */
export const triggerResultResponse = z
  .object({
    acknowledged: z.boolean(),
    status: z.enum([
      "error",
      "trigger_not_active",
      "no_workflow_active_steps_defined",
      "no_workflow_steps_defined",
      "processed",
      "no_tenant_found",
      "invalid_recipients",
    ]),
    error: z.array(z.string()).optional(),
    transactionId: z.string().optional(),
  })
  .meta({ id: "TriggerResult" });
