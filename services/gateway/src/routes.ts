import type { SubscriberSession } from "./sessions.js";
import { Code, ConnectError } from "@connectrpc/connect";
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { messagesV1, subscribersV1, workflowsV1 } from "@notify/proto";
import { isObjectId } from "@notify/runtime";
import { stepLayoutId } from "@notify/templates";
import { z } from "zod";
import { HttpError, isCode } from "./errors.js";
import {
  createVariableBody,
  createVariableRequestOf,
  listVariablesQuery,
  previewEnvironment,
  updateVariableBody,
  updateVariableRequestOf,
  variableKeyParam,
  variableResponse,
  variableToJson,
} from "./mappers/environment-variables.js";
import {
  connectionIdentifierParam,
  connectionPageResponse,
  connectionResponse,
  connectionToJson,
  createConnectionBody,
  listConnectionsQuery,
  listConnectionsRequestOf,
  updateConnectionBody,
  updateConnectionRequestOf,
} from "./mappers/channel-connections.js";
import { createConnection } from "./channel-connections.js";
import {
  createInboxConnection,
  createInboxEndpoint,
  deleteInboxConnection,
  deleteInboxEndpoint,
  getInboxConnection,
  getInboxEndpoint,
  listInboxConnections,
  listInboxEndpoints,
} from "./inbox-channels.js";
import {
  inboxConnectionPageResponse,
  inboxConnectionQuery,
  inboxConnectionResponse,
  inboxEndpointPageResponse,
  inboxEndpointResponse,
} from "./mappers/inbox-channels.js";
import {
  createEndpointBody,
  endpointIdentifierParam,
  endpointPageResponse,
  endpointResponse,
  endpointToJson,
  listEndpointsQuery,
  listEndpointsRequestOf,
  updateEndpointBody,
} from "./mappers/channel-endpoints.js";
import { createEndpoint, updateEndpoint } from "./channel-endpoints.js";
import {
  cursorPage,
  offsetPage,
  offsetPageText,
  cursorPageResponse,
  offsetPageResponse,
  workflowUsageResponse,
  workflowUsageToJson,
} from "./mappers/common.js";
import {
  bulkCreatedToJson,
  bulkSubscribersBody,
  createSubscriberBody,
  createSubscriberV1Body,
  credentialsBody,
  credentialsProviderParams,
  credentialsRequestOf,
  deletedResult,
  fieldsOf,
  listSubscribersQuery,
  onlineStatusBody,
  searchRequestOf,
  searchSubscribersQuery,
  subscriberIdParam,
  subscriberToJson,
  updateSubscriberBody,
  updateSubscriberV1Body,
  v1UpdateOf,
  v1Cleared,
  v1WriteOf,
  v2Cleared,
  bulkCreatedResponse,
  deletedResponse,
  subscriberResponse,
} from "./mappers/subscribers.js";
import {
  bulkPreferencesBody,
  bulkPreferencesRequestOf,
  preferencesQuery,
  preferencesToJson,
  updatePreferencesBody,
  updatePreferencesRequestOf,
  preferencesResponse,
} from "./mappers/preferences.js";
import {
  channelChoicesOf,
  globalPreferenceV1Body,
  globalPreferenceV1ToJson,
  preferenceLevelParams,
  preferencesV1Query,
  workflowPreferenceParams,
  workflowPreferenceV1Body,
  workflowPreferenceV1ToJson,
  globalPreferenceV1Response,
  preferencesByLevelV1Response,
  workflowPreferencesV1Response,
  workflowPreferenceV1Response,
} from "./mappers/preferences-v1.js";
import {
  inboxBulkPreferencesBody,
  inboxBulkRequestOf,
  inboxGlobalToJson,
  inboxPreferenceBody,
  inboxPreferencesQuery,
  inboxPreferencesToJson,
  inboxUpdateRequestOf,
  inboxWorkflowParam,
  updatedWorkflowsToJson,
  inboxGlobalResponse,
  inboxPreferencesResponse,
  inboxWorkflowResponse,
  updatedWorkflowsResponse,
} from "./mappers/inbox-preferences.js";
import {
  actedMessageText,
  channelOf,
  deleteTransactionQuery,
  feedQuery,
  feedText,
  templateSummary,
  listedMessagesText,
  legacyMarkAsBody,
  listMessagesQuery,
  contextKeysQuery,
  markAllBody,
  markAsBody,
  marksOf,
  messageActionBody,
  messageActionParams,
  messageIdParam,
  markedMessagesText,
  transactionIdParam,
  unseenQuery,
  messagePageResponse,
  messageResponse,
  messagesResponse,
} from "./mappers/messages.js";
import { createFeedBody, feedIdParam, feedResourceToJson, feedsToJson, feedResponse, feedsResponse } from "./mappers/feeds.js";
import {
  actionBody,
  bulkBody,
  countQuery,
  checkSnoozeBound,
  INBOX_ACTION_ROUTES,
  INBOX_BULK_ROUTES,
  INBOX_COUNT_CAP,
  refuseUnreadArchived,
  INBOX_STATE_ROUTES,
  inboxFilterOf,
  inboxPageToJson,
  listFilterToJson,
  listQuery,
  notificationIdParam,
  snoozeBody,
  subscriberNotificationActionParams,
  subscriberNotificationParams,
  updatedNotificationToJson,
  inboxCountResponse,
  inboxNotificationResponse,
  inboxPageResponse,
} from "./mappers/inbox.js";
import { createNotificationGroupBody, notificationGroupIdParam, notificationGroupToJson, notificationGroupResponse } from "./mappers/notification-groups.js";
import {
  createTenantBody,
  createTenantRequestOf,
  listTenantsQuery,
  tenantIdentifierParam,
  tenantPage,
  tenantToJson,
  updateTenantBody,
  updateTenantRequestOf,
  tenantPageResponse,
  tenantResponse,
} from "./mappers/tenants.js";
import {
  createWorkflowOverrideBody,
  createWorkflowOverrideRequestOf,
  listWorkflowOverridesQuery,
  overrideIdParam,
  updateWorkflowOverrideBody,
  updateWorkflowOverrideRequestOf,
  workflowOverridePage,
  workflowOverridePageResponse,
  workflowOverrideResponse,
  workflowOverrideToJson,
  workflowTenantParams,
} from "./mappers/workflow-overrides.js";
import {
  contextKeyParam,
  contextPageResponse,
  contextResponse,
  contextToJson,
  createContextBody,
  createContextRequestOf,
  listContextsQuery,
  listContextsRequestOf,
  updateContextBody,
} from "./mappers/contexts.js";
import {
  WORKFLOW_BODY_LIMIT,
  createWorkflowBody,
  createWorkflowRequestOf,
  listWorkflowsQuery,
  updateWorkflowBody,
  updateWorkflowRequestOf,
  workflowIdParam,
  workflowPage,
  workflowStatusBody,
  workflowToJson,
  workflowPageResponse,
  workflowResponse,
} from "./mappers/workflows.js";
import {
  createWorkflowV2Body,
  createWorkflowV2RequestOf,
  getWorkflowV2Query,
  listWorkflowsV2Query,
  listWorkflowsV2RequestOf,
  patchWorkflowV2Body,
  patchWorkflowV2RequestOf,
  stepOf,
  stepToJson,
  stepWithControlValues,
  syncWorkflowBody,
  updateWorkflowV2Body,
  updateWorkflowV2RequestOf,
  workflowStepParams,
  workflowV2PageToJson,
  workflowV2ToJson,
  stepV2Response,
  workflowV2PageResponse,
  workflowV2Response,
} from "./mappers/workflows-v2.js";
import { stepPreview, stepPreviewBody, stepPreviewResponse } from "./mappers/step-preview.js";
import {
  createLayoutBody,
  contentOf,
  duplicateLayoutBody,
  layoutIdParam,
  layoutListResponse,
  layoutPreview,
  layoutPreviewBody,
  layoutPreviewResponse,
  layoutResponse,
  layoutToJson,
  listLayoutsQuery,
  listLayoutsRequestOf,
  updateLayoutBody,
  updateLayoutRequestOf,
} from "./mappers/layouts.js";
import {
  createdLegacyLayoutResponse,
  createLegacyLayoutBody,
  createLegacyLayoutRequestOf,
  legacyLayoutIdParam,
  legacyLayoutPageResponse,
  legacyLayoutResponse,
  legacyLayoutToJson,
  listLegacyLayoutsQuery,
  listLegacyLayoutsRequestOf,
  updateLegacyLayoutBody,
  updateLegacyLayoutRequestOf,
} from "./mappers/legacy-layouts.js";
import { callInEnvironment, diffWorkflows, environmentIdNamed, publishWorkflows, syncWorkflow } from "./workflow-environments.js";
import {
  chatConnectionBody,
  createIntegrationBody,
  createRequestOf,
  integrationIdentifierParam,
  integrationIdParam,
  integrationsToJson,
  integrationToJson,
  mobileLinkBody,
  refusedResponse,
  refuseForProvider,
  autoConfigureResponse,
  subscriberChatConnectionBody,
  updateIntegrationBody,
  updateRequestOf,
  integrationResponse,
  integrationsResponse,
} from "./mappers/integrations.js";
import {
  addSubscribersRequestOf,
  createSubscriptionsBody,
  createTopicBody,
  deleteSubscriptionsBody,
  identifierNotFound,
  listedSubscriptionToJson,
  listSubscriptionsQuery,
  listSubscriptionsRequestOf,
  listTopicsQuery,
  renameTopicBody,
  searchTopicsQuery,
  searchTopicsRequestOf,
  subscriberNotFound,
  subscriberSubscriptionsQuery,
  subscriberSubscriptionsRequestOf,
  subscriberSubscriptionsToJson,
  subscriptionDetailsToJson,
  subscriptionIdentifierParams,
  subscriptionConflict,
  subscriptionNotFound,
  subscriptionResponse,
  subscriptionsResult,
  subscriptionToJson,
  topicKeyParam,
  topicResponseToJson,
  topicSubscriberParams,
  topicSubscribersBody,
  topicSubscriberToJson,
  topicToJson,
  updateSubscriptionBody,
  upsertTopicBody,
  upsertTopicQuery,
  listedSubscriptionPageResponse,
  subscriptionDetailsResponse,
  subscriptionsResultResponse,
  topicResponse,
  topicSubscriberResponse,
  topicV1Response,
} from "./mappers/topics.js";
import {
  broadcastBody,
  broadcastEventOf,
  bulkOutcome,
  bulkTriggerBody,
  eventOf,
  singleOutcome,
  broadcastOutcome,
  triggerBody,
  triggerResultResponse,
} from "./mappers/triggers.js";
import { autoConfigure, receiveProviderEvents, webhookSupport } from "./provider-events.js";
import { executionDetailsQuery, executionDetailToJson, executionDetailResponse } from "./mappers/execution-details.js";
import { inboundWebhookParams, webhookResultResponse } from "./mappers/provider-events.js";
import {
  activityPageToJson,
  activityStatsToJson,
  activityToJson,
  graphStatsQuery,
  graphStatsToJson,
  listNotificationsQuery,
  listNotificationsRequestOf,
  activityIdParam,
  activityPageResponse,
  activityResponse,
  activityStatsResponse,
  graphStatsResponse,
} from "./mappers/activity.js";
import {
  apiKeysResponse,
  apiKeysToJson,
  createdEnvironmentResponse,
  createdEnvironmentToJson,
  createEnvironmentBody,
  diffBody,
  diffResponse,
  environmentIdParam,
  environmentResponse,
  environmentToJson,
  parentIdOf,
  publishBody,
  publishOutcomeToJson,
  publishParams,
  publishResponse,
  tagsResponse,
  tagsToJson,
  updateEnvironmentBody,
  workflowDiffToJson,
} from "./mappers/environments.js";
import { sessionBody, sessionResponse } from "./mappers/inbox-session.js";
import { brandingBody, brandingResponse, brandingToJson, organizationResponse, organizationToJson, renameOrganizationBody } from "./mappers/organizations.js";
import {
  countResponse,
  feedCountQuery,
  markAllWidgetBody,
  removeAllMessagesQuery,
  removeMessagesBody,
  unreadCountQuery,
  unseenCountQuery,
  usageLogBody,
  usageLogResponse,
  widgetMessageParams,
  widgetOrganizationResponse,
  widgetPreferenceLevelParams,
  widgetGlobalPreferenceBody,
  widgetSessionBody,
  widgetSessionResponse,
  widgetWorkflowParams,
  widgetWorkflowPreferenceBody,
} from "./mappers/widgets.js";
import {
  contextKeysFor,
  inboxSubscriptionToJson,
  ownedSubscription,
  preferenceWorkflows,
  resolvePreferences,
  sessionSubscription,
  sessionSubscriptions,
  setSubscriptionPreference,
  updateSubscription,
} from "./topic-subscriptions.js";
import {
  deletedSubscriptionResponse,
  inboxCreateSubscriptionBody,
  inboxSubscriptionPreferenceBody,
  inboxSubscriptionPreferenceParams,
  inboxSubscriptionPreferenceResponse,
  inboxSubscriptionQuery,
  inboxUpdateSubscriptionBody,
} from "./mappers/inbox-subscriptions.js";
import { startSession, startWidgetSession } from "./inbox-session.js";
import { MIB } from "./body.js";
import type { Clients } from "./clients.js";
import type { Accounts } from "./environments.js";
import { JsonBytes, jsonOnce, NO_CONTENT, route, type InboxRouteInput, type Route, type RouteCall, type RouteInput, type Sensitive } from "./route.js";
import { keyString, parseOrThrow, queryBool } from "./validation.js";

// Handlers that v1 and v2 share.
const getSubscriber = async ({ params, clients, call }: RouteInput<z.infer<typeof subscriberIdParam>, unknown, unknown>) =>
  subscriberToJson(await clients.batched.getSubscriber(params.subscriberId, call));

/** Topics GET /v1/subscribers/{id}?includeTopics=true names at most. */
const MAX_INCLUDED_TOPICS = 1_000;

/** The keys of the topics a subscriber is in, of any context, as Novu's includeTopics lists them. */
async function topicKeysOf(subscriberId: string, clients: Clients, call: RouteCall): Promise<string[]> {
  const keys = new Set<string>();
  let after: string | undefined;
  do {
    const page = await clients.topics.listSubscriberSubscriptions({ subscriberId, limit: 100, anyContext: true, ...(after ? { after } : {}) }, call);
    for (const topic of page.topics) keys.add(topic.key);
    after = page.next;
  } while (after !== undefined && keys.size < MAX_INCLUDED_TOPICS);
  return [...keys].slice(0, MAX_INCLUDED_TOPICS);
}

/**
 * The subscribers service makes its topic memberships end too, and its messages go when asked (as
 * Novu's v2 delete does and its v1 delete does not), through a job it publishes with the delete.
 */
const deleteSubscriber =
  (deleteMessages: boolean) =>
  async ({ params, clients, call }: RouteInput<z.infer<typeof subscriberIdParam>, unknown, unknown>) => {
    await clients.subscribers.deleteSubscriber({ subscriberId: params.subscriberId, deleteMessages }, call);
    return deletedResult;
  };

/** Integration responses carry decrypted credentials: the idempotency cache keeps the id, and a replay reads the integration again. */
const integrationOutcome: Sensitive<unknown, unknown, unknown, ReturnType<typeof integrationToJson>> = {
  ref: (integration) => integration._id,
  replay: async (id, { clients, call }) => integrationToJson(await clients.integrations.getIntegration({ id }, call)),
};

/** The environment's integration with this identifier; 404 when it has none. */
async function integrationByIdentifier(identifier: string, clients: Clients, call: RouteCall) {
  const { integrations } = await clients.integrations.listIntegrations({}, call);
  const integration = integrations.find((candidate) => candidate.identifier === identifier);
  if (!integration) throw new HttpError(404, `Integration with identifier ${identifier} not found`);
  return integration;
}

const createdEnvironmentOutcome: Sensitive<unknown, unknown, unknown, ReturnType<typeof createdEnvironmentToJson>> = {
  ref: (created) => `${created._id}:${created.apiKeys[0]!._userId}`,
  replay: async (ref, { scope, accounts }) => {
    const [environmentId = "", keyId = ""] = ref.split(":");
    const created = await accounts.environments.createdAgain(scope.organizationId, environmentId, keyId);
    if (!created) throw new HttpError(404, `Environment ${environmentId} not found`);
    return createdEnvironmentToJson(created, parentIdOf(await accounts.environments.listOfOrganization(scope.organizationId)));
  },
};

/**
 * Whose in-app notifications a route reads or changes: a session's subscriber's, only those of
 * its contexts; or, through the API, any subscriber's, of every context unless the call names some.
 */
interface InboxOwner {
  subscriberId: string;
  contextKeys: string[];
  anyContext: boolean;
}

const sessionInbox = (session: SubscriberSession): InboxOwner => ({ subscriberId: session.subscriberId, contextKeys: session.contextKeys, anyContext: false });
const apiInbox = (subscriberId: string, contextKeys?: string[]): InboxOwner => ({
  subscriberId,
  contextKeys: contextKeys ?? [],
  anyContext: contextKeys === undefined,
});

/**
 * One subscriber's in-app notifications, as the Inbox reads and changes its session's subscriber's
 * and the API (/v2/subscribers/{subscriberId}/notifications) any subscriber's.
 */
async function listNotifications(
  { subscriberId, ...contexts }: InboxOwner,
  { query, clients, call }: RouteInput<unknown, z.output<typeof listQuery>, unknown>,
) {
  refuseUnreadArchived(query);
  const reply = await clients.batched.inboxPage(
    {
      subscriberId,
      filter: { ...inboxFilterOf(query), ...contexts },
      limit: query.limit,
      offset: query.offset,
      ...(query.after !== undefined ? { after: query.after } : {}),
    },
    call,
  );
  return inboxPageToJson(reply, listFilterToJson(query));
}

async function countNotifications(
  { subscriberId, ...contexts }: InboxOwner,
  { query, clients, call }: RouteInput<unknown, z.output<typeof countQuery>, unknown>,
) {
  for (const filter of query.filters) refuseUnreadArchived(filter.parsed);
  const reply = await clients.messages.countInboxMessages(
    { subscriberId, filters: query.filters.map((filter) => ({ ...inboxFilterOf(filter.parsed), ...contexts })), limit: INBOX_COUNT_CAP },
    call,
  );
  return { data: reply.counts.map((count, index) => ({ count: count.count, filter: query.filters[index]!.raw })) };
}

type NotificationChange = Pick<MessageInitShape<typeof messagesV1.UpdateInboxMessageRequestSchema>, "change" | "snoozeUntil" | "actionType">;

async function changeNotification(owner: InboxOwner, messageId: string, change: NotificationChange, { clients, call }: RouteInput<unknown, unknown, unknown>) {
  return updatedNotificationToJson(await clients.messages.updateInboxMessage({ ...owner, messageId, ...change }, call));
}

const snoozeChange = ({ body, accounts }: RouteInput<unknown, unknown, z.output<typeof snoozeBody>>): NotificationChange => ({
  change: messagesV1.InboxChange.SNOOZE,
  snoozeUntil: checkSnoozeBound(body.snoozeUntil, accounts.inbox.maxSnoozeDurationHours),
});

async function changeNotifications(
  { subscriberId, ...contexts }: InboxOwner,
  change: messagesV1.InboxBulkChange,
  { body, clients, call }: RouteInput<unknown, unknown, z.output<typeof bulkBody>>,
) {
  // No ids named is no notification to change, as Novu takes it; only a body without ids changes all.
  if (body.notificationIds?.length === 0) return;
  await clients.messages.bulkUpdateInboxMessages(
    { subscriberId, change, messageIds: body.notificationIds ?? [], filter: { ...inboxFilterOf(body), ...contexts } },
    call,
  );
}

async function deleteNotification(owner: InboxOwner, messageId: string, { clients, call }: RouteInput<unknown, unknown, unknown>) {
  await clients.messages.deleteInboxMessage({ ...owner, messageId }, call);
}

/**
 * One subscriber's v1 in-app feed and preferences, which Novu serves twice: through the API for
 * any subscriber (/v1/subscribers/{subscriberId}/…, @novu/node) and to a Notification Center
 * session for its own (/v1/widgets/…, @novu/headless and @novu/notification-center).
 */
async function markMessagesAs(subscriberId: string, { body, clients, call }: RouteInput<unknown, unknown, z.output<typeof markAsBody>>) {
  const reply = await clients.messages.markMessages({ subscriberId, messageIds: body.messageId, markAs: body.markAs }, call);
  return new JsonBytes(markedMessagesText(reply));
}

async function legacyMarkMessagesAs(subscriberId: string, { body, clients, call }: RouteInput<unknown, unknown, z.output<typeof legacyMarkAsBody>>) {
  let reply: messagesV1.MarkMessagesResponse | undefined;
  for (const markAs of marksOf(body.mark)) reply = await clients.messages.markMessages({ subscriberId, messageIds: body.messageId, markAs }, call);
  return new JsonBytes(markedMessagesText(reply!));
}

async function actOnMessage(
  subscriberId: string,
  { params, body, clients, call }: RouteInput<Omit<z.output<typeof messageActionParams>, "subscriberId">, unknown, z.output<typeof messageActionBody>>,
) {
  const reply = await clients.messages.updateInboxMessage(
    {
      subscriberId,
      messageId: params.messageId,
      change: body.status,
      actionType: params.type,
      v1Action: true,
      ...(body.payload ? { actionPayload: body.payload as JsonObject } : {}),
    },
    call,
  );
  return new JsonBytes(actedMessageText(reply.message!));
}

async function markAllMessagesAs(
  subscriberId: string,
  markAs: messagesV1.MarkAs,
  feedIdentifiers: string[],
  { clients, call }: RouteInput<unknown, unknown, unknown>,
) {
  const reply = await clients.messages.markAllMessages(
    { subscriberId, markAs, feedIdentifiers },
    { headers: call.headers, signal: call.signal, timeoutMs: MARK_ALL_DEADLINE_MS },
  );
  return reply.changed;
}

/**
 * Who a feed page is for: the API's caller, shown each message's whole workflow; or a
 * subscriber's browser (a Notification Center session), shown only its id and tags.
 */
type FeedReader = "api" | "session";

function feedPageOf(subscriberId: string, { query, clients, call }: RouteInput<unknown, z.output<typeof feedQuery>, unknown>, reader: FeedReader = "api") {
  const templateOf = reader === "session" ? templateSummary : undefined;
  return clients.batched.feedPage(
    {
      subscriberId,
      page: query.page,
      limit: query.limit,
      feedIdentifiers: query.feedIdentifier ?? [],
      ...(query.read !== undefined ? { read: query.read } : {}),
      ...(query.seen !== undefined ? { seen: query.seen } : {}),
      ...(query.payload !== undefined ? { payload: query.payload as JsonObject } : {}),
    },
    call,
    // Callers of one batch asking the same share a reply (coalesce.ts), and so its bytes.
    (reply) => jsonOnce(reply, () => offsetPageText(feedText(reply, templateOf), query.page, query.limit, reply.totalCount, reply.hasMore), reader),
    reader,
  );
}

async function workflowPreferencesV1(subscriberId: string, includeInactiveChannels: boolean, { clients, call }: RouteInput<unknown, unknown, unknown>) {
  return clients.subscribers.getSubscriberPreferences({ subscriberId, criticality: subscribersV1.Criticality.NON_CRITICAL, includeInactiveChannels }, call);
}

async function preferencesByLevelV1(
  subscriberId: string,
  level: "global" | "template",
  includeInactiveChannels: boolean,
  input: RouteInput<unknown, unknown, unknown>,
) {
  const reply = await workflowPreferencesV1(subscriberId, includeInactiveChannels, input);
  return level === "global" ? [globalPreferenceV1ToJson(reply.global)] : reply.workflows.map(workflowPreferenceV1ToJson);
}

async function updateGlobalPreferenceV1(
  subscriberId: string,
  includeInactiveChannels: boolean,
  { body, clients, call }: RouteInput<unknown, unknown, Pick<z.output<typeof globalPreferenceV1Body>, "preferences">>,
) {
  const reply = await clients.subscribers.updateSubscriberPreferences(
    { subscriberId, channels: channelChoicesOf(body.preferences ?? []), includeInactiveChannels },
    call,
  );
  return globalPreferenceV1ToJson(reply.global);
}

async function updateWorkflowPreferenceV1(
  subscriberId: string,
  workflowId: string,
  includeInactiveChannels: boolean,
  { body, clients, call }: RouteInput<unknown, unknown, Pick<z.output<typeof workflowPreferenceV1Body>, "channel">>,
) {
  const reply = await clients.subscribers.updateSubscriberPreferences(
    { subscriberId, workflowId, channels: channelChoicesOf(body.channel ? [body.channel] : []), includeInactiveChannels },
    call,
  );
  const [updatedId] = reply.updatedWorkflowIds;
  const updated = reply.workflows.find((preference) => preference.workflow?.id === updatedId);
  // Stored, but an inactive workflow has no preference to show.
  if (!updated) throw new HttpError(404, `Workflow with id: ${workflowId} is not active`);
  return workflowPreferenceV1ToJson(updated);
}

/** A Notification Center count of the session's subscriber's in-app messages (Novu's stop at 100). */
async function widgetCount(
  { session, clients, call }: Omit<InboxRouteInput<unknown, unknown, unknown>, "query">,
  query: { feedIdentifier?: string[] | undefined; limit: number },
  state: { seen?: boolean; read?: boolean },
) {
  const count = await clients.batched.countUnseen(
    { subscriberId: session.subscriberId, feedIdentifiers: query.feedIdentifier ?? [], limit: query.limit, ...state },
    call,
  );
  return { count };
}

/** The caller's organization; 404 only for a key whose organization was deleted meanwhile, which nothing does yet. */
async function organizationOf(organizationId: string, accounts: Accounts) {
  const organization = await accounts.organizations.byId(organizationId);
  if (!organization) throw new HttpError(404, `Organization with id ${organizationId} not found`);
  return organization;
}

/** The Notification Center's mark-all routes: every unread message read, or every unseen one seen. */
const WIDGET_MARK_ALL_ROUTES = [
  ["read", messagesV1.MarkAs.READ],
  ["seen", messagesV1.MarkAs.SEEN],
] as const;

/** The environment's feed with this _id; 404 when it has none. */
async function feedNamed(feedId: string, clients: Clients, call: RouteCall) {
  const { feeds } = await clients.workflows.listFeeds({}, call);
  if (!feeds.some((feed) => feed.id === feedId)) throw new HttpError(404, `Feed with ${feedId} not found`);
}

/**
 * Mark-all's work grows with the subscriber's messages: for a subscriber with a million of them it
 * can outlast the default RPC deadline on a slow machine, and the client would get a 503 for work
 * that went on to finish. It runs in chunks, holding no lock for long; a hang still ends, at this
 * deadline.
 */
const MARK_ALL_DEADLINE_MS = 10 * 60_000;

/** The digest jobs the messages service resumes per call. */
const RESUMED_DIGESTS_PER_CALL = 1000;

/** THE route table: every public REST route, the RPC it makes and the mapper of its reply. */
export const routes: Route[] = [
  // Subscribers (v1)
  route({
    method: "POST",
    path: "/v1/subscribers",
    response: subscriberResponse,
    body: createSubscriberV1Body,
    handle: async ({ body, clients, call }) => {
      const { subscriberId, ...written } = body;
      const reply = await clients.subscribers.upsertSubscriber({ subscriberId, ...v1WriteOf(written) }, call);
      return subscriberToJson(reply.subscriber!);
    },
  }),
  route({
    method: "GET",
    path: "/v1/subscribers",
    response: offsetPageResponse(subscriberResponse),
    envelope: false,
    query: listSubscribersQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.subscribers.listSubscribers({ page: query.page, limit: query.limit }, call);
      return offsetPage(reply.subscribers.map(subscriberToJson), query.page, query.limit, reply.totalCount, reply.hasMore);
    },
  }),
  // Before /:subscriberId routes, which would take "bulk" for a subscriber id.
  route({
    method: "POST",
    path: "/v1/subscribers/bulk",
    response: bulkCreatedResponse,
    rateLimit: { cost: "bulk" },
    bodyLimit: 5 * MIB,
    body: bulkSubscribersBody,
    handle: async ({ body, clients, call }) => {
      const reply = await clients.subscribers.ensureSubscribers(
        { subscribers: body.subscribers.map(({ subscriberId, ...profile }) => ({ subscriberId, fields: fieldsOf(profile) })), strict: true },
        call,
      );
      return bulkCreatedToJson(body.subscribers, reply.createdSubscriberIds);
    },
  }),
  route({
    method: "GET",
    path: "/v1/subscribers/:subscriberId",
    params: subscriberIdParam,
    query: z.object({ includeTopics: queryBool.default(false) }),
    response: subscriberResponse,
    handle: async ({ params, query, clients, call }) => {
      const [subscriber, topics] = await Promise.all([
        clients.batched.getSubscriber(params.subscriberId, call),
        query.includeTopics ? topicKeysOf(params.subscriberId, clients, call) : undefined,
      ]);
      return { ...subscriberToJson(subscriber), ...(topics ? { topics } : {}) };
    },
  }),
  route({
    method: "PATCH",
    path: "/v1/subscribers/:subscriberId/online-status",
    response: subscriberResponse,
    params: subscriberIdParam,
    body: onlineStatusBody,
    handle: async ({ params, body, clients, call }) =>
      subscriberToJson(await clients.subscribers.updateSubscriber({ subscriberId: params.subscriberId, fields: { isOnline: body.isOnline } }, call)),
  }),
  route({
    method: "PUT",
    path: "/v1/subscribers/:subscriberId",
    response: subscriberResponse,
    params: subscriberIdParam,
    body: updateSubscriberV1Body,
    handle: async ({ params, body, clients, call }) =>
      subscriberToJson(await clients.subscribers.updateSubscriber({ subscriberId: params.subscriberId, ...v1UpdateOf(body) }, call)),
  }),
  route({ method: "DELETE", path: "/v1/subscribers/:subscriberId", params: subscriberIdParam, response: deletedResponse, handle: deleteSubscriber(false) }),

  // Subscribers (v2, as @novu/api calls them)
  route({
    method: "POST",
    path: "/v2/subscribers",
    response: subscriberResponse,
    query: z.object({ failIfExists: queryBool.default(false) }),
    body: createSubscriberBody,
    handle: async ({ query, body, clients, call }) => {
      const { subscriberId, ...profile } = body;
      try {
        const reply = await clients.subscribers.upsertSubscriber(
          { subscriberId, fields: fieldsOf(profile), cleared: v1Cleared(profile), failIfExists: query.failIfExists },
          call,
        );
        return subscriberToJson(reply.subscriber!);
      } catch (error) {
        if (!(error instanceof ConnectError) || error.code !== Code.AlreadyExists) throw error;
        // The SDK reads a 409 here as the existing subscriber, so the error body carries its fields too.
        const existing = subscriberToJson(await clients.batched.getSubscriber(subscriberId, call));
        throw new HttpError(409, error.rawMessage, existing);
      }
    },
  }),
  route({
    method: "GET",
    path: "/v2/subscribers",
    response: cursorPageResponse(subscriberResponse),
    envelope: false,
    query: searchSubscribersQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.subscribers.searchSubscribers(searchRequestOf(query), call);
      return cursorPage(reply.subscribers.map(subscriberToJson), reply);
    },
  }),
  route({ method: "GET", path: "/v2/subscribers/:subscriberId", params: subscriberIdParam, response: subscriberResponse, handle: getSubscriber }),
  route({
    method: "PATCH",
    path: "/v2/subscribers/:subscriberId",
    response: subscriberResponse,
    params: subscriberIdParam,
    body: updateSubscriberBody,
    handle: async ({ params, body, clients, call }) =>
      subscriberToJson(
        await clients.subscribers.updateSubscriber({ subscriberId: params.subscriberId, fields: fieldsOf(body), cleared: v2Cleared(body) }, call),
      ),
  }),
  route({ method: "DELETE", path: "/v2/subscribers/:subscriberId", params: subscriberIdParam, response: deletedResponse, handle: deleteSubscriber(true) }),
  route({
    method: "GET",
    path: "/v2/subscribers/:subscriberId/subscriptions",
    response: listedSubscriptionPageResponse,
    envelope: false,
    params: subscriberIdParam,
    query: subscriberSubscriptionsQuery,
    handle: async ({ params, query, clients, call }) => {
      const reply = await clients.topics.listSubscriberSubscriptions(subscriberSubscriptionsRequestOf(params.subscriberId, query), call);
      return cursorPage(subscriberSubscriptionsToJson(reply), reply);
    },
  }),

  // Messages: read/seen state, unseen counts, the in-app feed, listing and deletion
  route({
    method: "POST",
    path: "/v1/subscribers/:subscriberId/messages/mark-as",
    response: messagesResponse,
    params: subscriberIdParam,
    body: markAsBody,
    handle: (input) => markMessagesAs(input.params.subscriberId, input),
  }),
  route({
    method: "POST",
    path: "/v1/subscribers/:subscriberId/messages/markAs",
    response: messagesResponse,
    params: subscriberIdParam,
    body: legacyMarkAsBody,
    handle: (input) => legacyMarkMessagesAs(input.params.subscriberId, input),
  }),
  route({
    method: "POST",
    path: "/v1/subscribers/:subscriberId/messages/:messageId/actions/:type",
    response: messageResponse,
    params: messageActionParams,
    body: messageActionBody,
    handle: (input) => actOnMessage(input.params.subscriberId, input),
  }),
  route({
    method: "POST",
    path: "/v1/subscribers/:subscriberId/messages/mark-all",
    response: z.int().min(0),
    params: subscriberIdParam,
    body: markAllBody,
    handle: (input) => markAllMessagesAs(input.params.subscriberId, input.body.markAs, input.body.feedIdentifier ?? [], input),
  }),
  route({
    method: "GET",
    path: "/v1/subscribers/:subscriberId/notifications/unseen",
    response: z.object({ count: z.int().min(0) }),
    params: subscriberIdParam,
    query: unseenQuery,
    handle: async ({ params, query, clients, call }) => {
      const count = await clients.batched.countUnseen({ subscriberId: params.subscriberId, seen: query.seen, limit: query.limit }, call);
      return { count };
    },
  }),
  route({
    method: "GET",
    path: "/v1/subscribers/:subscriberId/notifications/feed",
    response: messagePageResponse,
    envelope: false,
    params: subscriberIdParam,
    query: feedQuery,
    handle: (input) => feedPageOf(input.params.subscriberId, input),
  }),
  route({
    method: "GET",
    path: "/v1/messages",
    response: messagePageResponse,
    envelope: false,
    query: listMessagesQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.messages.listMessages(
        {
          page: query.page,
          limit: query.limit,
          channel: channelOf(query.channel),
          ...(query.subscriberId !== undefined ? { subscriberId: query.subscriberId } : {}),
          transactionIds: query.transactionId ?? [],
          contextKeys: query.contextKeys ?? [],
        },
        call,
      );
      return new JsonBytes(offsetPageText(listedMessagesText(reply), query.page, query.limit, reply.totalCount, reply.hasMore));
    },
  }),
  route({
    method: "GET",
    path: "/v1/execution-details",
    response: z.array(executionDetailResponse),
    query: executionDetailsQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.messages.listExecutionDetails({ notificationId: query.notificationId, subscriberId: query.subscriberId }, call);
      return reply.details.map(executionDetailToJson);
    },
  }),
  route({
    method: "DELETE",
    path: "/v1/messages/transaction/:transactionId",
    status: 204,
    params: transactionIdParam,
    query: deleteTransactionQuery,
    handle: async ({ params, query, clients, call }) => {
      await clients.messages.deleteTransactionMessages({ transactionId: params.transactionId, channel: channelOf(query.channel) }, call);
    },
  }),
  route({
    method: "DELETE",
    path: "/v1/messages/:messageId",
    response: deletedResponse,
    params: messageIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.messages.deleteMessage(params, call);
      return deletedResult;
    },
  }),

  // The activity feed: the environment's notifications with their jobs (messages) and execution details
  route({
    method: "GET",
    path: "/v1/notifications",
    response: activityPageResponse,
    envelope: false,
    query: listNotificationsQuery,
    handle: async ({ query, clients, call }) => activityPageToJson(await clients.messages.listNotifications(listNotificationsRequestOf(query), call), query),
  }),
  route({
    method: "GET",
    path: "/v1/notifications/stats",
    response: activityStatsResponse,
    handle: async ({ clients, call }) => activityStatsToJson(await clients.messages.getNotificationStats({}, call)),
  }),
  route({
    method: "GET",
    path: "/v1/notifications/graph/stats",
    response: graphStatsResponse,
    query: graphStatsQuery,
    handle: async ({ query, clients, call }) => graphStatsToJson(await clients.messages.getActivityGraph({ days: query.days }, call)),
  }),
  route({
    method: "GET",
    path: "/v1/notifications/:notificationId",
    response: activityResponse,
    params: activityIdParam,
    handle: async ({ params, clients, call }) => activityToJson(await clients.messages.getNotification(params, call)),
  }),

  // The Inbox's notifications (@novu/js): the session's subscriber's in-app messages only
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/notifications",
    response: inboxPageResponse,
    envelope: false,
    query: listQuery,
    handle: (input) => listNotifications(sessionInbox(input.session), input),
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/notifications/count",
    response: inboxCountResponse,
    envelope: false,
    query: countQuery,
    handle: (input) => countNotifications(sessionInbox(input.session), input),
  }),
  ...INBOX_STATE_ROUTES.map(([name, change]) =>
    route({
      audience: "inbox",
      method: "PATCH",
      path: `/v1/inbox/notifications/:id/${name}`,
      response: inboxNotificationResponse,
      params: notificationIdParam,
      handle: (input) => changeNotification(sessionInbox(input.session), input.params.id, { change }, input),
    }),
  ),
  route({
    audience: "inbox",
    method: "PATCH",
    path: "/v1/inbox/notifications/:id/snooze",
    response: inboxNotificationResponse,
    params: notificationIdParam,
    body: snoozeBody,
    handle: (input) => changeNotification(sessionInbox(input.session), input.params.id, snoozeChange(input), input),
  }),
  ...INBOX_ACTION_ROUTES.map(([name, change]) =>
    route({
      audience: "inbox",
      method: "PATCH",
      path: `/v1/inbox/notifications/:id/${name}`,
      response: inboxNotificationResponse,
      params: notificationIdParam,
      body: actionBody,
      handle: (input) => changeNotification(sessionInbox(input.session), input.params.id, { change, actionType: input.body.actionType }, input),
    }),
  ),
  ...INBOX_BULK_ROUTES.map(([name, change]) =>
    route({
      audience: "inbox",
      method: "POST",
      path: `/v1/inbox/notifications/${name}`,
      status: 204,
      body: bulkBody,
      handle: (input) => changeNotifications(sessionInbox(input.session), change, input),
    }),
  ),
  route({
    audience: "inbox",
    method: "DELETE",
    path: "/v1/inbox/notifications/:id/delete",
    status: 204,
    params: notificationIdParam,
    handle: (input) => deleteNotification(sessionInbox(input.session), input.params.id, input),
  }),

  // The same notifications through the API (@novu/api 3.x's subscribers.notifications), any subscriber's
  route({
    method: "GET",
    path: "/v2/subscribers/:subscriberId/notifications",
    response: inboxPageResponse,
    envelope: false,
    params: subscriberIdParam,
    query: listQuery,
    handle: (input) => listNotifications(apiInbox(input.params.subscriberId, input.query.contextKeys), input),
  }),
  route({
    method: "GET",
    path: "/v2/subscribers/:subscriberId/notifications/count",
    response: inboxCountResponse,
    envelope: false,
    params: subscriberIdParam,
    query: countQuery,
    handle: (input) => countNotifications(apiInbox(input.params.subscriberId), input),
  }),
  ...INBOX_STATE_ROUTES.map(([name, change]) =>
    route({
      method: "PATCH",
      path: `/v2/subscribers/:subscriberId/notifications/:notificationId/${name}`,
      response: inboxNotificationResponse,
      params: subscriberNotificationParams,
      query: contextKeysQuery,
      handle: (input) => changeNotification(apiInbox(input.params.subscriberId, input.query.contextKeys), input.params.notificationId, { change }, input),
    }),
  ),
  route({
    method: "PATCH",
    path: "/v2/subscribers/:subscriberId/notifications/:notificationId/snooze",
    response: inboxNotificationResponse,
    params: subscriberNotificationParams,
    query: contextKeysQuery,
    body: snoozeBody,
    handle: (input) =>
      changeNotification(apiInbox(input.params.subscriberId, input.query.contextKeys), input.params.notificationId, snoozeChange(input), input),
  }),
  ...INBOX_ACTION_ROUTES.map(([name, change]) =>
    route({
      method: "PATCH",
      path: `/v2/subscribers/:subscriberId/notifications/:notificationId/actions/:actionType/${name}`,
      response: inboxNotificationResponse,
      params: subscriberNotificationActionParams,
      query: contextKeysQuery,
      handle: (input) =>
        changeNotification(
          apiInbox(input.params.subscriberId, input.query.contextKeys),
          input.params.notificationId,
          { change, actionType: input.params.actionType },
          input,
        ),
    }),
  ),
  ...INBOX_BULK_ROUTES.map(([name, change]) =>
    route({
      method: "POST",
      path: `/v2/subscribers/:subscriberId/notifications/${name}`,
      status: 204,
      params: subscriberIdParam,
      body: bulkBody,
      handle: (input) => changeNotifications(apiInbox(input.params.subscriberId, input.body.contextKeys), change, input),
    }),
  ),
  route({
    method: "DELETE",
    path: "/v2/subscribers/:subscriberId/notifications/:notificationId",
    status: 204,
    params: subscriberNotificationParams,
    query: contextKeysQuery,
    handle: (input) => deleteNotification(apiInbox(input.params.subscriberId, input.query.contextKeys), input.params.notificationId, input),
  }),

  // Workflows, notification groups, feeds and tenants (the triggers service)
  route({
    method: "POST",
    path: "/v1/workflows",
    response: workflowResponse,
    bodyLimit: WORKFLOW_BODY_LIMIT,
    body: createWorkflowBody,
    handle: async ({ body, clients, call }) => workflowToJson(await clients.workflows.createWorkflow(createWorkflowRequestOf(body), call)),
  }),
  route({
    method: "GET",
    path: "/v1/workflows",
    response: workflowPageResponse,
    envelope: false,
    query: listWorkflowsQuery,
    handle: async ({ query, clients, call }) =>
      workflowPage(
        await clients.workflows.listWorkflows({ page: query.page, limit: query.limit, ...(query.query ? { query: query.query } : {}) }, call),
        query,
      ),
  }),
  route({
    method: "GET",
    path: "/v1/workflows/:workflowId",
    response: workflowResponse,
    params: workflowIdParam,
    handle: async ({ params, clients, call }) => workflowToJson(await clients.workflows.getWorkflow({ key: { case: "any", value: params.workflowId } }, call)),
  }),
  route({
    method: "PUT",
    path: "/v1/workflows/:workflowId",
    response: workflowResponse,
    bodyLimit: WORKFLOW_BODY_LIMIT,
    params: workflowIdParam,
    body: updateWorkflowBody,
    handle: async ({ params, body, clients, call }) =>
      workflowToJson(await clients.workflows.updateWorkflow(updateWorkflowRequestOf(params.workflowId, body), call)),
  }),
  route({
    method: "PUT",
    path: "/v1/workflows/:workflowId/status",
    response: workflowResponse,
    params: workflowIdParam,
    body: workflowStatusBody,
    handle: async ({ params, body, clients, call }) =>
      workflowToJson(await clients.workflows.setWorkflowStatus({ workflowId: params.workflowId, active: body.active }, call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/workflows/:workflowId",
    response: z.literal(true),
    params: workflowIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.workflows.deleteWorkflow(params, call);
      return true;
    },
  }),
  // Workflows, Novu's v2 API: the same catalogue as /v1/workflows, in v2's shapes
  route({
    method: "POST",
    path: "/v2/workflows",
    response: workflowV2Response,
    status: 201,
    bodyLimit: WORKFLOW_BODY_LIMIT,
    body: createWorkflowV2Body,
    handle: async ({ body, clients, call }) => workflowV2ToJson(await clients.workflows.createWorkflow(createWorkflowV2RequestOf(body), call)),
  }),
  route({
    method: "GET",
    path: "/v2/workflows",
    response: workflowV2PageResponse,
    query: listWorkflowsV2Query,
    handle: async ({ query, clients, call }) => {
      const request = listWorkflowsV2RequestOf(query);
      return workflowV2PageToJson(request ? await clients.workflows.listWorkflows(request, call) : { workflows: [], totalCount: 0 });
    },
  }),
  route({
    method: "GET",
    path: "/v2/workflows/:workflowId",
    response: workflowV2Response,
    params: workflowIdParam,
    query: getWorkflowV2Query,
    handle: async (input) =>
      workflowV2ToJson(
        await input.clients.workflows.getWorkflow(
          { key: { case: "any", value: input.params.workflowId } },
          await callInEnvironment(input, input.query.environmentId),
        ),
      ),
  }),
  route({
    method: "PUT",
    path: "/v2/workflows/:workflowId",
    response: workflowV2Response,
    bodyLimit: WORKFLOW_BODY_LIMIT,
    params: workflowIdParam,
    body: updateWorkflowV2Body,
    handle: async ({ params, body, clients, call }) =>
      workflowV2ToJson(await clients.workflows.updateWorkflow(updateWorkflowV2RequestOf(params.workflowId, body), call)),
  }),
  route({
    method: "PATCH",
    path: "/v2/workflows/:workflowId",
    response: workflowV2Response,
    params: workflowIdParam,
    body: patchWorkflowV2Body,
    handle: async ({ params, body, clients, call }) =>
      workflowV2ToJson(await clients.workflows.updateWorkflow(patchWorkflowV2RequestOf(params.workflowId, body), call)),
  }),
  route({
    method: "DELETE",
    path: "/v2/workflows/:workflowId",
    status: 204,
    params: workflowIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.workflows.deleteWorkflow(params, call);
    },
  }),
  route({
    method: "PUT",
    path: "/v2/workflows/:workflowId/sync",
    response: workflowV2Response,
    params: workflowIdParam,
    body: syncWorkflowBody,
    handle: async (input) => workflowV2ToJson(await syncWorkflow(input)),
  }),
  route({
    method: "GET",
    path: "/v2/workflows/:workflowId/steps/:stepId",
    response: stepV2Response,
    params: workflowStepParams,
    handle: async ({ params, clients, call }) => {
      const workflow = await clients.workflows.getWorkflow({ key: { case: "any", value: params.workflowId } }, call);
      return stepToJson(stepOf(workflow, params.stepId), workflow);
    },
  }),
  route({
    method: "POST",
    path: "/v2/workflows/:workflowId/step/:stepId/preview",
    response: stepPreviewResponse,
    params: workflowStepParams,
    body: stepPreviewBody,
    handle: async ({ params, body, clients, call }) => {
      const workflow = await clients.workflows.getWorkflow({ key: { case: "any", value: params.workflowId } }, call);
      const step = stepOf(workflow, params.stepId);
      const previewed = body.controlValues ? stepWithControlValues(step, body.controlValues) : step;
      // An email is previewed in its layout, as it would be sent without overrides.
      const layoutId = stepLayoutId(previewed, workflow.templateEngine, {});
      const [layout, env] = await Promise.all([
        layoutId === undefined ? undefined : clients.layouts.getLayout({ layoutId }, call).then((found) => found.email),
        // Only v2 (liquid) templates read environment variables.
        workflow.templateEngine === workflowsV1.TemplateEngine.LIQUID
          ? clients.variables.listEnvironmentVariables({}, call).then(previewEnvironment)
          : undefined,
      ]);
      return stepPreview(previewed, body.previewPayload ?? {}, workflow.templateEngine, { layout, env });
    },
  }),
  route({
    method: "GET",
    path: "/v1/notification-groups",
    response: z.array(notificationGroupResponse),
    handle: async ({ clients, call }) => (await clients.workflows.listNotificationGroups({}, call)).groups.map(notificationGroupToJson),
  }),
  route({
    method: "POST",
    path: "/v1/notification-groups",
    response: notificationGroupResponse,
    body: createNotificationGroupBody,
    handle: async ({ body, clients, call }) => notificationGroupToJson(await clients.workflows.createNotificationGroup(body, call)),
  }),
  route({
    method: "GET",
    path: "/v1/notification-groups/:id",
    response: notificationGroupResponse,
    params: notificationGroupIdParam,
    handle: async ({ params, clients, call }) => notificationGroupToJson(await clients.workflows.getNotificationGroup(params, call)),
  }),
  route({
    method: "PATCH",
    path: "/v1/notification-groups/:id",
    response: notificationGroupResponse,
    params: notificationGroupIdParam,
    body: createNotificationGroupBody,
    handle: async ({ params, body, clients, call }) =>
      notificationGroupToJson(await clients.workflows.updateNotificationGroup({ id: params.id, name: body.name }, call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/notification-groups/:id",
    response: deletedResponse,
    params: notificationGroupIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.workflows.deleteNotificationGroup(params, call);
      return deletedResult;
    },
  }),
  route({
    method: "GET",
    path: "/v1/feeds",
    response: feedsResponse,
    handle: async ({ clients, call }) => feedsToJson(await clients.workflows.listFeeds({}, call)),
  }),
  route({
    method: "POST",
    path: "/v1/feeds",
    response: feedResponse,
    body: createFeedBody,
    handle: async ({ body, clients, call }) => feedResourceToJson(await clients.workflows.createFeed(body, call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/feeds/:feedId",
    response: feedsResponse,
    params: feedIdParam,
    handle: async ({ params, clients, call }) => feedsToJson(await clients.workflows.deleteFeed({ id: params.feedId }, call)),
  }),
  route({
    method: "POST",
    path: "/v1/tenants",
    response: tenantResponse,
    body: createTenantBody,
    handle: async ({ body, clients, call }) => tenantToJson(await clients.tenants.createTenant(createTenantRequestOf(body), call)),
  }),
  route({
    method: "GET",
    path: "/v1/tenants",
    response: tenantPageResponse,
    envelope: false,
    query: listTenantsQuery,
    handle: async ({ query, clients, call }) => tenantPage(await clients.tenants.listTenants(query, call), query),
  }),
  route({
    method: "GET",
    path: "/v1/tenants/:identifier",
    response: tenantResponse,
    params: tenantIdentifierParam,
    handle: async ({ params, clients, call }) => tenantToJson(await clients.tenants.getTenant(params, call)),
  }),
  route({
    method: "PATCH",
    path: "/v1/tenants/:identifier",
    response: tenantResponse,
    params: tenantIdentifierParam,
    body: updateTenantBody,
    handle: async ({ params, body, clients, call }) => tenantToJson(await clients.tenants.updateTenant(updateTenantRequestOf(params.identifier, body), call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/tenants/:identifier",
    status: 204,
    params: tenantIdentifierParam,
    handle: async ({ params, clients, call }) => {
      await clients.tenants.deleteTenant(params, call);
    },
  }),

  // Workflow overrides: a tenant's settings for one workflow (@novu/node's workflowOverrides)
  route({
    method: "POST",
    path: "/v1/workflow-overrides",
    response: workflowOverrideResponse,
    body: createWorkflowOverrideBody,
    handle: async ({ body, clients, call }) =>
      workflowOverrideToJson(await clients.workflowOverrides.createWorkflowOverride(createWorkflowOverrideRequestOf(body), call)),
  }),
  route({
    method: "GET",
    path: "/v1/workflow-overrides",
    response: workflowOverridePageResponse,
    envelope: false,
    query: listWorkflowOverridesQuery,
    handle: async ({ query, clients, call }) => workflowOverridePage(await clients.workflowOverrides.listWorkflowOverrides(query, call), query),
  }),
  route({
    method: "GET",
    path: "/v1/workflow-overrides/workflows/:workflowId/tenants/:tenantId",
    response: workflowOverrideResponse,
    params: workflowTenantParams,
    handle: async ({ params, clients, call }) =>
      workflowOverrideToJson(await clients.workflowOverrides.getWorkflowOverride({ key: { key: { case: "pair", value: params } } }, call)),
  }),
  route({
    method: "PUT",
    path: "/v1/workflow-overrides/workflows/:workflowId/tenants/:tenantId",
    response: workflowOverrideResponse,
    params: workflowTenantParams,
    body: updateWorkflowOverrideBody,
    handle: async ({ params, body, clients, call }) =>
      workflowOverrideToJson(await clients.workflowOverrides.updateWorkflowOverride(updateWorkflowOverrideRequestOf(params, body), call)),
  }),
  route({
    method: "GET",
    path: "/v1/workflow-overrides/:overrideId",
    response: workflowOverrideResponse,
    params: overrideIdParam,
    handle: async ({ params, clients, call }) =>
      workflowOverrideToJson(await clients.workflowOverrides.getWorkflowOverride({ key: { key: { case: "id", value: params.overrideId } } }, call)),
  }),
  route({
    method: "PUT",
    path: "/v1/workflow-overrides/:overrideId",
    response: workflowOverrideResponse,
    params: overrideIdParam,
    body: updateWorkflowOverrideBody,
    handle: async ({ params, body, clients, call }) =>
      workflowOverrideToJson(await clients.workflowOverrides.updateWorkflowOverride(updateWorkflowOverrideRequestOf({ id: params.overrideId }, body), call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/workflow-overrides/:overrideId",
    response: z.literal(true),
    params: overrideIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.workflowOverrides.deleteWorkflowOverride({ id: params.overrideId }, call);
      return true;
    },
  }),

  // Contexts (v2, as @novu/api calls them)
  route({
    method: "POST",
    path: "/v2/contexts",
    response: contextResponse,
    body: createContextBody,
    handle: async ({ body, clients, call }) => contextToJson(await clients.contexts.createContext(createContextRequestOf(body), call)),
  }),
  route({
    method: "GET",
    path: "/v2/contexts",
    response: contextPageResponse,
    envelope: false,
    query: listContextsQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.contexts.listContexts(listContextsRequestOf(query), call);
      return cursorPage(reply.contexts.map(contextToJson), reply);
    },
  }),
  route({
    method: "GET",
    path: "/v2/contexts/:type/:id",
    response: contextResponse,
    params: contextKeyParam,
    handle: async ({ params, clients, call }) => contextToJson(await clients.contexts.getContext(params, call)),
  }),
  route({
    method: "PATCH",
    path: "/v2/contexts/:type/:id",
    response: contextResponse,
    params: contextKeyParam,
    body: updateContextBody,
    handle: async ({ params, body, clients, call }) => contextToJson(await clients.contexts.updateContext({ ...params, data: body.data as JsonObject }, call)),
  }),
  route({
    method: "DELETE",
    path: "/v2/contexts/:type/:id",
    status: 204,
    params: contextKeyParam,
    handle: async ({ params, clients, call }) => {
      await clients.contexts.deleteContext(params, call);
    },
  }),

  // Layouts (Novu's v2 email layouts)
  route({
    method: "POST",
    path: "/v2/layouts",
    response: layoutResponse,
    body: createLayoutBody,
    handle: async ({ body, clients, call }) =>
      layoutToJson(
        await clients.layouts.createLayout({ identifier: body.layoutId, name: body.name, isTranslationEnabled: body.isTranslationEnabled ?? false }, call),
      ),
  }),
  route({
    method: "GET",
    path: "/v2/layouts",
    response: layoutListResponse,
    query: listLayoutsQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.layouts.listLayouts(listLayoutsRequestOf(query), call);
      return { layouts: reply.layouts.map((layout) => layoutToJson(layout, false)), totalCount: reply.totalCount };
    },
  }),
  route({
    method: "GET",
    path: "/v2/layouts/:layoutId",
    response: layoutResponse,
    params: layoutIdParam,
    handle: async ({ params, clients, call }) => layoutToJson(await clients.layouts.getLayout(params, call)),
  }),
  route({
    method: "PUT",
    path: "/v2/layouts/:layoutId",
    response: layoutResponse,
    params: layoutIdParam,
    body: updateLayoutBody,
    handle: async ({ params, body, clients, call }) => layoutToJson(await clients.layouts.updateLayout(updateLayoutRequestOf(params.layoutId, body), call)),
  }),
  route({
    method: "DELETE",
    path: "/v2/layouts/:layoutId",
    status: 204,
    params: layoutIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.layouts.deleteLayout(params, call);
    },
  }),
  route({
    method: "POST",
    path: "/v2/layouts/:layoutId/duplicate",
    response: layoutResponse,
    params: layoutIdParam,
    body: duplicateLayoutBody,
    handle: async ({ params, body, clients, call }) =>
      layoutToJson(
        await clients.layouts.duplicateLayout(
          {
            layoutId: params.layoutId,
            name: body.name,
            isTranslationEnabled: body.isTranslationEnabled ?? false,
            ...(body.layoutId ? { identifier: body.layoutId } : {}),
          },
          call,
        ),
      ),
  }),
  route({
    method: "POST",
    path: "/v2/layouts/:layoutId/preview",
    response: layoutPreviewResponse,
    params: layoutIdParam,
    body: layoutPreviewBody,
    handle: async ({ params, body, clients, call }) => {
      const [layout, env] = await Promise.all([clients.layouts.getLayout(params, call), clients.variables.listEnvironmentVariables({}, call)]);
      const given = body.controlValues?.email;
      return layoutPreview(given ? contentOf(given) : layout.email, body.previewPayload?.subscriber ?? {}, previewEnvironment(env));
    },
  }),
  route({
    method: "GET",
    path: "/v2/layouts/:layoutId/usage",
    response: workflowUsageResponse,
    params: layoutIdParam,
    handle: async ({ params, clients, call }) => workflowUsageToJson(await clients.layouts.getLayoutUsage(params, call)),
  }),

  // Channel endpoints (Novu's /v1/channel-endpoints): a subscriber's chat destinations per integration and context
  route({
    method: "POST",
    path: "/v1/channel-endpoints",
    response: endpointResponse,
    status: 201,
    body: createEndpointBody,
    handle: async ({ body, clients, call }) => endpointToJson(await createEndpoint(body, () => contextKeysFor(body.context, clients, call), clients, call)),
  }),
  route({
    method: "GET",
    path: "/v1/channel-endpoints",
    response: endpointPageResponse,
    envelope: false,
    query: listEndpointsQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.subscribers.listChannelEndpoints(listEndpointsRequestOf(query), call);
      return cursorPage(reply.endpoints.map(endpointToJson), reply);
    },
  }),
  route({
    method: "GET",
    path: "/v1/channel-endpoints/:identifier",
    response: endpointResponse,
    params: endpointIdentifierParam,
    handle: async ({ params, clients, call }) => endpointToJson(await clients.subscribers.getChannelEndpoint(params, call)),
  }),
  route({
    method: "PATCH",
    path: "/v1/channel-endpoints/:identifier",
    response: endpointResponse,
    params: endpointIdentifierParam,
    body: updateEndpointBody,
    handle: async ({ params, body, clients, call }) => endpointToJson(await updateEndpoint(params.identifier, body, clients, call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/channel-endpoints/:identifier",
    status: 204,
    params: endpointIdentifierParam,
    handle: async ({ params, clients, call }) => {
      await clients.subscribers.deleteChannelEndpoint(params, call);
    },
  }),

  // Environment variables (Novu's /v1/environment-variables; v2 templates read them as {{ env.KEY }})
  route({
    method: "POST",
    path: "/v1/environment-variables",
    response: variableResponse,
    // As Novu's newer API answers, and the only status @novu/api accepts.
    status: 200,
    body: createVariableBody,
    handle: async ({ body, clients, call }) => variableToJson(await clients.variables.createEnvironmentVariable(createVariableRequestOf(body), call)),
  }),
  route({
    method: "GET",
    path: "/v1/environment-variables",
    response: z.array(variableResponse),
    query: listVariablesQuery,
    handle: async ({ query, clients, call }) =>
      (await clients.variables.listEnvironmentVariables(query.search === undefined ? {} : { search: query.search }, call)).variables.map(variableToJson),
  }),
  route({
    method: "GET",
    path: "/v1/environment-variables/:variableKey",
    response: variableResponse,
    params: variableKeyParam,
    handle: async ({ params, clients, call }) => variableToJson(await clients.variables.getEnvironmentVariable({ key: params.variableKey }, call)),
  }),
  route({
    method: "PATCH",
    path: "/v1/environment-variables/:variableKey",
    response: variableResponse,
    params: variableKeyParam,
    body: updateVariableBody,
    handle: async ({ params, body, clients, call }) =>
      variableToJson(await clients.variables.updateEnvironmentVariable(updateVariableRequestOf(params.variableKey, body), call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/environment-variables/:variableKey",
    status: 204,
    params: variableKeyParam,
    handle: async ({ params, clients, call }) => {
      await clients.variables.deleteEnvironmentVariable({ key: params.variableKey }, call);
    },
  }),
  route({
    method: "GET",
    path: "/v1/environment-variables/:variableKey/usage",
    response: workflowUsageResponse,
    params: variableKeyParam,
    handle: async ({ params, clients, call }) => {
      // An unknown key is a 404, not a variable nothing reads.
      await clients.variables.getEnvironmentVariable({ key: params.variableKey }, call);
      return workflowUsageToJson(await clients.workflows.listEnvironmentVariableReaders({ key: params.variableKey }, call));
    },
  }),

  // Channel connections (Novu's /v1/channel-connections): OAuth grants of chat workspaces, their tokens sealed and masked
  route({
    method: "POST",
    path: "/v1/channel-connections",
    response: connectionResponse,
    status: 201,
    body: createConnectionBody,
    handle: async ({ body, clients, call }) => connectionToJson(await createConnection(body, () => contextKeysFor(body.context, clients, call), clients, call)),
  }),
  route({
    method: "GET",
    path: "/v1/channel-connections",
    response: connectionPageResponse,
    envelope: false,
    query: listConnectionsQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.channelConnections.listChannelConnections(listConnectionsRequestOf(query), call);
      return cursorPage(reply.connections.map(connectionToJson), reply);
    },
  }),
  route({
    method: "GET",
    path: "/v1/channel-connections/:identifier",
    response: connectionResponse,
    params: connectionIdentifierParam,
    handle: async ({ params, clients, call }) => connectionToJson(await clients.channelConnections.getChannelConnection(params, call)),
  }),
  route({
    method: "PATCH",
    path: "/v1/channel-connections/:identifier",
    response: connectionResponse,
    params: connectionIdentifierParam,
    body: updateConnectionBody,
    handle: async ({ params, body, clients, call }) =>
      connectionToJson(await clients.channelConnections.updateChannelConnection(updateConnectionRequestOf(params.identifier, body), call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/channel-connections/:identifier",
    status: 204,
    params: connectionIdentifierParam,
    handle: async ({ params, clients, call }) => {
      await clients.channelConnections.deleteChannelConnection(params, call);
    },
  }),

  // The Inbox's chat connections and endpoints (@novu/js channelConnections, channelEndpoints): the
  // session's subscriber's and the shared ones, in the session's contexts (inbox-channels.ts)
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/channel-connections",
    response: inboxConnectionPageResponse,
    envelope: false,
    query: listConnectionsQuery,
    handle: ({ query, session, clients, call }) => listInboxConnections(session, query, clients, call),
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/channel-connections/:identifier",
    response: inboxConnectionResponse,
    params: connectionIdentifierParam,
    query: inboxConnectionQuery,
    handle: ({ params, query, session, clients, call }) => getInboxConnection(session, params.identifier, query.connectionMode, clients, call),
  }),
  route({
    audience: "inbox",
    method: "POST",
    path: "/v1/inbox/channel-connections",
    response: inboxConnectionResponse,
    status: 201,
    body: createConnectionBody,
    handle: ({ body, session, clients, call }) => createInboxConnection(session, body, clients, call),
  }),
  route({
    audience: "inbox",
    method: "DELETE",
    path: "/v1/inbox/channel-connections/:identifier",
    status: 204,
    params: connectionIdentifierParam,
    handle: ({ params, session, clients, call }) => deleteInboxConnection(session, params.identifier, clients, call),
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/channel-endpoints",
    response: inboxEndpointPageResponse,
    envelope: false,
    query: listEndpointsQuery,
    handle: ({ query, session, clients, call }) => listInboxEndpoints(session, query, clients, call),
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/channel-endpoints/:identifier",
    response: inboxEndpointResponse,
    params: endpointIdentifierParam,
    handle: ({ params, session, clients, call }) => getInboxEndpoint(session, params.identifier, clients, call),
  }),
  route({
    audience: "inbox",
    method: "POST",
    path: "/v1/inbox/channel-endpoints",
    response: inboxEndpointResponse,
    status: 201,
    body: createEndpointBody,
    handle: ({ body, session, clients, call }) => createInboxEndpoint(session, body, clients, call),
  }),
  route({
    audience: "inbox",
    method: "DELETE",
    path: "/v1/inbox/channel-endpoints/:identifier",
    status: 204,
    params: endpointIdentifierParam,
    handle: ({ params, session, clients, call }) => deleteInboxEndpoint(session, params.identifier, clients, call),
  }),
  ...(
    [
      ["/v1/inbox/chat/oauth", "OAuth"],
      ["/v1/inbox/channel-connections/oauth", "OAuth"],
      ["/v1/inbox/channel-endpoints/oauth", "OAuth"],
      ["/v1/inbox/channel-endpoints/link", "Linking a chat identity"],
    ] as const
  ).map(([path, what]) =>
    route({
      audience: "inbox",
      method: "POST",
      path,
      body: chatConnectionBody,
      response: refusedResponse,
      handle: async ({ body, clients, call }) => refuseForProvider(await integrationByIdentifier(body.integrationIdentifier, clients, call), what),
    }),
  ),

  // Legacy layouts (Novu's /v1/layouts, for v1 workflows)
  route({
    method: "POST",
    path: "/v1/layouts",
    response: createdLegacyLayoutResponse,
    body: createLegacyLayoutBody,
    handle: async ({ body, clients, call }) => ({ _id: (await clients.legacyLayouts.createLegacyLayout(createLegacyLayoutRequestOf(body), call)).id }),
  }),
  route({
    method: "GET",
    path: "/v1/layouts",
    response: legacyLayoutPageResponse,
    envelope: false,
    query: listLegacyLayoutsQuery,
    handle: async ({ query, scope, clients, call }) => {
      const reply = await clients.legacyLayouts.listLegacyLayouts(listLegacyLayoutsRequestOf(query), call);
      const data = reply.layouts.map((layout) => legacyLayoutToJson(layout, scope));
      return { data, page: query.page, pageSize: query.pageSize, totalCount: reply.totalCount };
    },
  }),
  route({
    method: "GET",
    path: "/v1/layouts/:layoutId",
    response: legacyLayoutResponse,
    params: legacyLayoutIdParam,
    handle: async ({ params, scope, clients, call }) => legacyLayoutToJson(await clients.legacyLayouts.getLegacyLayout(params, call), scope),
  }),
  route({
    method: "PATCH",
    path: "/v1/layouts/:layoutId",
    response: legacyLayoutResponse,
    params: legacyLayoutIdParam,
    body: updateLegacyLayoutBody,
    handle: async ({ params, body, scope, clients, call }) =>
      legacyLayoutToJson(await clients.legacyLayouts.updateLegacyLayout(updateLegacyLayoutRequestOf(params.layoutId, body), call), scope),
  }),
  route({
    method: "DELETE",
    path: "/v1/layouts/:layoutId",
    status: 204,
    params: legacyLayoutIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.legacyLayouts.deleteLegacyLayout(params, call);
    },
  }),
  route({
    method: "POST",
    path: "/v1/layouts/:layoutId/default",
    status: 204,
    params: legacyLayoutIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.legacyLayouts.setDefaultLegacyLayout(params, call);
    },
  }),

  // Integrations
  route({
    method: "POST",
    path: "/v1/integrations",
    response: integrationResponse,
    body: createIntegrationBody,
    handle: async ({ body, clients, call }) => integrationToJson(await clients.integrations.createIntegration(createRequestOf(body), call)),
    sensitive: integrationOutcome,
  }),
  route({
    method: "GET",
    path: "/v1/integrations",
    response: integrationsResponse,
    handle: async ({ clients, call }) => integrationsToJson(await clients.integrations.listIntegrations({}, call)),
  }),
  route({
    method: "GET",
    path: "/v1/integrations/active",
    response: integrationsResponse,
    handle: async ({ clients, call }) => integrationsToJson(await clients.integrations.listOrganizationActiveIntegrations({}, call)),
  }),
  route({
    method: "PUT",
    path: "/v1/integrations/:integrationId",
    response: integrationResponse,
    params: integrationIdParam,
    body: updateIntegrationBody,
    handle: async ({ params, body, clients, call }) =>
      integrationToJson(await clients.integrations.updateIntegration(updateRequestOf(params.integrationId, body), call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/integrations/:integrationId",
    response: integrationsResponse,
    params: integrationIdParam,
    handle: async ({ params, clients, call }) => integrationsToJson(await clients.integrations.deleteIntegration({ id: params.integrationId }, call)),
  }),
  route({
    method: "POST",
    path: "/v1/integrations/:integrationId/set-primary",
    response: integrationResponse,
    // Novu answers 201, but @novu/api accepts only 200 here.
    status: 200,
    params: integrationIdParam,
    handle: async ({ params, clients, call }) => integrationToJson(await clients.integrations.setPrimaryIntegration({ id: params.integrationId }, call)),
    sensitive: integrationOutcome,
  }),
  route({
    method: "GET",
    path: "/v1/integrations/webhook/provider/:providerOrIntegrationId/status",
    params: z.object({ providerOrIntegrationId: z.string().min(1).max(200) }),
    response: z.boolean(),
    handle: webhookSupport,
  }),
  // Delivery providers' webhooks: what became of the messages they accepted
  route({
    method: "POST",
    audience: "public",
    path: "/v2/inbound-webhooks/delivery-providers/:environmentId/:integrationId",
    // @novu/api reads 200 only.
    status: 200,
    rawBody: true,
    bodyLimit: 2 * MIB,
    params: inboundWebhookParams,
    response: z.array(webhookResultResponse),
    handle: receiveProviderEvents,
  }),
  // A provider's event webhook pointed at the route above, by a worker (the providers whose API can)
  route({
    method: "POST",
    path: "/v1/integrations/:integrationId/auto-configure",
    // @novu/api reads 200 only.
    status: 200,
    params: integrationIdParam,
    response: autoConfigureResponse,
    handle: autoConfigure,
  }),
  // Chat connections need a provider app whose callbacks reach the service: refused, as Novu refuses unsupported providers
  ...(
    [
      ["/v1/integrations/:integrationIdentifier/mobile-link", "Mobile setup links"],
      ["/v1/integrations/:integrationIdentifier/webhook/configure", "Webhook configuration"],
    ] as const
  ).map(([path, what]) =>
    route({
      method: "POST",
      path,
      params: integrationIdentifierParam,
      body: mobileLinkBody,
      response: refusedResponse,
      handle: async ({ params, clients, call }) => refuseForProvider(await integrationByIdentifier(params.integrationIdentifier, clients, call), what),
    }),
  ),
  ...(
    [
      ["/v1/integrations/chat/oauth", chatConnectionBody, "OAuth"],
      ["/v1/integrations/channel-connections/oauth", chatConnectionBody, "OAuth"],
      ["/v1/integrations/channel-endpoints/oauth", subscriberChatConnectionBody, "OAuth"],
      ["/v1/integrations/channel-endpoints/link", subscriberChatConnectionBody, "Linking a chat identity"],
    ] as const
  ).map(([path, body, what]) =>
    route({
      method: "POST",
      path,
      body,
      response: refusedResponse,
      handle: async ({ body, clients, call }) => refuseForProvider(await integrationByIdentifier(body.integrationIdentifier, clients, call), what),
    }),
  ),

  // Topics (v1)
  route({
    method: "POST",
    path: "/v1/topics",
    response: z.object({ _id: z.string(), key: z.string() }),
    body: createTopicBody,
    handle: async ({ body, clients, call }) => {
      const topic = await clients.topics.createTopic(body, call);
      return { _id: topic.id, key: topic.key };
    },
  }),
  route({
    method: "GET",
    path: "/v1/topics",
    response: offsetPageResponse(topicV1Response),
    envelope: false,
    query: listTopicsQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.topics.listTopics(
        {
          page: query.page,
          pageSize: query.pageSize,
          ...(query.key !== undefined ? { key: query.key } : {}),
          ...(query.name !== undefined ? { name: query.name } : {}),
        },
        call,
      );
      return offsetPage(reply.topics.map(topicToJson), query.page, query.pageSize, reply.totalCount, reply.hasMore);
    },
  }),
  route({
    method: "GET",
    path: "/v1/topics/:topicKey",
    response: topicV1Response,
    params: topicKeyParam,
    handle: async ({ params, clients, call }) => topicToJson(await clients.topics.getTopic({ key: params.topicKey }, call)),
  }),
  route({
    method: "PATCH",
    path: "/v1/topics/:topicKey",
    response: topicV1Response,
    params: topicKeyParam,
    body: renameTopicBody,
    handle: async ({ params, body, clients, call }) => topicToJson(await clients.topics.renameTopic({ key: params.topicKey, name: body.name }, call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/topics/:topicKey",
    status: 204,
    params: topicKeyParam,
    handle: async ({ params, clients, call }) => {
      await clients.topics.deleteTopic({ key: params.topicKey, force: false }, call);
    },
  }),
  route({
    method: "POST",
    path: "/v1/topics/:topicKey/subscribers",
    response: z.object({ succeeded: z.array(z.string()), failed: z.object({ notFound: z.array(z.string()) }).optional() }),
    status: 200,
    params: topicKeyParam,
    body: topicSubscribersBody,
    handle: async ({ params, body, clients, call }) => {
      const reply = await clients.topics.addSubscribers(
        { topicKey: params.topicKey, subscriberIds: body.subscribers, topicNaming: { case: "newTopicName", value: `Autogenerated-${params.topicKey}` } },
        call,
      );
      return { succeeded: reply.succeeded, ...(reply.notFound.length > 0 ? { failed: { notFound: reply.notFound } } : {}) };
    },
  }),
  route({
    method: "POST",
    path: "/v1/topics/:topicKey/subscribers/removal",
    status: 204,
    params: topicKeyParam,
    body: topicSubscribersBody,
    handle: async ({ params, body, clients, call }) => {
      // Novu's v1 removal deletes whatever memberships match, never looking the topic up: none is no error.
      await clients.topics.removeSubscribers({ topicKey: params.topicKey, subscriberIds: body.subscribers }, call).catch((error: unknown) => {
        if (!isCode(error, Code.NotFound)) throw error;
      });
    },
  }),
  route({
    method: "GET",
    path: "/v1/topics/:topicKey/subscribers/:externalSubscriberId",
    response: topicSubscriberResponse,
    params: topicSubscriberParams,
    handle: async ({ params, clients, call }) => topicSubscriberToJson(await clients.topics.getSubscription(params, call)),
  }),

  // Topics (v2, as @novu/api calls them)
  route({
    method: "POST",
    path: "/v2/topics",
    response: topicResponse,
    query: upsertTopicQuery,
    body: upsertTopicBody,
    handle: async ({ query, body, clients, call }) => {
      try {
        const reply = await clients.topics.upsertTopic({ ...body, failIfExists: query.failIfExists }, call);
        return topicResponseToJson(reply.topic!);
      } catch (error) {
        if (!(error instanceof ConnectError) || error.code !== Code.AlreadyExists) throw error;
        // The SDK reads a 409 here as the existing topic, so the error body carries its fields too.
        const existing = topicResponseToJson(await clients.topics.getTopic({ key: body.key }, call));
        throw new HttpError(409, error.rawMessage, existing);
      }
    },
  }),
  route({
    method: "GET",
    path: "/v2/topics",
    response: cursorPageResponse(topicResponse),
    envelope: false,
    query: searchTopicsQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.topics.searchTopics(searchTopicsRequestOf(query), call);
      return cursorPage(reply.topics.map(topicResponseToJson), reply);
    },
  }),
  route({
    method: "GET",
    path: "/v2/topics/:topicKey",
    response: topicResponse,
    params: topicKeyParam,
    handle: async ({ params, clients, call }) => topicResponseToJson(await clients.topics.getTopic({ key: params.topicKey }, call)),
  }),
  route({
    method: "PATCH",
    path: "/v2/topics/:topicKey",
    response: topicResponse,
    params: topicKeyParam,
    body: renameTopicBody,
    handle: async ({ params, body, clients, call }) => topicResponseToJson(await clients.topics.renameTopic({ key: params.topicKey, name: body.name }, call)),
  }),
  route({
    method: "DELETE",
    path: "/v2/topics/:topicKey",
    response: z.object({ acknowledged: z.literal(true) }),
    params: topicKeyParam,
    handle: async ({ params, clients, call }) => {
      await clients.topics.deleteTopic({ key: params.topicKey, force: true }, call);
      return { acknowledged: true };
    },
  }),
  route({
    method: "GET",
    path: "/v2/topics/:topicKey/subscriptions",
    response: listedSubscriptionPageResponse,
    envelope: false,
    params: topicKeyParam,
    query: listSubscriptionsQuery,
    handle: async ({ params, query, clients, call }) => {
      const reply = await clients.topics.listSubscriptions(listSubscriptionsRequestOf(params.topicKey, query), call);
      const workflows = await preferenceWorkflows(reply.subscriptions, clients, call);
      return cursorPage(
        reply.subscriptions.map((subscription) => listedSubscriptionToJson(subscription, reply.topic!, workflows)),
        reply,
      );
    },
  }),
  route({
    method: "GET",
    path: "/v2/topics/:topicKey/subscriptions/:identifier",
    response: subscriptionDetailsResponse,
    params: subscriptionIdentifierParams,
    handle: async ({ params, clients, call }) => {
      const subscription = await clients.topics.getSubscription({ topicKey: params.topicKey, identifier: params.identifier }, call);
      return subscriptionDetailsToJson(subscription, await preferenceWorkflows([subscription], clients, call));
    },
  }),
  route({
    method: "PATCH",
    path: "/v2/topics/:topicKey/subscriptions/:identifier",
    params: subscriptionIdentifierParams,
    body: updateSubscriptionBody,
    response: subscriptionResponse,
    handle: async ({ params, body, clients, call }) => {
      const subscription = await updateSubscription(params, body, clients, call);
      const [topic, workflows] = await Promise.all([
        clients.topics.getTopic({ key: params.topicKey }, call),
        preferenceWorkflows([subscription], clients, call),
      ]);
      return subscriptionToJson(subscription, topic, workflows);
    },
  }),
  route({
    method: "POST",
    path: "/v2/topics/:topicKey/subscriptions",
    response: subscriptionsResultResponse,
    envelope: false,
    params: topicKeyParam,
    body: createSubscriptionsBody,
    handle: async ({ params, body, clients, call }) => {
      const [contextKeys, preferences] = await Promise.all([contextKeysFor(body.context, clients, call), resolvePreferences(body.preferences, clients, call)]);
      const reply = await clients.topics.addSubscribers({ ...addSubscribersRequestOf(params.topicKey, body), contextKeys, preferences }, call);
      const errors = [...reply.notFound.map(subscriberNotFound), ...reply.conflicts.map(subscriptionConflict)];
      const workflows = await preferenceWorkflows(reply.subscriptions, clients, call);
      const result = subscriptionsResult(reply.topic!, reply.subscriptions, body.requested, errors, workflows);
      if (result.meta.successful === 0) throw new HttpError(400, "No subscription could be created", result);
      return result;
    },
  }),
  route({
    method: "DELETE",
    path: "/v2/topics/:topicKey/subscriptions",
    response: subscriptionsResultResponse,
    envelope: false,
    params: topicKeyParam,
    body: deleteSubscriptionsBody,
    handle: async ({ params, body, clients, call }) => {
      const reply = await clients.topics.removeSubscribers(
        { topicKey: params.topicKey, subscriberIds: body.subscriberIds, identifiers: body.identifiers },
        call,
      );
      const errors = [
        ...reply.notFound.map(subscriberNotFound),
        ...reply.notSubscribed.map(subscriptionNotFound),
        ...reply.unknownIdentifiers.map(identifierNotFound),
      ];
      const result = subscriptionsResult(reply.topic!, reply.removed, body.requested, errors);
      if (result.meta.successful === 0) throw new HttpError(400, "No subscription could be deleted", result);
      return result;
    },
  }),
  // Events (triggers): bodies up to 5 MiB; one outcome per event
  route({
    method: "POST",
    path: "/v1/events/trigger",
    response: triggerResultResponse,
    rateLimit: { category: "trigger" },
    bodyLimit: 5 * MIB,
    body: triggerBody,
    handle: async ({ body, clients, accounts, scope, call }) => {
      const branding = await accounts.organizations.templateBranding(scope.organizationId);
      return singleOutcome(await clients.batched.acceptTrigger(eventOf(body, branding), call));
    },
  }),
  route({
    method: "POST",
    path: "/v1/events/trigger/bulk",
    response: z.array(triggerResultResponse),
    rateLimit: { category: "trigger", cost: "bulk" },
    bodyLimit: 5 * MIB,
    body: bulkTriggerBody,
    handle: async ({ body, clients, accounts, scope, call }) => {
      const branding = await accounts.organizations.templateBranding(scope.organizationId);
      // Each event is validated on its own: a malformed one fails alone, as status "error".
      const parsed = body.events.map((event) => {
        try {
          return { event: eventOf(parseOrThrow(triggerBody, event), branding) };
        } catch (error) {
          return { error: error instanceof Error ? error.message : "Validation failed" };
        }
      });
      const valid = parsed.flatMap((entry) => ("event" in entry ? [entry.event] : []));
      const reply = valid.length > 0 ? await clients.triggers.triggerBatch({ events: valid }, call) : { outcomes: [] };
      let next = 0;
      return parsed.map((entry) => ("event" in entry ? bulkOutcome(reply.outcomes[next++]!) : { acknowledged: true, status: "error", error: [entry.error] }));
    },
  }),
  route({
    method: "POST",
    path: "/v1/events/trigger/broadcast",
    response: triggerResultResponse,
    rateLimit: { category: "trigger", cost: "bulk" },
    status: 200,
    bodyLimit: 5 * MIB,
    body: broadcastBody,
    handle: async ({ body, clients, accounts, scope, call }) => {
      const event = broadcastEventOf(body, await accounts.organizations.templateBranding(scope.organizationId));
      return broadcastOutcome(await clients.batched.acceptTrigger(event, call), event.transactionId!);
    },
  }),
  route({
    method: "DELETE",
    path: "/v1/events/trigger/:transactionId",
    response: z.boolean(),
    rateLimit: { category: "trigger" },
    params: z.object({ transactionId: keyString("transactionId") }),
    handle: async ({ params, clients, call }) => {
      const { canceled, passedDigests } = await clients.triggers.cancelTrigger(params, call);
      // No run of a canceled trigger goes on: its jobs waiting at a delay or a digest show it.
      // Also after a cancel that found nothing waiting (a repeat, after a failure here).
      await clients.messages.cancelStepJobs(params, call);
      // The digests it opened went on under the triggers of their next events, whose merged jobs wait again.
      for (let start = 0; start < passedDigests.length; start += RESUMED_DIGESTS_PER_CALL) {
        await clients.messages.resumeDigestJobs({ digests: passedDigests.slice(start, start + RESUMED_DIGESTS_PER_CALL) }, call);
      }
      return canceled;
    },
  }),

  // Subscriber channel credentials and notification preferences
  route({
    method: "PATCH",
    path: "/v1/subscribers/:subscriberId/credentials",
    response: subscriberResponse,
    params: subscriberIdParam,
    body: credentialsBody,
    handle: async ({ params, body, clients, call }) =>
      subscriberToJson(await clients.subscribers.updateChannelCredentials(credentialsRequestOf(params.subscriberId, body, false), call)),
  }),
  route({
    method: "PUT",
    path: "/v1/subscribers/:subscriberId/credentials",
    response: subscriberResponse,
    params: subscriberIdParam,
    body: credentialsBody,
    handle: async ({ params, body, clients, call }) =>
      subscriberToJson(await clients.subscribers.updateChannelCredentials(credentialsRequestOf(params.subscriberId, body, true), call)),
  }),
  route({
    method: "DELETE",
    path: "/v1/subscribers/:subscriberId/credentials/:providerId",
    status: 204,
    params: credentialsProviderParams,
    handle: async ({ params, clients, call }) => {
      await clients.subscribers.deleteChannelCredentials(params, call);
    },
  }),
  route({
    method: "GET",
    path: "/v2/subscribers/:subscriberId/preferences",
    response: preferencesResponse,
    params: subscriberIdParam,
    query: preferencesQuery,
    handle: async ({ params, query, clients, call }) =>
      preferencesToJson(
        await clients.subscribers.getSubscriberPreferences(
          { subscriberId: params.subscriberId, criticality: query.criticality, contextKeys: query.contextKeys ?? [] },
          call,
        ),
        { schedule: true },
      ),
  }),
  route({
    method: "PATCH",
    path: "/v2/subscribers/:subscriberId/preferences",
    response: preferencesResponse,
    params: subscriberIdParam,
    body: updatePreferencesBody,
    handle: async ({ params, body, clients, call }) => {
      const request = { ...updatePreferencesRequestOf(params.subscriberId, body), contextKeys: await contextKeysFor(body.context, clients, call) };
      return preferencesToJson(await clients.subscribers.updateSubscriberPreferences(request, call), { schedule: false });
    },
  }),

  route({
    method: "PATCH",
    path: "/v2/subscribers/:subscriberId/preferences/bulk",
    response: updatedWorkflowsResponse,
    params: subscriberIdParam,
    body: bulkPreferencesBody,
    handle: async ({ params, body, clients, call }) => {
      const request = { ...bulkPreferencesRequestOf(params.subscriberId, body), contextKeys: await contextKeysFor(body.context, clients, call) };
      return updatedWorkflowsToJson(await clients.subscribers.bulkUpdateSubscriberPreferences(request, call));
    },
  }),

  // v1 preferences (@novu/node): the workflows a subscriber may change, as Novu's v1 lists them (critical ones left out)
  route({
    method: "GET",
    path: "/v1/subscribers/:subscriberId/preferences",
    response: workflowPreferencesV1Response,
    params: subscriberIdParam,
    query: preferencesV1Query,
    handle: async (input) =>
      (await workflowPreferencesV1(input.params.subscriberId, input.query.includeInactiveChannels, input)).workflows.map(workflowPreferenceV1ToJson),
  }),
  route({
    method: "GET",
    path: "/v1/subscribers/:subscriberId/preferences/:parameter",
    response: preferencesByLevelV1Response,
    params: preferenceLevelParams,
    query: preferencesV1Query,
    handle: (input) => preferencesByLevelV1(input.params.subscriberId, input.params.parameter, input.query.includeInactiveChannels, input),
  }),
  route({
    method: "PATCH",
    path: "/v1/subscribers/:subscriberId/preferences",
    response: globalPreferenceV1Response,
    params: subscriberIdParam,
    body: globalPreferenceV1Body,
    handle: (input) => updateGlobalPreferenceV1(input.params.subscriberId, true, input),
  }),
  route({
    method: "PATCH",
    path: "/v1/subscribers/:subscriberId/preferences/:parameter",
    response: workflowPreferenceV1Response,
    params: workflowPreferenceParams,
    body: workflowPreferenceV1Body,
    handle: (input) => updateWorkflowPreferenceV1(input.params.subscriberId, input.params.parameter, true, input),
  }),

  // Inbox topic subscriptions (@novu/js `subscriptions`, <Subscription />): the session's
  // subscriber's, in the session's contexts; another subscriber's subscription is as good as none.
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/topics/:topicKey/subscriptions",
    response: z.array(subscriptionDetailsResponse),
    params: topicKeyParam,
    handle: async ({ params, session, clients, call }) => {
      const subscriptions = await sessionSubscriptions(session, params.topicKey, clients, call);
      const workflows = await preferenceWorkflows(subscriptions, clients, call);
      return subscriptions.map((subscription) => subscriptionDetailsToJson(subscription, workflows));
    },
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/topics/:topicKey/subscriptions/:identifier",
    response: subscriptionDetailsResponse,
    params: subscriptionIdentifierParams,
    query: inboxSubscriptionQuery,
    handle: async ({ params, query, session, clients, call }) => {
      const subscription = await sessionSubscription(session, params.topicKey, params.identifier, clients, call);
      return subscription ? inboxSubscriptionToJson(subscription, query, clients, call) : NO_CONTENT;
    },
  }),
  route({
    audience: "inbox",
    method: "POST",
    path: "/v1/inbox/topics/:topicKey/subscriptions",
    response: subscriptionDetailsResponse,
    params: topicKeyParam,
    body: inboxCreateSubscriptionBody,
    handle: async ({ params, body, session, clients, call }) => {
      const { subscriberId } = session;
      const reply = await clients.topics.addSubscribers(
        {
          topicKey: params.topicKey,
          ...(body.identifier ? { named: [{ subscriberId, identifier: body.identifier }] } : { subscriberIds: [subscriberId] }),
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.topic?.name !== undefined ? { topicNaming: { case: "topicName" as const, value: body.topic.name } } : {}),
          contextKeys: session.contextKeys,
          preferences: await resolvePreferences(body.preferences, clients, call),
        },
        call,
      );
      const [subscription] = reply.subscriptions;
      if (!subscription) throw new HttpError(400, reply.conflicts[0]?.message ?? `Subscriber ${subscriberId} was not found`);
      return subscriptionDetailsToJson(subscription, await preferenceWorkflows([subscription], clients, call));
    },
  }),
  route({
    audience: "inbox",
    method: "PATCH",
    path: "/v1/inbox/topics/:topicKey/subscriptions/:identifier",
    response: subscriptionDetailsResponse,
    params: subscriptionIdentifierParams,
    body: inboxUpdateSubscriptionBody,
    handle: async ({ params, body, session, clients, call }) => {
      await ownedSubscription(session, params.topicKey, params.identifier, clients, call);
      const subscription = await updateSubscription(params, body, clients, call);
      return subscriptionDetailsToJson(subscription, await preferenceWorkflows([subscription], clients, call));
    },
  }),
  route({
    audience: "inbox",
    method: "DELETE",
    path: "/v1/inbox/topics/:topicKey/subscriptions/:identifier",
    response: deletedSubscriptionResponse,
    params: subscriptionIdentifierParams,
    handle: async ({ params, session, clients, call }) => {
      await ownedSubscription(session, params.topicKey, params.identifier, clients, call);
      await clients.topics.removeSubscribers({ topicKey: params.topicKey, identifiers: [params.identifier] }, call);
      return { success: true as const };
    },
  }),
  route({
    audience: "inbox",
    method: "PATCH",
    path: "/v1/inbox/subscriptions/:subscriptionIdentifier/preferences/:workflowId",
    response: inboxSubscriptionPreferenceResponse,
    params: inboxSubscriptionPreferenceParams,
    body: inboxSubscriptionPreferenceBody,
    handle: async ({ params, body, session, clients, call }) =>
      setSubscriptionPreference(session, { identifier: params.subscriptionIdentifier, workflowId: params.workflowId, ...body }, clients, call),
  }),

  // Inbox preferences: the session's subscriber's, in the same store and with the same rules as above
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/preferences",
    response: inboxPreferencesResponse,
    query: inboxPreferencesQuery,
    handle: async ({ query, session, clients, call }) =>
      inboxPreferencesToJson(
        await clients.subscribers.getSubscriberPreferences({ subscriberId: session.subscriberId, contextKeys: session.contextKeys, ...query }, call),
      ),
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/inbox/preferences/global",
    response: inboxGlobalResponse,
    handle: async ({ session, clients, call }) =>
      inboxGlobalToJson(
        (await clients.subscribers.getSubscriberPreferences({ subscriberId: session.subscriberId, contextKeys: session.contextKeys }, call)).global,
      ),
  }),
  route({
    audience: "inbox",
    method: "PATCH",
    path: "/v1/inbox/preferences",
    response: inboxGlobalResponse,
    body: inboxPreferenceBody,
    handle: async ({ body, session, clients, call }) =>
      inboxGlobalToJson((await clients.subscribers.updateSubscriberPreferences(inboxUpdateRequestOf(session, body), call)).global),
  }),
  // Before /:workflowId, which would take "bulk" for a workflow.
  route({
    audience: "inbox",
    method: "PATCH",
    path: "/v1/inbox/preferences/bulk",
    response: z.array(z.union([inboxWorkflowResponse, inboxSubscriptionPreferenceResponse])),
    body: inboxBulkPreferencesBody,
    handle: async ({ body, session, clients, call }) => {
      // The entries of a subscription's preferences (subscription.bulkUpdatePreferences) go to the subscription, one at a time.
      const ofSubscriptions = body.preferences.filter((entry) => entry.subscriptionIdentifier !== undefined);
      const ofSubscriber = { preferences: body.preferences.filter((entry) => entry.subscriptionIdentifier === undefined) };
      const subscriptionPreferences = [];
      for (const entry of ofSubscriptions) {
        subscriptionPreferences.push(await setSubscriptionPreference(session, { ...entry, identifier: entry.subscriptionIdentifier! }, clients, call));
      }
      // Nothing at all is for the service to refuse, as Novu refuses it.
      if (ofSubscriber.preferences.length === 0 && ofSubscriptions.length > 0) return subscriptionPreferences;
      const reply = await clients.subscribers.bulkUpdateSubscriberPreferences(inboxBulkRequestOf(session, ofSubscriber), call);
      return [...updatedWorkflowsToJson(reply), ...subscriptionPreferences];
    },
  }),
  route({
    audience: "inbox",
    method: "PATCH",
    path: "/v1/inbox/preferences/:workflowId",
    response: inboxWorkflowResponse,
    params: inboxWorkflowParam,
    body: inboxPreferenceBody,
    handle: async ({ params, body, session, clients, call }) => {
      const reply = await clients.subscribers.updateSubscriberPreferences(inboxUpdateRequestOf(session, body, params.workflowId), call);
      const [updated] = updatedWorkflowsToJson(reply);
      // Stored, but an inactive workflow has no preference to show (the Inbox lists active ones only).
      if (!updated) throw new HttpError(404, `Workflow with id: ${params.workflowId} is not active`);
      return updated;
    },
  }),

  // The caller's organization (@novu/node organizations): its name and branding
  route({
    method: "GET",
    path: "/v1/organizations/me",
    response: organizationResponse,
    handle: async ({ scope, accounts }) => organizationToJson(await organizationOf(scope.organizationId, accounts)),
  }),
  route({
    method: "GET",
    path: "/v1/organizations",
    response: z.array(organizationResponse),
    handle: async ({ scope, accounts }) => [organizationToJson(await organizationOf(scope.organizationId, accounts))],
  }),
  route({
    method: "PATCH",
    path: "/v1/organizations",
    response: z.object({ name: z.string() }),
    body: renameOrganizationBody,
    handle: async ({ scope, body, accounts }) => {
      await accounts.organizations.rename(scope.organizationId, body.name);
      return { name: body.name };
    },
  }),
  route({
    method: "PUT",
    path: "/v1/organizations/branding",
    response: brandingResponse,
    body: brandingBody,
    handle: async ({ scope, body, accounts }) => {
      await accounts.organizations.setBranding(scope.organizationId, body);
      return brandingToJson(body);
    },
  }),

  // Environments: the caller's, and its organization's
  route({
    method: "GET",
    path: "/v1/environments/api-keys",
    response: apiKeysResponse,
    handle: async ({ scope, accounts }) => apiKeysToJson(await accounts.environments.openKeys(scope.environmentId)),
  }),
  route({
    method: "GET",
    path: "/v1/environments/me",
    response: environmentResponse,
    handle: async ({ scope, accounts }) => {
      const [environment, all] = await Promise.all([
        accounts.environments.byId(scope.environmentId),
        accounts.environments.listOfOrganization(scope.organizationId),
      ]);
      // Only a key whose environment was deleted meanwhile, which nothing does yet.
      if (!environment) throw new HttpError(404, "Environment not found");
      return environmentToJson(environment, parentIdOf(all));
    },
  }),
  route({
    method: "GET",
    path: "/v1/environments",
    response: z.array(environmentResponse),
    handle: async ({ scope, accounts }) => {
      const all = await accounts.environments.listOfOrganization(scope.organizationId);
      const parentId = parentIdOf(all);
      return all.map((environment) => environmentToJson(environment, parentId));
    },
  }),
  route({
    method: "POST",
    path: "/v1/environments",
    body: createEnvironmentBody,
    response: createdEnvironmentResponse,
    handle: async ({ body, scope, accounts }) => {
      const created = await accounts.environments.create(scope.organizationId, body.name);
      return createdEnvironmentToJson(created, parentIdOf(await accounts.environments.listOfOrganization(scope.organizationId)));
    },
    sensitive: createdEnvironmentOutcome,
  }),
  route({
    method: "PUT",
    path: "/v1/environments/:environmentId",
    params: environmentIdParam,
    body: updateEnvironmentBody,
    response: environmentResponse,
    handle: async ({ params, body, scope, accounts }) => {
      const updated = await accounts.environments.update(scope.organizationId, params.environmentId, { name: body.name, identifier: body.identifier });
      return environmentToJson(updated, parentIdOf(await accounts.environments.listOfOrganization(scope.organizationId)));
    },
  }),
  route({
    method: "DELETE",
    path: "/v1/environments/:environmentId",
    // @novu/api takes a 200 only, whose body it does not read: Novu's is an empty envelope.
    envelope: false,
    params: environmentIdParam,
    response: z.strictObject({}),
    handle: async ({ params, scope, accounts }) => {
      await accounts.environments.remove(scope.organizationId, params.environmentId);
      return {};
    },
  }),
  route({
    method: "POST",
    path: "/v2/environments/:targetEnvironmentId/diff",
    // Novu answers 201; @novu/api takes 200 only.
    status: 200,
    params: publishParams,
    body: diffBody,
    response: diffResponse,
    handle: async (input) =>
      workflowDiffToJson(
        input.params.targetEnvironmentId,
        await diffWorkflows(input, { targetEnvironmentId: input.params.targetEnvironmentId, ...input.body }),
      ),
  }),
  route({
    method: "POST",
    path: "/v2/environments/:targetEnvironmentId/publish",
    // Novu answers 201; @novu/api takes 200 only.
    status: 200,
    params: publishParams,
    body: publishBody,
    response: publishResponse,
    handle: async (input) => publishOutcomeToJson(await publishWorkflows(input, { targetEnvironmentId: input.params.targetEnvironmentId, ...input.body })),
  }),
  route({
    method: "GET",
    path: "/v2/environments/:environmentId/tags",
    params: environmentIdParam,
    response: tagsResponse,
    handle: async (input) => {
      const call = await callInEnvironment(input, await environmentIdNamed(input, input.params.environmentId));
      return tagsToJson((await input.clients.workflows.listWorkflowTags({}, call)).tags);
    },
  }),

  // The Inbox (@novu/js): a session for a subscriber's browser; every other Inbox route takes its token
  route({ audience: "public", method: "POST", path: "/v1/inbox/session", body: sessionBody, response: sessionResponse, handle: startSession }),

  // The Notification Center (@novu/headless, @novu/notification-center): a session for a
  // subscriber's browser, then the v1 subscriber routes' feed, marks and preferences for its own
  route({
    audience: "public",
    method: "POST",
    path: "/v1/widgets/session/initialize",
    body: widgetSessionBody,
    response: widgetSessionResponse,
    handle: startWidgetSession,
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/widgets/notifications/feed",
    response: messagePageResponse,
    envelope: false,
    query: feedQuery,
    handle: (input) => feedPageOf(input.session.subscriberId, input, "session"),
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/widgets/notifications/unseen",
    response: countResponse,
    query: unseenCountQuery,
    handle: ({ query, ...input }) => widgetCount(input, query, { seen: query.seen }),
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/widgets/notifications/unread",
    response: countResponse,
    query: unreadCountQuery,
    handle: ({ query, ...input }) => widgetCount(input, query, { read: query.read }),
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/widgets/notifications/count",
    response: countResponse,
    query: feedCountQuery,
    handle: ({ query, ...input }) =>
      widgetCount(input, query, { ...(query.seen !== undefined ? { seen: query.seen } : {}), ...(query.read !== undefined ? { read: query.read } : {}) }),
  }),
  route({
    audience: "inbox",
    method: "POST",
    path: "/v1/widgets/messages/markAs",
    response: messagesResponse,
    body: legacyMarkAsBody,
    handle: (input) => legacyMarkMessagesAs(input.session.subscriberId, input),
  }),
  route({
    audience: "inbox",
    method: "POST",
    path: "/v1/widgets/messages/mark-as",
    response: messagesResponse,
    body: markAsBody,
    handle: (input) => markMessagesAs(input.session.subscriberId, input),
  }),
  ...WIDGET_MARK_ALL_ROUTES.map(([name, markAs]) =>
    route({
      audience: "inbox",
      method: "POST",
      path: `/v1/widgets/messages/${name}`,
      response: z.int().min(0),
      body: markAllWidgetBody,
      handle: (input) => markAllMessagesAs(input.session.subscriberId, markAs, input.body.feedId ?? [], input),
    }),
  ),
  route({
    audience: "inbox",
    method: "POST",
    path: "/v1/widgets/messages/:messageId/actions/:type",
    response: messageResponse,
    params: messageActionParams.omit({ subscriberId: true }),
    body: messageActionBody,
    handle: (input) => actOnMessage(input.session.subscriberId, input),
  }),
  route({
    audience: "inbox",
    method: "DELETE",
    path: "/v1/widgets/messages/:messageId",
    params: widgetMessageParams,
    response: z.null(),
    handle: async ({ params, session, clients, call }) => {
      // A message that is not the subscriber's (or no more) is no error, as Novu answers.
      if (!isObjectId(params.messageId)) return null;
      await clients.messages.bulkUpdateInboxMessages(
        { subscriberId: session.subscriberId, change: messagesV1.InboxBulkChange.DELETE, messageIds: [params.messageId], filter: { anyContext: true } },
        call,
      );
      return null;
    },
  }),
  route({
    audience: "inbox",
    method: "DELETE",
    path: "/v1/widgets/messages",
    status: 204,
    query: removeAllMessagesQuery,
    handle: async ({ query, session, clients, call }) => {
      if (query.feedId !== undefined) await feedNamed(query.feedId, clients, call);
      await clients.messages.bulkUpdateInboxMessages(
        {
          subscriberId: session.subscriberId,
          change: messagesV1.InboxBulkChange.DELETE,
          filter: { anyContext: true, ...(query.feedId ? { feedId: query.feedId } : {}) },
        },
        call,
      );
    },
  }),
  route({
    audience: "inbox",
    method: "POST",
    path: "/v1/widgets/messages/bulk/delete",
    status: 200,
    body: removeMessagesBody,
    response: z.null(),
    handle: async ({ body, session, clients, call }) => {
      await clients.messages.bulkUpdateInboxMessages(
        { subscriberId: session.subscriberId, change: messagesV1.InboxBulkChange.DELETE, messageIds: body.messageIds, filter: { anyContext: true } },
        call,
      );
      return null;
    },
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/widgets/organization",
    response: widgetOrganizationResponse,
    handle: async ({ session, accounts }) => {
      const { id, name, branding } = await organizationOf(session.scope.organizationId, accounts);
      return { _id: id, name, ...(branding ? { branding: brandingToJson(branding) } : {}) };
    },
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/widgets/preferences",
    response: workflowPreferencesV1Response,
    handle: async (input) => (await workflowPreferencesV1(input.session.subscriberId, false, input)).workflows.map(workflowPreferenceV1ToJson),
  }),
  route({
    audience: "inbox",
    method: "GET",
    path: "/v1/widgets/preferences/:parameter",
    response: preferencesByLevelV1Response,
    params: widgetPreferenceLevelParams,
    handle: (input) => preferencesByLevelV1(input.session.subscriberId, input.params.parameter, false, input),
  }),
  route({
    audience: "inbox",
    method: "PATCH",
    path: "/v1/widgets/preferences",
    response: globalPreferenceV1Response,
    body: widgetGlobalPreferenceBody,
    handle: (input) => updateGlobalPreferenceV1(input.session.subscriberId, false, input),
  }),
  route({
    audience: "inbox",
    method: "PATCH",
    path: "/v1/widgets/preferences/:parameter",
    response: workflowPreferenceV1Response,
    params: widgetWorkflowParams,
    body: widgetWorkflowPreferenceBody,
    handle: (input) => updateWorkflowPreferenceV1(input.session.subscriberId, input.params.parameter, false, input),
  }),
  route({
    audience: "inbox",
    method: "POST",
    path: "/v1/widgets/usage/log",
    response: usageLogResponse,
    body: usageLogBody,
    handle: async () => ({ success: true as const }),
  }),
];

// Novu's earlier name of the v1 workflow routes, which @novu/node's notificationTemplates calls: the same routes.
for (const workflowRoute of routes.filter((entry) => entry.path.startsWith("/v1/workflows"))) {
  routes.push({ ...workflowRoute, path: workflowRoute.path.replace("/v1/workflows", "/v1/notification-templates") });
}
