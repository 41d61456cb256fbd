import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { messagesV1, subscribersV1, workflowsV1 } from "@notify/proto";
import {
  announceKeys,
  checkContextKeys,
  contextScopeOf,
  ChangeKind,
  Channel,
  channelName,
  CHANNELS,
  invalidField,
  retryOnDeadlock,
  isObjectId,
  isUniqueViolation,
  failedPrecondition,
  notFound,
  objectId,
  scopeOf,
  SEVERITIES,
  severityName,
  withTransaction,
  type ChannelName,
  type Logger,
  type Pool,
  type Queryable,
  type Scope,
  boundBatch,
} from "@notify/runtime";
import { checkInboxFilter } from "./inbox-filter.js";
import {
  actionTypeName,
  activityDayFromRow,
  attemptRow,
  providerEventRow,
  attemptStatusName,
  inboxBulkChangeOf,
  inboxChangeOf,
  markAsName,
  messageFromRow,
  messageGroupRow,
  notificationFromRow,
  executionDetailsOf,
  stepJobGroupRow,
} from "./mapping.js";
import type { SnoozeSchedule } from "./snoozes.js";
import * as store from "./store.js";
import type { SubscriberDirectory } from "./subscribers.js";
import { checkFeedIdentifiers, checkMessageIds, checkNewMessages, checkRange, checkStepJobGroups, MAX_MARKED_IDS } from "./validation.js";
import { workflowsOf, type WorkflowDirectory } from "./workflows.js";

/** The API lists' context filter: the keys named, checked and sorted; none: every context. */
const contextsNamed = (keys: readonly string[]) => (keys.length > 0 ? checkContextKeys(keys) : null);

/** Totals stop here: an exact count over a million messages would cost more than the page itself. */
export const COUNT_CAP = 1000;
export const MAX_UNSEEN_LIMIT = 1000;
export const MAX_COUNT_BATCH = 1000;
export const MAX_FEED_BATCH = 500;
export const MAX_FEED_PAGE = 100;
export const MAX_LIST_PAGE = 1000;
/** Offset pages cost what they skip, so they go no deeper than this. */
export const MAX_OFFSET = 100_000;
export const MAX_ATTEMPT_BATCH = 2_000;
/** One webhook request's events: a provider's batch (SendGrid's are the largest) or a part of one. */
export const MAX_PROVIDER_EVENT_BATCH = 1_000;
/** One notification's attempts at one subscriber: a few per channel step, so this is never reached in practice. */
export const MAX_EXECUTION_DETAILS = 1_000;
export const MAX_INBOX_PAGE = 100;
export const MAX_INBOX_FILTERS = 30;
/** Inbox counts stop here (Novu's stop at 99, the bell's at 100). */
export const MAX_INBOX_COUNT = 1000;
export const MAX_MESSAGES_BY_ID = 1000;
export const MAX_ACTIVITY_PAGE = 100;
export const MAX_ACTIVITY_FILTER_VALUES = 100;
/** A notification's messages: one per channel step of its workflow, so this is never reached in practice. */
export const MAX_NOTIFICATION_MESSAGES = 100;
/** The subscribers the activity feed's subscriber filters may name at once (each page reads their notifications). */
export const MAX_MATCHED_SUBSCRIBERS = 1000;
export const MAX_GRAPH_DAYS = 366;
/** Step jobs one statement of a cancel changes. */
const STEP_JOB_CANCEL_CHUNK = 1000;
/** Digest jobs resumed per call: a cancel's come in chunks. */
export const MAX_RESUMED_DIGESTS = 1000;
/** A deleted subscriber's messages per channel group and call: each call holds the locks of at most this many. */
export const SUBSCRIBER_DELETE_BATCH = 2_000;
const DAY_MS = 86_400_000;

export interface MessageServiceDeps {
  pool: Pool;
  /** The prepared hot reads (unseen counts and feed pages) run here: createPreparedReadPool. */
  preparedReads: Pool;
  log: Logger;
  subscribers: SubscriberDirectory;
  workflows: WorkflowDirectory;
  /** Rows per mark-all statement. */
  markAllChunkRows: number;
  snoozes: SnoozeSchedule;
  /** How far ahead a snooze may end. */
  maxSnoozeMs: number;
}

const keyOf = (parts: readonly string[]) => parts.join("\u0000");

/** A DeleteSubscriberMessages cursor: a notification id, then its created_at as Postgres prints it. */
const WALK_POINT = /^([0-9a-f]{24})@(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?[+-]\d{2}(?::\d{2})?)$/;

function walkPointOf(after: string): store.NotificationWalkPoint {
  const match = WALK_POINT.exec(after);
  if (!match) throw invalidField("after", "after must be the next of an earlier call", after);
  return { id: match[1]!, createdAt: match[2]! };
}
/** Runs of one mark-all chunk before a deadlock is let through (each one rolls back at once). */
const DEADLOCK_ATTEMPTS = 5;

function markAsOf(value: messagesV1.MarkAs): store.MarkAsName {
  const name = markAsName(value);
  if (!name) throw invalidField("markAs", "markAs must be one of read, seen, unread, unseen", value);
  return name;
}

/** A channel filter: null for every channel. */
function inboxChangeName(value: messagesV1.InboxChange): store.InboxChangeName {
  const name = inboxChangeOf(value);
  if (!name) throw invalidField("change", "change must be one of read, unread, seen, archive, unarchive, snooze, unsnooze, complete, revert", value);
  return name;
}

function inboxBulkChangeName(value: messagesV1.InboxBulkChange): store.InboxBulkChangeName | "delete" {
  const name = inboxBulkChangeOf(value);
  if (!name) throw invalidField("change", "change must be one of seen, read, archive, archive_read, delete", value);
  return name;
}

function channelFilter(value: Channel): ChannelName | null {
  if (value === Channel.UNSPECIFIED) return null;
  const name = channelName(value);
  if (!name) throw invalidField("channel", `channel must be one of ${CHANNELS.join(", ")}`, value);
  return name;
}

/** Rows by the notification they belong to, in their order. */
type NotificationDraft = store.NewNotificationRow & { transaction_id: string };

/**
 * The notifications a write names: one per transaction and subscriber, however many steps and
 * groups name them, made by the first group that does, its id chosen here.
 */
function notificationsNamed() {
  const drafts = new Map<string, NotificationDraft>();
  return {
    of(transactionId: string, recipient: messagesV1.MessageRecipient, grp: number): NotificationDraft {
      const key = keyOf([transactionId, recipient.subscriberId]);
      let draft = drafts.get(key);
      if (!draft) {
        draft = {
          id: objectId(),
          transaction_id: transactionId,
          subscriber_id: recipient.subscriberId,
          external_subscriber_id: recipient.externalSubscriberId,
          grp,
        };
        drafts.set(key, draft);
      }
      return draft;
    },
    rows: () => [...drafts.values()],
  };
}

function byNotification<R extends { notification_id: string }>(rows: readonly R[]): Map<string, R[]> {
  const grouped = new Map<string, R[]>();
  for (const row of rows) {
    const group = grouped.get(row.notification_id);
    if (group) group.push(row);
    else grouped.set(row.notification_id, [row]);
  }
  return grouped;
}

const inApp = (message: messagesV1.NewMessage | undefined) => message?.channel === Channel.IN_APP;

/** The subscribers whose feed a CreateMessages call can add to: recipients of its in-app messages. */
function feedsCreatedIn(request: messagesV1.CreateMessagesRequest): string[] {
  const subscriberIds = new Set<string>();
  for (const message of request.messages) if (inApp(message)) subscriberIds.add(message.externalSubscriberId);
  for (const group of request.groups) {
    if (inApp(group.message)) for (const recipient of group.recipients) subscriberIds.add(recipient.externalSubscriberId);
  }
  return [...subscriberIds];
}

/** The RECEIVED keys of the in-app messages among `rows` (options.proto). */
function receivedKeys(groupRows: readonly store.MessageGroupRow[], rows: readonly store.RecipientRow[]): string[] {
  return rows.filter((row) => groupRows[row.grp]!.channel === "in_app").map((row) => receivedKey(row.id, row.external_subscriber_id));
}

const batchError = (error: ConnectError) => ({ code: error.code, message: error.rawMessage });

/** One answer of a batch RPC: its error, or its value under the result's `valueCase`. */
function batchResult<C extends string, V>(answer: V | ConnectError, valueCase: C) {
  return answer instanceof ConnectError ? { result: { case: "error" as const, value: batchError(answer) } } : { result: { case: valueCase, value: answer } };
}

function pageOffset(page: number, limit: number): number {
  checkRange("page", page, 0, Math.floor(MAX_OFFSET / limit));
  return page * limit;
}

type InboxPage = MessageInitShape<typeof messagesV1.ListInboxMessagesResponseSchema> & {
  messages: messagesV1.Message[];
  workflows: workflowsV1.Workflow[];
};

/** An Inbox list request that passed its checks, with its subscriber. */
interface CheckedInbox {
  filter: store.InboxFilter;
  after: string | null;
  offset: number;
  limit: number;
  subscriber: subscribersV1.Subscriber;
}

type FeedPage = MessageInitShape<typeof messagesV1.GetFeedResponseSchema> & { messages: messagesV1.Message[] };

/** A feed request that passed its checks, with its subscriber. */
interface CheckedFeed {
  query: store.FeedQuery;
  subscriber: FeedPage["subscriber"];
}

export function createMessageService({
  pool,
  preparedReads,
  subscribers,
  workflows,
  markAllChunkRows,
  snoozes,
  maxSnoozeMs,
}: MessageServiceDeps): ServiceImpl<typeof messagesV1.MessageService> {
  /**
   * Counts for many requests of one environment: their subscriber lookups share one call and
   * the counts one statement. Each request is checked on its own; a failing one yields its error
   * in its place. Identical questions are asked once: one snapshot answers them alike.
   */
  async function countAll(scope: Scope, requests: readonly messagesV1.CountMessagesRequest[]): Promise<(number | ConnectError)[]> {
    const resolved = await Promise.all(
      requests.map(async (request) => {
        try {
          checkRange("limit", request.limit, 1, MAX_UNSEEN_LIMIT);
          const subscriber = await subscribers.require(scope, request.subscriberId);
          const query: store.FilteredCountQuery = {
            subscriberId: subscriber.id,
            feedIdentifiers: request.feedIdentifiers.length > 0 ? request.feedIdentifiers : null,
            read: request.read ?? null,
            // Neither asked: the unseen ones, as Novu counts.
            seen: request.seen ?? (request.read === undefined ? false : null),
            limit: request.limit,
          };
          return { query, key: JSON.stringify(query) };
        } catch (error) {
          if (error instanceof ConnectError) return { error };
          throw error;
        }
      }),
    );
    // The unseen count every open inbox polls keeps its own statement; other counts share one.
    const unseenOnly = new Map<string, store.CountQuery>();
    const filtered = new Map<string, store.FilteredCountQuery>();
    for (const { key, query } of resolved) {
      if (key === undefined) continue;
      if (query.seen !== null && query.read === null && query.feedIdentifiers === null)
        unseenOnly.set(key, { subscriberId: query.subscriberId, seen: query.seen, limit: query.limit });
      else filtered.set(key, query);
    }
    const [unseenCounts, filteredCounts] = await Promise.all([
      unseenOnly.size > 0 ? store.countMessages(preparedReads, scope.environmentId, [...unseenOnly.values()]) : [],
      filtered.size > 0 ? store.countFilteredMessages(preparedReads, scope.environmentId, [...filtered.values()]) : [],
    ]);
    const countOf = new Map([
      ...[...unseenOnly.keys()].map((key, index) => [key, unseenCounts[index]!] as const),
      ...[...filtered.keys()].map((key, index) => [key, filteredCounts[index]!] as const),
    ]);
    return resolved.map((item) => (item.key !== undefined ? countOf.get(item.key)! : item.error));
  }

  /**
   * Feed pages for many requests of one environment: their subscriber lookups share one call,
   * their pages one statement, their totals another, and their workflows one lookup.
   */
  async function feedAll(scope: Scope, requests: readonly messagesV1.GetFeedRequest[]) {
    const checked = await Promise.all(
      requests.map(async (request): Promise<CheckedFeed | ConnectError> => {
        try {
          checkRange("limit", request.limit, 1, MAX_FEED_PAGE);
          const offset = pageOffset(request.page, request.limit);
          checkFeedIdentifiers(request.feedIdentifiers);
          const subscriber = await subscribers.require(scope, request.subscriberId);
          const query: store.FeedQuery = {
            subscriberId: subscriber.id,
            feedIdentifiers: request.feedIdentifiers.length > 0 ? request.feedIdentifiers : null,
            read: request.read ?? null,
            seen: request.seen ?? null,
            payload: request.payload ?? null,
            offset,
            limit: request.limit,
          };
          return { query, subscriber };
        } catch (error) {
          // Only request-level failures answer one item; a failing database fails the whole call.
          if (error instanceof ConnectError) return error;
          throw error;
        }
      }),
    );
    const valid = checked.filter((item): item is CheckedFeed => !(item instanceof ConnectError));
    const queries = valid.map((item) => item.query);
    const rows = queries.length ? await store.selectFeedPages(preparedReads, scope.environmentId, queries) : [];
    const rowsOf = queries.map((): store.MessageRow[] => []);
    for (const row of rows) rowsOf[row.position - 1]!.push(row);
    const pages = valid.map(({ query, subscriber }, index): FeedPage => {
      const pageRows = rowsOf[index]!;
      const messages = pageRows.slice(0, query.limit).map(messageFromRow);
      // The reference service's totalCount stops at the page's limit: it is the page's size.
      return { messages, hasMore: pageRows.length > query.limit, totalCount: messages.length, subscriber };
    });
    const found = await workflows.ofMessages(
      scope,
      pages.flatMap((page) => page.messages),
    );
    for (const page of pages) page.workflows = workflowsOf(found, page.messages);
    let next = 0;
    return checked.map((item) => (item instanceof ConnectError ? item : pages[next++]!));
  }

  /**
   * Inbox pages for many requests of one environment: each checked and its subscriber found on
   * its own (an item's failure is its answer); first pages alike but for their subscriber (the
   * same filter) read in one statement, pages after a cursor one statement each, side by side;
   * their workflows found in one lookup.
   */
  async function inboxPagesOf(scope: Scope, requests: readonly messagesV1.ListInboxMessagesRequest[]): Promise<(InboxPage | ConnectError)[]> {
    const checked = await Promise.all(
      requests.map(async (request): Promise<CheckedInbox | ConnectError> => {
        try {
          checkRange("limit", request.limit, 1, MAX_INBOX_PAGE);
          checkRange("offset", request.offset, 0, MAX_OFFSET);
          const filter = checkInboxFilter(request.filter);
          const after = request.after ?? null;
          if (after !== null && !isObjectId(after)) throw invalidField("after", "after must be a notification id (24 hex characters)", after);
          // As Novu pages: a cursor replaces the offset.
          const offset = after === null ? request.offset : 0;
          return { filter, after, offset, limit: request.limit, subscriber: await subscribers.require(scope, request.subscriberId) };
        } catch (error) {
          if (error instanceof ConnectError) return error;
          throw error;
        }
      }),
    );
    const rowsOf = new Map<CheckedInbox, store.MessageRow[]>();
    const firstPages = new Map<string, CheckedInbox[]>();
    const reads: Promise<void>[] = [];
    for (const item of checked) {
      if (item instanceof ConnectError) continue;
      if (item.after === null) {
        const key = JSON.stringify(item.filter);
        const alike = firstPages.get(key);
        if (alike) alike.push(item);
        else firstPages.set(key, [item]);
        continue;
      }
      const page = { filter: item.filter, after: item.after, offset: item.offset, limit: item.limit };
      reads.push(store.selectInboxPage(preparedReads, scope.environmentId, item.subscriber.id, page).then((rows) => void rowsOf.set(item, rows)));
    }
    for (const items of firstPages.values()) {
      const pages = items.map((item) => ({ subscriberId: item.subscriber.id, offset: item.offset, limit: item.limit }));
      reads.push(
        store.selectInboxFirstPages(preparedReads, scope.environmentId, items[0]!.filter, pages).then((rows) => {
          for (const item of items) rowsOf.set(item, []);
          for (const row of rows) rowsOf.get(items[row.position - 1]!)!.push(row);
        }),
      );
    }
    await Promise.all(reads);
    const pages = checked.map((item): InboxPage | ConnectError => {
      if (item instanceof ConnectError) return item;
      const rows = rowsOf.get(item)!;
      return { messages: rows.slice(0, item.limit).map(messageFromRow), hasMore: rows.length > item.limit, subscriber: item.subscriber, workflows: [] };
    });
    const listed = pages.filter((page): page is InboxPage => !(page instanceof ConnectError));
    const found = await workflows.ofMessages(
      scope,
      listed.flatMap((page) => page.messages),
    );
    for (const page of listed) page.workflows = workflowsOf(found, page.messages);
    return pages;
  }

  /** Why a state change changed nothing, as Novu answers it: no such notification, or one the change does not apply to. */
  async function unappliedChange(
    environmentId: string,
    subscriberId: string,
    messageId: string,
    change: store.InboxChangeName,
    args: store.InboxChangeArguments,
    contextKeys: readonly string[] | null,
  ): Promise<ConnectError> {
    const missing = notFound(`Notification with id ${messageId} not found`);
    if (!(await store.inboxMessageExists(pool, environmentId, subscriberId, messageId, contextKeys))) return missing;
    if (change === "unsnooze") {
      return notFound(`Could not find a snoozed notification with id '${messageId}'. The notification may not exist or may not be in a snoozed state.`);
    }
    if (change === "complete" || change === "revert")
      return failedPrecondition(`Could not perform action on the ${args.actionType} button because it does not exist.`);
    return missing;
  }

  /** The notifications with their messages and the attempts at them: two statements for a page. */
  async function activityOf(scope: Scope, rows: readonly store.NotificationRow[]): Promise<messagesV1.Notification[]> {
    if (rows.length === 0) return [];
    const named = rows.map((row) => ({ notificationId: row.id, externalSubscriberId: row.external_subscriber_id }));
    const [messageRows, detailRows, stepJobRows] = await Promise.all([
      store.selectNotificationMessages(pool, scope.environmentId, rows, MAX_NOTIFICATION_MESSAGES),
      store.selectExecutionDetails(pool, scope.environmentId, named, MAX_EXECUTION_DETAILS),
      store.selectStepJobs(
        pool,
        scope.environmentId,
        rows.map((row) => row.id),
        MAX_NOTIFICATION_MESSAGES,
      ),
    ]);
    const messagesOf = byNotification(messageRows);
    const detailsOf = byNotification(detailRows);
    const stepJobsOf = byNotification(stepJobRows);
    return rows.map((row) => notificationFromRow(row, messagesOf.get(row.id) ?? [], detailsOf.get(row.id) ?? [], stepJobsOf.get(row.id) ?? []));
  }

  /**
   * Creates the notifications that do not exist yet and sets each row's id to its notification's:
   * every id is chosen by the caller, so what the insert does not answer existed before this call
   * (or earlier in it), and those few are read back.
   */
  async function createMissingNotifications(
    tx: Queryable,
    scope: Scope,
    groups: readonly store.NotificationGroupRow[],
    notifications: NotificationDraft[],
  ): Promise<void> {
    const created = await store.insertMissingNotifications(tx, scope.environmentId, scope.organizationId, groups, notifications);
    const earlier = notifications.filter((row) => !created.has(row.id));
    if (earlier.length === 0) return;
    const found = new Map(
      (await store.selectNotificationIds(tx, scope.environmentId, earlier)).map((row) => [keyOf([row.transaction_id, row.subscriber_id]), row.id]),
    );
    for (const row of earlier) row.id = found.get(keyOf([row.transaction_id, row.subscriber_id]))!;
  }

  /**
   * One mark-all chunk. Concurrent mark-alls of one subscriber can lock the same rows in different
   * orders (Postgres may walk them by index or by heap page), and Postgres then rolls one
   * statement back: it changed nothing, so running it again keeps the count exact.
   */
  function markChunk(scope: Scope, target: store.MarkAllScope, after: string, upTo: string | null): Promise<number> {
    return retryOnDeadlock(DEADLOCK_ATTEMPTS, () => store.markAllInRange(pool, scope.environmentId, target, after, upTo));
  }

  return {
    async createMessages(request, context) {
      announceKeys(context, ChangeKind.FEEDS, feedsCreatedIn(request));
      const scope = scopeOf(context);
      const groups = checkNewMessages(request);
      if (groups.length === 0) return { messages: [] };
      const groupRows = groups.map((group, grp) => messageGroupRow(group.message!, grp));
      const notifications = notificationsNamed();
      const rows = groups.flatMap((group, grp) => {
        const shared = groupRows[grp]!;
        return group.recipients.map((recipient) => {
          const notification = notifications.of(shared.transaction_id, recipient, grp);
          return {
            id: objectId(),
            notification,
            notification_id: notification.id,
            subscriber_id: recipient.subscriberId,
            external_subscriber_id: recipient.externalSubscriberId,
            grp,
          };
        });
      });
      const notificationRows = notifications.rows();
      // Nearly always everything is new (a job's first delivery): plain INSERTs, with no conflict
      // check per row and no ids to read back. A redelivered job, or a step after a delay whose
      // notification an earlier step made, fails them on a unique key; then the careful path below.
      try {
        await withTransaction(pool, async (tx) => {
          await store.insertNewNotifications(tx, scope.environmentId, scope.organizationId, groupRows, notificationRows);
          await store.insertNewMessages(tx, scope.environmentId, scope.organizationId, groupRows, rows);
        });
        announceKeys(context, ChangeKind.RECEIVED, receivedKeys(groupRows, rows));
        if (request.countOnly) return { createdCount: rows.length };
        return { createdCount: rows.length, messages: rows.map((row) => ({ id: row.id, notificationId: row.notification_id, created: true })) };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      return withTransaction(pool, async (tx) => {
        await createMissingNotifications(tx, scope, groupRows, notificationRows);
        for (const row of rows) row.notification_id = row.notification.id;
        const inserted = await store.insertMissingMessages(tx, scope.environmentId, scope.organizationId, groupRows, rows);
        // Announced when the handler ends; should the commit fail, the ids name no message a follower can find.
        announceKeys(
          context,
          ChangeKind.RECEIVED,
          receivedKeys(
            groupRows,
            rows.filter((row) => inserted.has(row.id)),
          ),
        );
        if (request.countOnly) return { createdCount: inserted.size };
        const keyOfRow = (row: store.RecipientRow) => {
          const shared = groupRows[row.grp]!;
          return {
            transaction_id: shared.transaction_id,
            subscriber_id: row.subscriber_id,
            step_id: shared.step_id,
            channel: shared.channel,
            destination: shared.destination,
          };
        };
        const messageKey = (key: store.MessageKey) => keyOf([key.transaction_id, key.subscriber_id, key.step_id, key.channel, key.destination]);
        const repeated = rows.filter((row) => !inserted.has(row.id)).map(keyOfRow);
        // A key named twice in one call is inserted for its first mention; the others find it here.
        const existing = new Map(
          (repeated.length > 0 ? await store.selectMessageIdsByKeys(tx, scope.environmentId, repeated) : []).map((row) => [messageKey(row), row]),
        );
        return {
          createdCount: inserted.size,
          messages: rows.map((row) => {
            if (inserted.has(row.id)) return { id: row.id, notificationId: row.notification_id, created: true };
            const found = existing.get(messageKey(keyOfRow(row)))!;
            return { id: found.id, notificationId: found.notification_id, created: false, writtenAt: timestampFromDate(found.created_at) };
          }),
        };
      });
    },

    async markMessages(request, context) {
      const scope = scopeOf(context);
      const markAs = markAsOf(request.markAs);
      checkMessageIds(request.messageIds);
      const subscriber = await subscribers.require(scope, request.subscriberId);
      const rows = await store.markMessages(pool, scope.environmentId, subscriber.id, [...new Set(request.messageIds)], markAs);
      const order = new Map(request.messageIds.map((id, index) => [id, index]));
      rows.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
      return { messages: rows.map(messageFromRow) };
    },

    /**
     * Walks the matching messages in id order, one UPDATE per chunk, each its own transaction:
     * locks are held for one chunk only and other requests run in between, so a mark-all over a
     * million messages is not atomic (a reader may see it half done) but its count is exact.
     */
    async markAllMessages(request, context) {
      const scope = scopeOf(context);
      const markAs = markAsOf(request.markAs);
      checkFeedIdentifiers(request.feedIdentifiers);
      const subscriber = await subscribers.require(scope, request.subscriberId);
      const target: store.MarkAllScope = {
        subscriberId: subscriber.id,
        markAs,
        feedIdentifiers: request.feedIdentifiers.length > 0 ? request.feedIdentifiers : null,
      };
      let changed = 0;
      let after = "";
      for (;;) {
        const end = await store.selectMarkAllChunkEnd(pool, scope.environmentId, target, after, markAllChunkRows);
        changed += await markChunk(scope, target, after, end ?? null);
        if (end === undefined) return { changed };
        after = end;
      }
    },

    async batchCountMessages(request, context) {
      const scope = scopeOf(context);
      boundBatch("counts", request.counts.length, MAX_COUNT_BATCH);
      const answers = await countAll(scope, request.counts);
      return {
        results: answers.map((answer) => batchResult(answer, "count")),
      };
    },

    async batchGetFeed(request, context) {
      const scope = scopeOf(context);
      boundBatch("feeds", request.feeds.length, MAX_FEED_BATCH);
      const answers = await feedAll(scope, request.feeds);
      return {
        results: answers.map((answer) => batchResult(answer, "feed")),
      };
    },

    async listMessages(request, context) {
      const scope = scopeOf(context);
      checkRange("limit", request.limit, 1, MAX_LIST_PAGE);
      const offset = pageOffset(request.page, request.limit);
      const channel = channelFilter(request.channel);
      // A subscriber that does not exist is not found, as Novu answers it.
      const subscriberId = request.subscriberId === undefined ? null : (await subscribers.require(scope, request.subscriberId)).id;
      const filters: store.ListFilters = {
        channel,
        subscriberId,
        transactionIds: request.transactionIds.length > 0 ? request.transactionIds : null,
        contextKeys: contextsNamed(request.contextKeys),
      };
      const [rows, totalCount] = await Promise.all([
        store.selectMessagePage(pool, scope.environmentId, filters, offset, request.limit),
        store.countListedMessages(pool, scope.environmentId, filters, COUNT_CAP),
      ]);
      const messages = rows.slice(0, request.limit).map(messageFromRow);
      const [pageSubscribers, pageWorkflows] = await Promise.all([
        subscribers.findByIds(
          scope,
          messages.map((message) => message.subscriberId),
        ),
        workflows.ofMessages(scope, messages),
      ]);
      return {
        messages,
        hasMore: rows.length > request.limit,
        totalCount,
        totalCountCapped: totalCount >= COUNT_CAP,
        subscribers: pageSubscribers,
        workflows: pageWorkflows,
      };
    },

    async deleteMessage(request, context) {
      const scope = scopeOf(context);
      if (!isObjectId(request.messageId)) throw invalidField("messageId", "messageId must be a message id (24 hex characters)", request.messageId);
      const { deleted, feeds } = await store.deleteMessage(pool, scope.environmentId, request.messageId);
      if (deleted === 0) throw notFound(`Message with id ${request.messageId} not found`);
      announceKeys(context, ChangeKind.FEEDS, feeds);
      return {};
    },

    async deleteTransactionMessages(request, context) {
      const scope = scopeOf(context);
      if (request.transactionId.length === 0) throw invalidField("transactionId", "transactionId must not be empty", request.transactionId);
      const channel = channelFilter(request.channel);
      const { deleted, feeds } = await store.deleteTransactionMessages(pool, scope.environmentId, request.transactionId, channel);
      announceKeys(context, ChangeKind.FEEDS, feeds);
      // As Novu answers: not found only when the transaction has no message at all, whatever the channel asked.
      if (deleted === 0 && (channel === null || !(await store.transactionHasMessages(pool, scope.environmentId, request.transactionId)))) {
        throw notFound("Invalid transactionId or channel");
      }
      return { deleted };
    },

    async deleteSubscriberMessages(request, context) {
      const scope = scopeOf(context);
      if (!isObjectId(request.internalSubscriberId)) {
        throw invalidField("internalSubscriberId", "internalSubscriberId must be a subscriber id (24 hex characters)", request.internalSubscriberId);
      }
      const from = request.after === undefined ? undefined : walkPointOf(request.after);
      const { inApp, others, reached } = await store.deleteSubscriberMessages(
        pool,
        scope.environmentId,
        request.internalSubscriberId,
        SUBSCRIBER_DELETE_BATCH,
        from,
      );
      const walkedFrom = reached ?? from;
      return {
        deleted: inApp + others,
        hasMore: inApp === SUBSCRIBER_DELETE_BATCH || others === SUBSCRIBER_DELETE_BATCH,
        ...(walkedFrom ? { next: `${walkedFrom.id}@${walkedFrom.createdAt}` } : {}),
      };
    },

    async recordStepJobs(request, context) {
      const scope = scopeOf(context);
      const statuses = checkStepJobGroups(request);
      const now = new Date();
      const groupRows = request.groups.map((group, grp) => stepJobGroupRow(group, grp, statuses[grp]!, now));
      const notifications = notificationsNamed();
      const jobs = request.groups.flatMap((group, grp) =>
        group.recipients.map((recipient) => ({ notification: notifications.of(group.transactionId, recipient, grp), grp })),
      );
      if (jobs.length === 0) return { changed: 0 };
      const changed = await withTransaction(pool, async (tx) => {
        await createMissingNotifications(tx, scope, groupRows, notifications.rows());
        // One change per job (a statement changes a row once: the last named wins), sorted so
        // that concurrent calls over the same jobs mostly take them in the same order.
        const rows = new Map<string, store.StepJobRow>();
        for (const { notification, grp } of jobs) {
          const key = keyOf([notification.id, groupRows[grp]!.step_id]);
          rows.delete(key);
          rows.set(key, { id: objectId(), notification_id: notification.id, grp });
        }
        const ordered = [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
        return store.upsertStepJobs(tx, scope.environmentId, scope.organizationId, groupRows, ordered);
      });
      return { changed };
    },

    async cancelStepJobs(request, context) {
      const scope = scopeOf(context);
      if (request.transactionId.length === 0) throw invalidField("transactionId", "transactionId must not be empty", request.transactionId);
      // A walk of the transaction's notifications, a chunk per statement: a broadcast's has one per subscriber.
      let canceled = 0;
      let after = "";
      for (;;) {
        const chunk = await store.cancelWaitingStepJobs(pool, scope.environmentId, request.transactionId, after, STEP_JOB_CANCEL_CHUNK);
        canceled += chunk.canceled;
        if (chunk.last === null) return { canceled };
        after = chunk.last;
      }
    },

    async resumeDigestJobs(request, context) {
      boundBatch("digests", request.digests.length, MAX_RESUMED_DIGESTS);
      if (request.digests.length === 0) return { resumed: 0 };
      return { resumed: await store.resumeMergedDigestJobs(pool, scopeOf(context).environmentId, request.digests) };
    },

    async recordDeliveries(request, context) {
      boundBatch("attempts", request.attempts.length, MAX_ATTEMPT_BATCH);
      const rows = request.attempts.map((attempt, index) => {
        const status = attemptStatusName(attempt.status);
        if (!status) throw invalidField(`attempts.${index}.status`, "status must be SUCCESS or FAILED", attempt.status);
        if (!isObjectId(attempt.messageId))
          throw invalidField(`attempts.${index}.messageId`, "messageId must be a message id (24 hex characters)", attempt.messageId);
        if (attempt.attempt < 1) throw invalidField(`attempts.${index}.attempt`, "attempt counts from 1", attempt.attempt);
        return attemptRow(attempt, status, objectId());
      });
      if (rows.length === 0) return { recorded: 0 };
      // A batch of a few sends' attempts: on the prepared pool its statement is planned once per connection.
      return { recorded: await store.recordDeliveryAttempts(preparedReads, scopeOf(context).environmentId, rows) };
    },

    async recordProviderEvents(request, context) {
      boundBatch("events", request.events.length, MAX_PROVIDER_EVENT_BATCH);
      if (request.providerId.length === 0) throw invalidField("providerId", "providerId must not be empty", request.providerId);
      const rows = request.events.map((event, index) => {
        if (event.providerMessageId.length === 0)
          throw invalidField(`events.${index}.providerMessageId`, "providerMessageId must not be empty", event.providerMessageId);
        if (!/^[a-z]{1,32}$/.test(event.status))
          throw invalidField(`events.${index}.status`, "status must be an event status (delivered, opened, …)", event.status);
        return providerEventRow(event, objectId());
      });
      if (rows.length === 0) return { matched: [] };
      const positions = await store.recordProviderEvents(pool, scopeOf(context).environmentId, request.providerId, rows);
      return { matched: positions.map((position) => position - 1) };
    },

    async listExecutionDetails(request, context) {
      const scope = scopeOf(context);
      if (!isObjectId(request.notificationId))
        throw invalidField("notificationId", "notificationId must be a notification id (24 hex characters)", request.notificationId);
      if (request.subscriberId.length === 0) throw invalidField("subscriberId", "subscriberId must not be empty", request.subscriberId);
      // As Novu answers it: details are asked of a subscriber that exists.
      if (!(await subscribers.find(scope, request.subscriberId))) throw notFound(`Subscriber not found for id ${request.subscriberId}`);
      const notification = { notificationId: request.notificationId, externalSubscriberId: request.subscriberId };
      const [rows, stepJobs] = await Promise.all([
        store.selectExecutionDetails(pool, scope.environmentId, [notification], MAX_EXECUTION_DETAILS),
        store.selectSubscriberStepJobs(pool, scope.environmentId, request.notificationId, request.subscriberId, MAX_NOTIFICATION_MESSAGES),
      ]);
      return { details: executionDetailsOf(rows, stepJobs).slice(0, MAX_EXECUTION_DETAILS) };
    },

    async listNotifications(request, context) {
      const scope = scopeOf(context);
      checkRange("limit", request.limit, 1, MAX_ACTIVITY_PAGE);
      const offset = pageOffset(request.page, request.limit);
      if (request.templateIds.length > MAX_ACTIVITY_FILTER_VALUES)
        throw invalidField("templateIds", `at most ${MAX_ACTIVITY_FILTER_VALUES} templateIds`, request.templateIds.length);
      const channels = request.channels.map((channel, index) => {
        const name = channelName(channel);
        if (!name) throw invalidField(`channels.${index}`, `channels must be of ${CHANNELS.join(", ")}`, channel);
        return name;
      });
      const severities = request.severities.map((severity, index) => {
        const name = severityName(severity);
        if (!name) throw invalidField(`severities.${index}`, `severities must be of ${SEVERITIES.join(", ")}`, severity);
        return name;
      });
      let subscriberIds: string[] | null = null;
      if (request.subscriberIds.length > 0 || request.emails.length > 0 || request.search !== undefined) {
        const matched = await subscribers.match(scope, request, MAX_MATCHED_SUBSCRIBERS);
        if (matched.hasMore) {
          const field = request.search !== undefined ? "search" : "emails";
          throw invalidField(field, `${field} matches more than ${MAX_MATCHED_SUBSCRIBERS} subscribers: narrow it`, request.search ?? request.emails.length);
        }
        // Filters naming nobody match nothing.
        if (matched.ids.length === 0) return { notifications: [], hasMore: false };
        subscriberIds = matched.ids;
      }
      const filters: store.NotificationFilters = {
        subscriberIds,
        templateIds: request.templateIds.length > 0 ? [...new Set(request.templateIds)] : null,
        transactionId: request.transactionId ?? null,
        channels: channels.length > 0 ? channels : null,
        contextKeys: contextsNamed(request.contextKeys),
        createdAfter: request.createdAfter ? timestampDate(request.createdAfter) : null,
        createdBefore: request.createdBefore ? timestampDate(request.createdBefore) : null,
        severities: severities.length > 0 ? [...new Set(severities)] : null,
        topicKey: request.topicKey ?? null,
      };
      const rows = await store.selectNotificationPage(pool, scope.environmentId, filters, offset, request.limit);
      const notifications = await activityOf(scope, rows.slice(0, request.limit));
      const [pageSubscribers, pageWorkflows] = await Promise.all([subscribers.ofMessages(scope, notifications), workflows.ofMessages(scope, notifications)]);
      return { notifications, hasMore: rows.length > request.limit, subscribers: pageSubscribers, workflows: pageWorkflows };
    },

    async getNotification(request, context) {
      const scope = scopeOf(context);
      if (!isObjectId(request.notificationId))
        throw invalidField("notificationId", "notificationId must be a notification id (24 hex characters)", request.notificationId);
      const row = await store.selectNotification(pool, scope.environmentId, request.notificationId);
      if (!row) throw notFound(`Notification with id ${request.notificationId} not found`);
      const [notification] = await activityOf(scope, [row]);
      const [[subscriber], [workflow]] = await Promise.all([subscribers.ofMessages(scope, [notification!]), workflows.ofMessages(scope, [notification!])]);
      return { notification, ...(subscriber ? { subscriber } : {}), ...(workflow ? { workflow } : {}) };
    },

    async getNotificationStats(_request, context) {
      const now = Date.now();
      const weekAgo = new Date(now - 7 * DAY_MS);
      const monthAgo = new Date(now);
      monthAgo.setUTCMonth(monthAgo.getUTCMonth() - 1);
      return store.countNotificationsSince(pool, scopeOf(context).environmentId, weekAgo, monthAgo);
    },

    async getActivityGraph(request, context) {
      checkRange("days", request.days, 1, MAX_GRAPH_DAYS);
      const rows = await store.selectActivityDays(pool, scopeOf(context).environmentId, new Date(Date.now() - request.days * DAY_MS));
      return { days: rows.map(activityDayFromRow) };
    },

    async listInboxMessages(request, context) {
      const [page] = await inboxPagesOf(scopeOf(context), [request]);
      if (page instanceof ConnectError) throw page;
      return page!;
    },

    async batchListInboxMessages(request, context) {
      const scope = scopeOf(context);
      boundBatch("lists", request.lists.length, MAX_FEED_BATCH);
      const pages = await inboxPagesOf(scope, request.lists);
      return {
        results: pages.map((page) => batchResult(page, "page")),
      };
    },

    async countInboxMessages(request, context) {
      const scope = scopeOf(context);
      if (request.filters.length === 0 || request.filters.length > MAX_INBOX_FILTERS) {
        throw invalidField("filters", `between 1 and ${MAX_INBOX_FILTERS} filters`, request.filters.length);
      }
      checkRange("limit", request.limit, 1, MAX_INBOX_COUNT);
      const filters = request.filters.map(checkInboxFilter);
      const subscriber = await subscribers.require(scope, request.subscriberId);
      const counts = await store.countInboxMessages(preparedReads, scope.environmentId, subscriber.id, filters, request.limit + 1);
      return { counts: counts.map(cappedAt(request.limit)) };
    },

    async updateInboxMessage(request, context) {
      const scope = scopeOf(context);
      const change = inboxChangeName(request.change);
      if (!isObjectId(request.messageId)) throw invalidField("messageId", "messageId must be a notification id (24 hex characters)", request.messageId);
      const args: store.InboxChangeArguments = { snoozeUntil: null, actionType: null, actionPayload: null, v1Action: request.v1Action };
      if (change === "snooze") args.snoozeUntil = checkSnoozeUntil(request.snoozeUntil, maxSnoozeMs);
      if (change === "complete" || change === "revert") {
        args.actionType = actionTypeName(request.actionType) ?? null;
        if (!args.actionType) throw invalidField("actionType", "actionType must be primary or secondary", request.actionType);
        args.actionPayload = request.actionPayload ?? null;
      }
      const subscriber = await subscribers.require(scope, request.subscriberId);
      const contextKeys = contextScopeOf(request);
      const row = await store.updateInboxMessage(pool, scope.environmentId, subscriber.id, request.messageId, change, args, contextKeys);
      if (!row) throw await unappliedChange(scope.environmentId, subscriber.id, request.messageId, change, args, contextKeys);
      const message = messageFromRow(row);
      // A snooze that fails to be scheduled still ends: the lists treat a due snooze as none.
      if (args.snoozeUntil) await snoozes.schedule(scope, { id: row.id, transactionId: row.transaction_id }, args.snoozeUntil);
      const [workflow] = await workflows.ofMessages(scope, [message]);
      return { message, subscriber, ...(workflow ? { workflow } : {}) };
    },

    async bulkUpdateInboxMessages(request, context) {
      const scope = scopeOf(context);
      const change = inboxBulkChangeName(request.change);
      if (request.messageIds.length > MAX_MARKED_IDS) throw invalidField("notificationIds", `at most ${MAX_MARKED_IDS} ids`, request.messageIds.length);
      const malformed = request.messageIds.find((id) => !isObjectId(id));
      if (malformed !== undefined) throw invalidField("notificationIds", "each id must be a notification id (24 hex characters)", malformed);
      const given = checkInboxFilter(request.filter);
      // Only tags, data, the feed and the session's contexts select what a bulk change changes.
      const filter: store.InboxFilter = {
        ...checkInboxFilter(undefined),
        tagGroups: given.tagGroups,
        dataGroups: given.dataGroups,
        contextKeys: given.contextKeys,
        feedId: given.feedId,
      };
      const subscriber = await subscribers.require(scope, request.subscriberId);
      const ids = request.messageIds.length > 0 ? [...new Set(request.messageIds)] : null;
      // In chunks, each its own statement, as mark-all: a subscriber's million messages never
      // hold locks and a connection in one statement. Each chunk takes only messages the change
      // still changes, so the walk ends.
      let changed = 0;
      for (;;) {
        const chunk =
          change === "delete"
            ? await store.deleteInboxMessages(pool, scope.environmentId, subscriber.id, ids, filter, markAllChunkRows)
            : await store.bulkUpdateInboxMessages(pool, scope.environmentId, subscriber.id, change, ids, filter, markAllChunkRows);
        changed += chunk;
        if (chunk < markAllChunkRows) return { changed };
      }
    },

    async deleteInboxMessage(request, context) {
      const scope = scopeOf(context);
      if (!isObjectId(request.messageId)) throw invalidField("messageId", "messageId must be a notification id (24 hex characters)", request.messageId);
      const subscriber = await subscribers.require(scope, request.subscriberId);
      const filter: store.InboxFilter = { ...checkInboxFilter(undefined), contextKeys: contextScopeOf(request) };
      const deleted = await store.deleteInboxMessages(pool, scope.environmentId, subscriber.id, [request.messageId], filter, 1);
      if (deleted === 0) throw notFound(`Notification with id ${request.messageId} not found`);
      return {};
    },

    async batchGetInboxCounts(request, context) {
      const scope = scopeOf(context);
      if (request.subscriberIds.length > MAX_COUNT_BATCH) {
        throw invalidField("subscriberIds", `at most ${MAX_COUNT_BATCH} subscribers per call`, request.subscriberIds.length);
      }
      checkRange("limit", request.limit, 1, MAX_INBOX_COUNT);
      const contextKeys = checkContextKeys(request.contextKeys);
      const found = await Promise.all(
        request.subscriberIds.map(async (subscriberId) => {
          try {
            return await subscribers.require(scope, subscriberId);
          } catch (error) {
            if (error instanceof ConnectError) return error;
            throw error;
          }
        }),
      );
      const known = found.filter((item): item is subscribersV1.Subscriber => !(item instanceof ConnectError));
      const ids = [...new Set(known.map((item) => item.id))];
      const rows = ids.length > 0 ? await store.selectInboxCounts(preparedReads, scope.environmentId, ids, request.limit + 1, contextKeys) : [];
      const rowOf = new Map(ids.map((id, index) => [id, rows[index]!]));
      const capped = cappedAt(request.limit);
      return {
        results: found.map((item, index) => {
          if (item instanceof ConnectError) return { result: { case: "error" as const, value: batchError(item) } };
          const row = rowOf.get(item.id)!;
          return {
            result: {
              case: "counts" as const,
              value: {
                subscriberId: request.subscriberIds[index]!,
                unseen: capped(row.unseen),
                unread: capped(row.unread),
                unreadHigh: capped(row.unread_high),
                unreadMedium: capped(row.unread_medium),
                unreadLow: capped(row.unread_low),
                unreadNone: capped(row.unread_none),
              },
            },
          };
        }),
      };
    },

    async getInAppMessages(request, context) {
      const scope = scopeOf(context);
      if (request.messageIds.length > MAX_MESSAGES_BY_ID) throw invalidField("messageIds", `at most ${MAX_MESSAGES_BY_ID} ids`, request.messageIds.length);
      const ids = request.messageIds.filter(isObjectId);
      const rows = ids.length > 0 ? await store.selectInAppMessages(pool, scope.environmentId, ids) : [];
      const byId = new Map(rows.map((row) => [row.id, messageFromRow(row)]));
      const messages = [...new Set(ids)].flatMap((id) => byId.get(id) ?? []);
      const [found, used] = await Promise.all([subscribers.ofMessages(scope, messages), workflows.ofMessages(scope, messages)]);
      return { messages, subscribers: found, workflows: used };
    },

    async returnSnoozedMessage(request, context) {
      const scope = scopeOf(context);
      if (!isObjectId(request.messageId)) throw invalidField("messageId", "messageId must be a message id (24 hex characters)", request.messageId);
      if (!request.snoozedUntil) throw invalidField("snoozedUntil", "snoozedUntil is required");
      const subscriberId = await store.returnSnoozedMessage(pool, scope.environmentId, request.messageId, timestampDate(request.snoozedUntil));
      if (subscriberId === undefined) return { returned: false };
      announceKeys(context, ChangeKind.FEEDS, [subscriberId]);
      announceKeys(context, ChangeKind.RECEIVED, [receivedKey(request.messageId, subscriberId)]);
      return { returned: true };
    },
  };
}

/** A count read up to `limit + 1`, as the count up to `limit` and whether more exist. */
const cappedAt = (limit: number) => (count: number) => ({ count: Math.min(count, limit), hasMore: count > limit });

/** How a RECEIVED announcement names a message that arrived (options.proto). */
export const receivedKey = (messageId: string, externalSubscriberId: string) => `${messageId}:${externalSubscriberId}`;

function checkSnoozeUntil(until: Timestamp | undefined, maxMs: number): Date {
  if (!until) throw invalidField("snoozeUntil", "snoozeUntil is required");
  const date = timestampDate(until);
  const ahead = date.getTime() - Date.now();
  if (!(ahead > 0)) throw invalidField("snoozeUntil", "snoozeUntil must be in the future", date.toISOString());
  if (ahead > maxMs) throw invalidField("snoozeUntil", `snoozeUntil must be at most ${maxMs / 3_600_000} hours ahead`, date.toISOString());
  return date;
}
