import { createHash } from "node:crypto";
import { clone, create, type JsonObject } from "@bufbuild/protobuf";
import { deliveriesV1, messagesV1, type integrationsV1, type layoutsV1, type subscribersV1, type triggersV1, workflowsV1 } from "@notify/proto";
import { CHANNEL_NAMES, CHAT_PROVIDER_IDS, Channel, PUSH_PROVIDER_IDS, Severity, severityNamed, StepType, stepChannel } from "@notify/runtime";
import { emailBlocksHtml, fcmSendsToTopic, isHeaderName, mergedOverrideLevels, NOVU_BRANDING_COLOR } from "@notify/providers";
import { emailHtml, legacyLayoutKeys, objectAt, renderContent, renderCta, renderJson, stepLayoutId, v1StepRender, type Render } from "@notify/templates";

export type NewMessage = messagesV1.NewMessage;
const { MessageStatus, NewMessageSchema, EmailBlocksSchema, MessageCtaSchema, MessageActorSchema } = messagesV1;
const { TemplateEngine } = workflowsV1;

/**
 * What composing reads of a recipient: a Recipient of a fan-out page, or a Subscriber (named
 * recipients and actors), which has every field of it.
 */
export type RecipientProfile = Omit<subscribersV1.Recipient, "$typeName" | "$unknown">;

/** What templates and filters see of a subscriber. */
export function subscriberVariables(subscriber: RecipientProfile): Record<string, unknown> {
  return {
    _id: subscriber.id,
    subscriberId: subscriber.subscriberId,
    firstName: subscriber.firstName,
    lastName: subscriber.lastName,
    email: subscriber.email,
    phone: subscriber.phone,
    avatar: subscriber.avatar,
    locale: subscriber.locale,
    timezone: subscriber.timezone,
    data: subscriber.data ?? {},
    isOnline: subscriber.isOnline,
  };
}

/** JSON has no undefined: the fields that are set. */
const definedFields = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as JsonObject;

/** A push send carries a digest's events up to this size (JSON); a larger digest goes without them, so the send still fits a stream message. */
const MAX_PUSH_DIGEST_BYTES = 64 * 1024;

/** The digest a push send carries: with its events while they are small. */
function stepOfPush(digest: JsonObject): JsonObject {
  if (JSON.stringify(digest).length <= MAX_PUSH_DIGEST_BYTES) return digest;
  const { events: _left, ...rest } = digest;
  return rest;
}

/** Everything one subscriber's run of a trigger needs. */
export interface RunContext {
  job: triggersV1.TriggerJob;
  workflow: workflowsV1.Workflow;
  subscriber: RecipientProfile;
  /** Renders the workflow's templates with this run's variables. */
  render: Render;
  payload: JsonObject;
  overrides: JsonObject;
  /** After a digest step, the digest as templates read it ({digest, events, total_count}); empty otherwise. */
  digest: JsonObject;
  /** The keys of the trigger's contexts, sorted: stamped on every message of the run. */
  contextKeys: string[];
  /** The integration chosen for a channel (undefined: none active), looked up once per job. */
  integrationFor(channel: string): Promise<integrationsV1.Integration | undefined>;
  /** Chat/push integrations by id, for the subscriber's own channels. */
  integrationById(id: string): Promise<integrationsV1.Integration | undefined>;
  /** The environment's active integration of this provider (with this identifier, when given), chosen as `integrationFor` chooses (undefined: none). */
  integrationOfProvider(providerId: string, identifier?: string): Promise<integrationsV1.Integration | undefined>;
  /** The subscriber's chat endpoints made for exactly this run's contexts, oldest first. */
  chatEndpoints: readonly subscribersV1.ChannelEndpoint[];
  /** The trigger's actor, when it named one. */
  actor?: subscribersV1.Subscriber | undefined;
  /** What the subscriber's notification keeps, stamped on its messages for the first of them to write. */
  notification: messagesV1.NotificationTraits;
}

interface Outcome {
  status: messagesV1.MessageStatus;
  errorId: string;
  errorText: string;
}

/** What the delivery stage sends for a message, once the message is written. */
export interface DeliveryPlan {
  integration: integrationsV1.Integration;
  content: deliveriesV1.DeliveryJob["content"];
  /** The key the rest of the subscriber's run is held under, when it waits for this send (shouldStopOnFail). */
  continuationKey?: string | undefined;
  /** The trigger's overrides for the integration's provider (`providerDataOf`), when it has any. */
  providerData?: JsonObject | undefined;
}

/** A message as composed, with its send when it has one (email, sms, chat, push with an address). */
export interface Composed {
  message: NewMessage;
  delivery?: DeliveryPlan | undefined;
}

const warning = (errorId: string, errorText: string): Outcome => ({ status: MessageStatus.WARNING, errorId, errorText });

function settle(message: NewMessage, outcome: Outcome): Composed {
  message.status = outcome.status;
  message.errorId = outcome.errorId;
  message.errorText = outcome.errorText;
  return { message };
}

const strings = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === "string" && item.length > 0);
const optionalString = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : undefined);

/** Attachments as Novu takes them from the payload: `[{file: base64 text, name, mime}]`. */
function attachmentsOf(payload: JsonObject): deliveriesV1.Attachment[] {
  const given = payload["attachments"];
  if (!Array.isArray(given)) return [];
  return given.flatMap((item) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return [];
    const { file, name, mime } = item as Record<string, unknown>;
    if (typeof file !== "string" || typeof name !== "string") return [];
    return [create(deliveriesV1.AttachmentSchema, { name, content: Buffer.from(file, "base64"), ...(typeof mime === "string" ? { mime } : {}) })];
  });
}

/** A channel's overrides as Novu merges them: the trigger's `overrides.<channel>`, and over it those named after the integration's provider. */
const providerOverrides = (message: NewMessage, context: RunContext, channel: "email" | "sms" | "chat"): Record<string, unknown> => ({
  ...objectAt(context.overrides, channel),
  ...(message.providerId ? objectAt(context.overrides, message.providerId) : {}),
});

/** What a chat provider is handed of the overrides (Novu's customData): all but the integration they chose. */
function chatCustomData(message: NewMessage, context: RunContext): { customData?: JsonObject } {
  const { integrationIdentifier: _chosen, ...customData } = providerOverrides(message, context, "chat");
  // Overrides came as JSON, so whatever they hold is JSON.
  return Object.keys(customData).length > 0 ? { customData: customData as JsonObject } : {};
}

/** Header names a mail's own fields set: an override adds headers, it does not replace these. */
const MAIL_FIELD_HEADERS = new Set([
  "from",
  "sender",
  "to",
  "cc",
  "bcc",
  "reply-to",
  "subject",
  "date",
  "mime-version",
  "content-type",
  "content-transfer-encoding",
]);
/**
 * `overrides.email.headers` as a mail can carry them: string values on one line (a line break
 * would start a header of the caller's choosing; the mail encodes any other character), under
 * names that are tokens and not the mail's own fields. Others are left out.
 */
function extraHeadersOf(overrides: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(objectAt(overrides, "headers")).filter(
      (entry): entry is [string, string] =>
        typeof entry[1] === "string" && isHeaderName(entry[0]) && !MAIL_FIELD_HEADERS.has(entry[0].toLowerCase()) && !/[\r\n\0]/.test(entry[1]),
    ),
  );
}

/**
 * The mail to send, as Novu builds it from the channel's overrides: they add recipients (`to`) and
 * headers, replace the subject, the body (`html`, else `text`), the sender (over the step's
 * `senderName`) and the copies, and hand providers their `customData` and `ipPoolName`.
 */
function emailContent(message: NewMessage, context: RunContext, stepSenderName: string | undefined): deliveriesV1.DeliveryJob["content"] {
  const overrides = providerOverrides(message, context, "email");
  const html = optionalString(overrides["html"]) ?? optionalString(overrides["text"]);
  const body: deliveriesV1.EmailContent["body"] =
    html !== undefined
      ? { case: "html", value: html }
      : message.content.case === "blocks"
        ? { case: "blocks", value: message.content.value }
        : { case: "html", value: message.content.value ?? "" };
  const from = optionalString(overrides["from"]);
  // As in Novu, an empty name is no name: the provider then sends from the integration's.
  const senderName = optionalString(overrides["senderName"]) ?? optionalString(stepSenderName);
  const replyTo = optionalString(overrides["replyTo"]);
  const customData = customDataOf(overrides);
  const ipPoolName = optionalString(overrides["ipPoolName"]);
  return {
    case: "email",
    value: create(deliveriesV1.EmailContentSchema, {
      // Each address once, as Novu sends them: SendGrid refuses a mail that names one twice.
      to: [...new Set([message.email ?? "", ...strings(overrides["to"])])],
      subject: optionalString(overrides["subject"]) ?? message.subject ?? "",
      body,
      cc: strings(overrides["cc"]),
      bcc: strings(overrides["bcc"]),
      attachments: attachmentsOf(context.payload),
      ...(from ? { from } : {}),
      ...(senderName ? { senderName } : {}),
      ...(replyTo ? { replyTo } : {}),
      headers: extraHeadersOf(overrides),
      ...(Object.keys(customData).length > 0 ? { customData } : {}),
      ...(ipPoolName ? { ipPoolName } : {}),
      ...(context.workflow.identifier ? { workflowIdentifier: context.workflow.identifier } : {}),
      // Editor blocks are laid out when sent, with the organization's logo and colour.
      ...(body.case === "blocks" && context.job.event?.branding ? { branding: context.job.event.branding } : {}),
    }),
  };
}

/** The overrides' `customData`, handed to providers as it came: overrides came as JSON, so whatever they hold is JSON. */
const customDataOf = (overrides: Record<string, unknown>) => objectAt(overrides, "customData") as JsonObject;

/** The text to send, as Novu builds it from the channel's overrides: they replace the number sent to (`to`), the sender and the content. */
function smsContent(message: NewMessage, context: RunContext): deliveriesV1.DeliveryJob["content"] {
  const overrides = providerOverrides(message, context, "sms");
  const from = optionalString(overrides["from"]);
  const customData = customDataOf(overrides);
  return {
    case: "sms",
    value: create(deliveriesV1.SmsContentSchema, {
      to: optionalString(overrides["to"]) ?? message.phone ?? "",
      content: optionalString(overrides["content"]) ?? textOf(message),
      ...(from ? { from } : {}),
      ...(Object.keys(customData).length > 0 ? { customData } : {}),
    }),
  };
}

const textOf = (message: NewMessage) => (message.content.case === "text" ? message.content.value : "");

/** As Novu orders it: the trigger's `overrides.severity`, else the workflow's, else none. */
export function severityOf(overrides: JsonObject, workflow: workflowsV1.Workflow): Severity {
  const named = overrides["severity"];
  const overridden = typeof named === "string" ? severityNamed(named) : undefined;
  return overridden ?? (workflow.severity === Severity.UNSPECIFIED ? Severity.NONE : workflow.severity);
}

/**
 * The layout an email step is sent in (none: as it is). Its trigger was accepted with the
 * layouts it names, so one its overrides name that is missing from the job did not exist: the
 * step fails, as in Novu.
 */
function layoutOf(step: workflowsV1.Step, context: RunContext): layoutsV1.EmailLayoutContent | layoutsV1.LegacyLayout | undefined {
  const { templateEngine } = context.workflow;
  const legacy = legacyLayoutKeys(step, templateEngine, context.overrides);
  if (legacy) {
    // A layout the override names but that does not exist leaves the step's own, as in Novu. A
    // step's own is checked when the workflow is saved; one missing was named before notify
    // served layouts (one of Novu's), and its emails go without a layout, as they went then.
    const layouts = context.job.legacyLayouts;
    return layouts.find((one) => one.identifier === legacy.identifier) ?? layouts.find((one) => one.id === legacy.id);
  }
  const key = stepLayoutId(step, templateEngine, context.overrides);
  if (key === undefined) return undefined;
  const layout = context.job.layouts.find((one) => one.identifier === key || one.id === key);
  if (layout) return layout.email;
  // A step's own layout is checked when the workflow is saved and unhooked when it is deleted:
  // one missing was named before notify served layouts, and its emails go as they went then.
  if (key === step.template?.layoutId) return undefined;
  throw new Error(`Layout not found for id ${key}`);
}

/** The organization's branding as v1 templates read it (`branding`): with Novu's colour where it set none. */
function brandingOf(job: triggersV1.TriggerJob): { logo?: string; color: string } {
  const branding = job.event?.branding;
  return { ...(branding?.logo ? { logo: branding.logo } : {}), color: branding?.color || NOVU_BRANDING_COLOR };
}

/**
 * A step's message as every channel starts it, the email sender name it rendered, which a message
 * does not keep, and the renderer of the step's other templates (an in-app step's buttons).
 */
interface BaseMessage {
  message: NewMessage;
  senderName?: string | undefined;
  render: Render;
}

/**
 * The message as every channel starts it: identity, rendered subject/title/content, payload. A
 * literal rather than create(): protobuf-es messages are plain objects, and create() walks all
 * 27 fields reflectively, once for each of a broadcast's hundred thousand recipients.
 */
async function baseMessage(step: workflowsV1.Step, context: RunContext, channel: Channel): Promise<BaseMessage> {
  const template = step.template;
  const message: NewMessage = {
    $typeName: "notify.messages.v1.NewMessage",
    transactionId: context.job.transactionId,
    subscriberId: context.subscriber.id,
    externalSubscriberId: context.subscriber.subscriberId,
    templateId: context.workflow.id,
    templateIdentifier: context.workflow.identifier,
    messageTemplateId: template?.id ?? step.id,
    stepId: step.id,
    jobId: context.job.triggerId,
    channel,
    content: { case: undefined },
    deviceTokens: [],
    status: MessageStatus.SENT,
    deliveredAt: [],
    payload: context.payload,
    overrides: context.overrides,
    severity: context.notification.severity,
    tags: context.workflow.tags,
    contextKeys: context.contextKeys,
    destination: "",
    notification: context.notification,
  };
  if (!template) return { message, render: context.render };
  const branding = brandingOf(context.job);
  const render = v1StepRender(template, context.render, branding);
  const rendered = renderContent(template, render);
  if (rendered.subject !== undefined) message.subject = rendered.subject;
  if (rendered.title !== undefined) message.title = rendered.title;
  const content = rendered.content;
  const layout = channel === Channel.EMAIL ? layoutOf(step, context) : undefined;
  if (content.case === "maily" || (content.case === "text" && channel === Channel.EMAIL)) {
    message.content = { case: "text", value: await emailHtml(template, content, render, layout) };
  } else if (content.case === "text") message.content = content;
  if (content.case === "blocks") {
    // Editor blocks in a layout are sent alone inside it; without one, the provider stage lays them out on a page of their own.
    message.content = layout
      ? { case: "text", value: await emailHtml(template, { case: "text", value: emailBlocksHtml(content.value, branding) }, render, layout) }
      : { case: "blocks", value: create(EmailBlocksSchema, { blocks: content.value }) };
  }
  return { message, senderName: rendered.senderName, render };
}

/**
 * The messages one channel step produces for one subscriber: in-app one message; email and sms one
 * message (a warning when there is no address, an error when a v1 SMS renders empty); chat one per
 * subscriber channel of that kind with an active integration (none when the subscriber has no such
 * channel), and one more to a subscriber's phone on WhatsApp when the environment has it; push one
 * per device of each such channel. Each message with an address and an integration carries its
 * send, which happens once it is written.
 */
export async function composeMessages(step: workflowsV1.Step, context: RunContext): Promise<Composed[]> {
  const composed = await composeChannel(step, context);
  for (const { delivery } of composed) {
    const providerData = delivery && providerDataOf(context.overrides, delivery.integration.providerId, step.stepId);
    if (providerData) delivery.providerData = providerData;
  }
  return composed;
}

/**
 * The trigger's overrides for a provider, as Novu merges them for a step's send:
 * `overrides.providers.<id>`, and over it `overrides.steps.<stepId>.providers.<id>`; undefined
 * when neither says anything.
 */
function providerDataOf(overrides: JsonObject, providerId: string, stepId: string | undefined): JsonObject | undefined {
  const global = objectAt(objectAt(overrides, "providers"), providerId);
  const forStep = stepId ? objectAt(objectAt(objectAt(objectAt(overrides, "steps"), stepId), "providers"), providerId) : {};
  if (Object.keys(global).length === 0 && Object.keys(forStep).length === 0) return undefined;
  // Overrides came as JSON, so their merge is JSON.
  return mergedOverrideLevels([global, forStep]) as JsonObject;
}

async function composeChannel(step: workflowsV1.Step, context: RunContext): Promise<Composed[]> {
  const channel = stepChannel(step.template?.type ?? StepType.UNSPECIFIED);
  if (channel === undefined) return [];
  // Overrides and integrations are keyed by the channel's public name.
  const type = CHANNEL_NAMES[channel];
  const { message, senderName, render } = await baseMessage(step, context, channel);
  const channelOverrides = objectAt(context.overrides, type);
  const identifier = optionalString(channelOverrides["integrationIdentifier"]);

  if (channel === Channel.IN_APP) {
    if (step.template?.cta) message.cta = create(MessageCtaSchema, renderCta(step.template.cta, render));
    const actor = step.template?.actor;
    if (actor && actor.type !== "none") {
      // A custom actor's image (a v2 step's avatar control is kept as one) is the message's avatar;
      // a user actor shows the trigger's actor's avatar as it was when the message was written.
      const image = actor.type === "system_custom" && actor.data ? context.render(actor.data) : undefined;
      if (image) message.avatar = image;
      const data = actor.type === "user" ? context.actor?.avatar : (image ?? actor.data);
      message.actor = create(MessageActorSchema, { type: actor.type, ...(data ? { data } : {}) });
    }
    if (step.template?.data) message.data = renderJson(step.template.data, context.render) as JsonObject;
    if (step.template?.feedId !== undefined) message.feedId = step.template.feedId;
    const integration = await context.integrationFor(type);
    if (integration) message.providerId = integration.providerId;
    return [{ message }];
  }

  if (channel === Channel.EMAIL || channel === Channel.SMS) {
    const isEmail = channel === Channel.EMAIL;
    // Novu's address rules: overrides.email.toRecipient, else the subscriber's email; payload.phone, else theirs.
    const preferred = isEmail ? channelOverrides["toRecipient"] : context.payload["phone"];
    const address = typeof preferred === "string" && preferred ? preferred : isEmail ? context.subscriber.email : context.subscriber.phone;
    const integration = await context.integrationFor(identifier ? `${type}:${identifier}` : type);
    if (address && isEmail) message.email = address;
    if (address && !isEmail) message.phone = address;
    if (integration) message.providerId = integration.providerId;
    // As in Novu, a v1 text that renders empty fails the step before the address and the integration
    // count; a v2 step's is sent as rendered, even empty. Novu records no errorId: this is its event's name.
    if (!isEmail && context.render.engine === TemplateEngine.HANDLEBARS && textOf(message) === "") {
      return [settle(message, { status: MessageStatus.ERROR, errorId: "message_content_failed", errorText: "Message content could not be generated" })];
    }
    if (!address) {
      return [
        settle(
          message,
          isEmail
            ? warning("mail_unexpected_error", "Subscriber does not have an email address")
            : warning("no_subscriber_phone", "Subscriber does not have active phone"),
        ),
      ];
    }
    if (!integration) {
      return [settle(message, { status: MessageStatus.ERROR, errorId: "no_active_integration", errorText: `There is no active ${type} integration` })];
    }
    // An SMS integration without a sender is still sent with, as Novu sends it: SNS has none, and
    // a provider that needs one answers why it refused.
    return [{ message, delivery: { integration, content: isEmail ? emailContent(message, context, senderName) : smsContent(message, context) } }];
  }

  const kinds = channel === Channel.CHAT ? CHAT_PROVIDER_IDS : PUSH_PROVIDER_IDS;
  // As in Novu, a chat step goes to the subscriber's endpoints first, then to their channels.
  const composed: Composed[] = channel === Channel.CHAT ? await endpointMessages(message, context, identifier) : [];
  const fromChannels = composed.length;
  // What every push send of the step carries alike: made at its first send, for all of the subscriber's channels.
  let pushShared: SharedPush | undefined;
  const sharedPush = () =>
    (pushShared ??= {
      subscriber: definedFields(subscriberVariables(context.subscriber)),
      ...(Object.keys(context.digest).length > 0 ? { step: stepOfPush(context.digest) } : {}),
    });
  /** Whether the step's FCM overrides send to a topic: read at the first push channel, for all of them. */
  let fcmToTopic: boolean | undefined;
  for (const settings of context.subscriber.channels.filter((item) => kinds.has(item.providerId))) {
    const integration = await context.integrationById(settings.integrationId);
    if (!integration?.active || integration.deleted) continue; // Novu skips channels whose integration is gone
    // overrides.<channel>.integrationIdentifier narrows the subscriber's channels to that integration's.
    if (identifier && integration.identifier !== identifier) continue;
    const perChannel = clone(NewMessageSchema, message);
    perChannel.providerId = integration.providerId;
    perChannel.destination = settings.integrationId;
    const credentials = settings.credentials;
    if (channel === Channel.CHAT) {
      composed.push(chatMessage(perChannel, integration, credentials, context, step.stepId));
    } else {
      // As Novu sends them: the provider's overrides may name the devices instead of the subscriber's tokens.
      const named = strings(objectAt(context.overrides, integration.providerId)["deviceTokens"]);
      const tokens = named.length > 0 ? named : (credentials?.deviceTokens ?? []);
      if (tokens.length === 0) continue; // Novu skips a push channel without tokens
      fcmToTopic ??= fcmSendsToTopic(providerDataOf(context.overrides, FCM, step.stepId));
      const perDevice = !(integration.providerId === FCM && fcmToTopic);
      composed.push(...pushMessages(perChannel, integration, tokens, settings.integrationId, context, sharedPush, perDevice));
    }
  }
  if (channel === Channel.CHAT) {
    // The first message to the subscriber's own channels keeps the empty destination, the key every
    // message had before a step told destinations apart: a job written before then and run again
    // (redelivered, or a dead letter replayed) finds that message instead of sending it again.
    // Push devices are keyed by their token alone: a key by position would pass from a device
    // to the next when the first token is removed.
    const first = composed[fromChannels];
    if (first) first.message.destination = "";
    const byPhone = await whatsAppByPhone(message, context, identifier, composed);
    if (byPhone) composed.push(byPhone);
  } else {
    composed.push(...(await fcmByOverrides(message, step, context, identifier, sharedPush)));
  }
  return composed;
}

/** What every push send of a step carries alike. */
type SharedPush = Pick<deliveriesV1.PushContent, "subscriber" | "step">;

/**
 * The push messages to `tokens` through `integration`: as Novu sends them, one per device, each
 * listing every device of the send and sent to its own, so each device has its own outcome,
 * retries and lease; one message when there is no token, or when not `perDevice` (an FCM topic
 * the send goes to instead). `channelIntegrationId` names the subscriber's channel the tokens
 * are from (its dead tokens are removed); empty when they are not theirs.
 */
function pushMessages(
  message: NewMessage,
  integration: integrationsV1.Integration,
  tokens: readonly string[],
  channelIntegrationId: string,
  context: RunContext,
  shared: () => SharedPush,
  perDevice: boolean,
): Composed[] {
  const devices = [...new Set(tokens)];
  message.deviceTokens = devices;
  const pushTo = (target: NewMessage, deviceTokens: string[]): Composed => {
    const content = create(deliveriesV1.PushContentSchema, {
      tokens: deviceTokens,
      title: target.title ?? "",
      content: textOf(target),
      payload: context.payload,
      overrides: objectAt(context.overrides, integration.providerId) as JsonObject,
      channelIntegrationId,
      ...shared(),
    });
    return { message: target, delivery: { integration, content: { case: "push", value: content } } };
  };
  if (devices.length === 0 || !perDevice) return [pushTo(message, devices)];
  return devices.map((token) => {
    const toDevice = clone(NewMessageSchema, message);
    toDevice.destination = deviceDestination(message.destination, token);
    return pushTo(toDevice, [token]);
  });
}

/**
 * A device's key among a step's messages: its channel's and a digest of its token, which may be
 * longer than an index entry holds.
 */
const deviceDestination = (channelDestination: string, token: string) => `${channelDestination}:${createHash("sha256").update(token).digest("base64url")}`;

const FCM = "fcm";

/**
 * As Novu does, a push step reaches the devices or the topic the trigger's FCM provider overrides
 * name (`tokens`, else `topic`) when the subscriber has no FCM channel of their own (with tokens
 * or not), through the environment's active FCM integration (the one
 * overrides.push.integrationIdentifier names, when it names one).
 */
async function fcmByOverrides(
  message: NewMessage,
  step: workflowsV1.Step,
  context: RunContext,
  identifier: string | undefined,
  shared: () => SharedPush,
): Promise<Composed[]> {
  if (context.subscriber.channels.some((channel) => channel.providerId === FCM)) return [];
  const named = providerDataOf(context.overrides, FCM, step.stepId) ?? {};
  const tokens = Array.isArray(named["tokens"]) ? strings(named["tokens"]) : [];
  if (tokens.length === 0 && !optionalString(named["topic"])) return [];
  const integration = await context.integrationOfProvider(FCM, identifier);
  if (!integration) return [];
  const byOverrides = clone(NewMessageSchema, message);
  byOverrides.providerId = FCM;
  byOverrides.destination = integration.id;
  // As for a subscriber's channel, overrides.fcm.deviceTokens go before the devices named here.
  const deviceTokens = strings(objectAt(context.overrides, FCM)["deviceTokens"]);
  return pushMessages(byOverrides, integration, deviceTokens.length > 0 ? deviceTokens : tokens, "", context, shared, !fcmSendsToTopic(named));
}

const WHATSAPP = "whatsapp-business";

/**
 * A chat message through a subscriber channel's integration: to the payload's webhookUrl or the
 * channel's, or for WhatsApp to the subscriber's phone; a warning when it has nowhere to go.
 */
function chatMessage(
  message: NewMessage,
  integration: integrationsV1.Integration,
  credentials: subscribersV1.ChannelCredentials | undefined,
  context: RunContext,
  stepId: string | undefined,
): Composed {
  const isWhatsApp = integration.providerId === WHATSAPP;
  const phone = context.subscriber.phone;
  // As Novu picks it: the provider overrides' webhookUrl (the step's over the trigger's), then the
  // payload's, then the subscriber's channel's.
  const webhookUrl =
    optionalString(providerDataOf(context.overrides, integration.providerId, stepId)?.["webhookUrl"]) ??
    optionalString(context.payload["webhookUrl"]) ??
    credentials?.webhookUrl;
  if (isWhatsApp ? !phone : !webhookUrl) {
    return settle(
      message,
      isWhatsApp
        ? warning("no_subscriber_chat_phone_number", "Subscriber does not have a phone number")
        : warning("no_subscriber_chat_channel_id", "Subscriber does not have a chat webhook URL"),
    );
  }
  if (webhookUrl) message.directWebhookUrl = webhookUrl;
  const content = create(deliveriesV1.ChatContentSchema, {
    content: textOf(message),
    ...(webhookUrl ? { webhookUrl } : {}),
    ...(credentials?.channel ? { channel: credentials.channel } : {}),
    ...(isWhatsApp && phone ? { phone } : {}),
    ...chatCustomData(message, context),
  });
  return { message, delivery: { integration, content: { case: "chat", value: content } } };
}

/**
 * As Novu does, a chat step reaches a subscriber who has a phone on WhatsApp too, through the
 * environment's active whatsapp-business integration (the one overrides.chat.integrationIdentifier
 * names, when it names one), unless one of their channels or endpoints already goes there.
 */
async function whatsAppByPhone(
  message: NewMessage,
  context: RunContext,
  identifier: string | undefined,
  composed: readonly Composed[],
): Promise<Composed | undefined> {
  if (!context.subscriber.phone || composed.some((item) => item.message.providerId === WHATSAPP)) return undefined;
  const integration = await context.integrationOfProvider(WHATSAPP, identifier);
  if (!integration) return undefined;
  const byPhone = clone(NewMessageSchema, message);
  byPhone.providerId = WHATSAPP;
  byPhone.destination = integration.id;
  return chatMessage(byPhone, integration, undefined, context, undefined);
}

/**
 * Where an endpoint of each type sends: a webhook, a phone, or a Slack or Teams conversation
 * through its connection (Slack's token, Teams' tenant).
 */
function endpointTarget(endpoint: subscribersV1.ChannelEndpoint, contextKeys: readonly string[]) {
  const data = (endpoint.endpoint ?? {}) as Record<string, string | undefined>;
  switch (endpoint.type) {
    case "webhook":
      return { webhookUrl: data["url"], ...(data["channel"] ? { channel: data["channel"] } : {}) };
    case "phone":
      return { phone: data["phoneNumber"] };
    default: {
      const direct = endpoint.type === "slack_user" || endpoint.type === "ms_teams_user";
      return {
        conversation: direct ? data["userId"] : data["channelId"],
        direct,
        ...(data["teamId"] ? { teamId: data["teamId"] } : {}),
        ...(endpoint.connectionIdentifier !== undefined ? { connectionIdentifier: endpoint.connectionIdentifier } : {}),
        contextKeys: [...contextKeys],
      };
    }
  }
}

/**
 * A chat step's messages to the subscriber's channel endpoints: one per endpoint whose integration
 * is active (Novu skips the others), narrowed by overrides.chat.integrationIdentifier as channels are.
 */
async function endpointMessages(message: NewMessage, context: RunContext, identifier: string | undefined): Promise<Composed[]> {
  const composed: Composed[] = [];
  for (const endpoint of context.chatEndpoints) {
    if (identifier && endpoint.integrationIdentifier !== identifier) continue;
    const integration = await context.integrationFor(`chat:${endpoint.integrationIdentifier}`);
    if (!integration?.active || integration.deleted) continue;
    const perEndpoint = clone(NewMessageSchema, message);
    perEndpoint.providerId = integration.providerId;
    perEndpoint.destination = `endpoint:${endpoint.identifier}`;
    const target = endpointTarget(endpoint, context.contextKeys);
    if ("conversation" in target && target.connectionIdentifier === undefined) {
      composed.push(
        settle(perEndpoint, {
          status: MessageStatus.ERROR,
          errorId: "chat_connection_missing",
          errorText: `The ${endpoint.type} endpoint "${endpoint.identifier}" names no channel connection to post with`,
        }),
      );
      continue;
    }
    if ("webhookUrl" in target && target.webhookUrl) perEndpoint.directWebhookUrl = target.webhookUrl;
    const content = create(deliveriesV1.ChatContentSchema, { content: textOf(perEndpoint), ...target, ...chatCustomData(perEndpoint, context) });
    composed.push({ message: perEndpoint, delivery: { integration, content: { case: "chat", value: content } } });
  }
  return composed;
}
