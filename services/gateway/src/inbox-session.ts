import { Code, ConnectError } from "@connectrpc/connect";
import type { subscribersV1 } from "@notify/proto";
import { contextKeysOf, type Scope } from "@notify/runtime";
import { canonicalize } from "@tufjs/canonical-json";
import { HttpError, isCode } from "./errors.js";
import { defaultScheduleRequestOf, sessionProfile, sessionSubscriberId, sessionToJson, type SessionBody } from "./mappers/inbox-session.js";
import { contextInputsOf } from "./mappers/context-inputs.js";
import { INBOX_COUNT_CAP } from "./mappers/inbox.js";
import { fieldsOf, type Profile } from "./mappers/subscribers.js";
import type { Clients } from "./clients.js";
import type { WidgetSessionBody } from "./mappers/widgets.js";
import type { PublicRouteInput, RouteCall } from "./route.js";
import { keyString, parseOrThrow } from "./validation.js";

const PRODUCTION = "production";

/**
 * Whether the environment requires a subscriberHash: its active in_app integration says so with
 * `credentials.hmac`. Without an active in_app integration (deactivated: every environment gets
 * one on its first call) nothing requires one, since a 404 would lock every browser out.
 */
async function hmacRequired(clients: Clients, call: RouteCall): Promise<boolean> {
  const { integration } = await clients.integrations.selectIntegration({ channel: "in_app" }, call);
  return integration?.credentials?.hmac === true;
}

/**
 * The session's subscriber. Its profile fields are written only with a valid subscriberHash;
 * without one the subscriber is only created, with those fields, if it does not exist yet (a
 * browser cannot prove who it is, so it must not change a known subscriber).
 */
async function subscriberOf(clients: Clients, call: RouteCall, subscriberId: string, profile: Profile, verified: boolean) {
  const fields = fieldsOf(profile);
  const { subscribers, batched } = clients;
  if (verified && Object.keys(fields).length > 0) return (await subscribers.upsertSubscriber({ subscriberId, fields }, call)).subscriber!;
  const existing = async () => batched.getSubscriber(subscriberId, call);
  try {
    return await existing();
  } catch (error) {
    if (!isCode(error, Code.NotFound)) throw error;
  }
  try {
    return (await subscribers.upsertSubscriber({ subscriberId, fields, failIfExists: true }, call)).subscriber!;
  } catch (error) {
    // Created meanwhile by a concurrent session.
    if (isCode(error, Code.AlreadyExists)) return existing();
    throw error;
  }
}

/** POST /v1/inbox/session (inbox-protocol §2.3). */
export async function startSession(input: PublicRouteInput<unknown, unknown, SessionBody>) {
  const { body, accounts } = input;
  const environment = body.applicationIdentifier ? await accounts.environments.byIdentifier(body.applicationIdentifier) : undefined;
  if (!environment) throw new HttpError(400, "Please provide a valid application identifier");
  const scope: Scope = { organizationId: environment.organizationId, environmentId: environment.id };
  const call = input.callAs(scope);
  const subscriberId = parseOrThrow(keyString("subscriberId"), sessionSubscriberId(body));
  const contexts = body.context ? contextInputsOf(body.context) : [];
  const [required, verified, contextVerified] = await Promise.all([
    hmacRequired(input.clients, call),
    body.subscriberHash ? accounts.environments.hmacValid(environment.id, subscriberId, body.subscriberHash) : false,
    // What the client signed: the context as it sent it, as canonical JSON.
    contexts.length > 0 && body.contextHash ? accounts.environments.hmacValid(environment.id, canonicalize(body.context), body.contextHash) : false,
  ]);
  if (required && !verified) throw new HttpError(400, "Please provide a valid HMAC hash");
  if (required && contexts.length > 0 && !contextVerified) throw new HttpError(400, "Please provide a valid context HMAC hash");
  const subscriber: subscribersV1.Subscriber = await subscriberOf(input.clients, call, subscriberId, sessionProfile(body), verified);
  const contextKeys = contextKeysOf(contexts);
  const [token, bells] = await Promise.all([
    accounts.sessions.issue({ scope, subscriberId, subscriberDbId: subscriber.id, contextKeys }),
    input.clients.messages.batchGetInboxCounts({ subscriberIds: [subscriberId], limit: INBOX_COUNT_CAP, contextKeys }, call),
    body.defaultSchedule
      ? input.clients.subscribers.setDefaultSchedule({ ...defaultScheduleRequestOf(subscriberId, body.defaultSchedule), contextKeys }, call)
      : undefined,
    // Contexts are created when a session first names them, as when a trigger does.
    contexts.length > 0 ? input.clients.contexts.ensureContexts({ contexts }, call) : undefined,
  ]);
  const bell = bells.results[0]?.result;
  if (bell?.case !== "counts") throw new ConnectError(bell?.value?.message ?? "no counts", bell?.value?.code ?? Code.Internal);
  const { unread, unreadHigh, unreadMedium, unreadLow, unreadNone } = bell.value;
  return sessionToJson({
    token,
    counts: {
      total: unread?.count ?? 0,
      severity: { high: unreadHigh?.count ?? 0, medium: unreadMedium?.count ?? 0, low: unreadLow?.count ?? 0, none: unreadNone?.count ?? 0 },
    },
    isDevelopmentMode: environment.name.toLowerCase() !== PRODUCTION,
    maxSnoozeDurationHours: accounts.inbox.maxSnoozeDurationHours,
    applicationIdentifier: environment.identifier,
    contextKeys,
  });
}

/**
 * POST /v1/widgets/session/initialize: a Notification Center session (@novu/headless,
 * @novu/notification-center), as the Inbox's but without contexts; its token serves the widget
 * routes and the live socket.
 */
export async function startWidgetSession({ body, accounts, clients, callAs }: PublicRouteInput<unknown, unknown, WidgetSessionBody>) {
  const environment = await accounts.environments.byIdentifier(body.applicationIdentifier);
  if (!environment) throw new HttpError(400, "Please provide a valid app identifier");
  const scope: Scope = { organizationId: environment.organizationId, environmentId: environment.id };
  const call = callAs(scope);
  const { subscriberId, hmacHash, applicationIdentifier: _, ...profile } = body;
  const [required, verified] = await Promise.all([
    hmacRequired(clients, call),
    hmacHash ? accounts.environments.hmacValid(environment.id, subscriberId, hmacHash) : false,
  ]);
  if (required && !verified) throw new HttpError(400, "Please provide a valid HMAC hash");
  const subscriber = await subscriberOf(clients, call, subscriberId, profile, verified);
  const token = await accounts.sessions.issue({ scope, subscriberId, subscriberDbId: subscriber.id, contextKeys: [] });
  return {
    token,
    profile: {
      _id: subscriber.id,
      ...(subscriber.firstName !== undefined ? { firstName: subscriber.firstName } : {}),
      ...(subscriber.lastName !== undefined ? { lastName: subscriber.lastName } : {}),
      ...(subscriber.phone !== undefined ? { phone: subscriber.phone } : {}),
    },
  };
}
