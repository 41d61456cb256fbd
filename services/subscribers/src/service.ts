import { isDeepStrictEqual } from "node:util";
import type { ConnectError, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { commonV1, subscribersV1 } from "@notify/proto";
import {
  alreadyExists,
  fieldErrorsOf,
  holdsNul,
  invalidArgument,
  invalidField,
  keysetPage,
  keysetRead,
  objectId,
  readOffsetPage,
  scopeOf,
  subscriberNotFound,
  withTransaction,
  type FieldErrors,
  type Logger,
  type Pool,
  type Queryable,
  type Scope,
  boundBatch,
  pageLimit,
} from "@notify/runtime";
import { EMPTY_PROFILE, applyFields, isFieldName, profileOf, recipientFromRow, sameProfile, subscriberFromRow, type FieldName } from "./mapping.js";
import { createChannelHandlers, createChannelWriter, type ChannelHandlerDeps, type PreparedWrites } from "./channel-handlers.js";
import { createPreferenceHandlers, type PreferenceHandlerDeps } from "./preference-handlers.js";
import { createChannelEndpointHandlers } from "./channel-endpoints/service.js";
import * as store from "./store.js";
import { checkSubscriberWrite, subscriberWriteErrors } from "./validation.js";

const { SortDirection } = commonV1;

/** Counts stop here: an exact count over millions of rows would cost more than the page itself. */
export const COUNT_CAP = 10_000;
/** The gateway caps public pages at 100; internal callers (the worker's fan-out) page by up to 1000. */
export const MAX_PAGE_SIZE = 1000;
const DEFAULT_PAGE_SIZE = 10;
const SUBSCRIBER_PAGE = { fallback: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE };
export const MAX_BATCH = 1000;
/** Values of each list MatchSubscribers takes. */
export const MAX_MATCH_VALUES = 100;
/** Channels a subscriber is created or upserted with. */
export const MAX_UPSERT_CHANNELS = 100;

export interface SubscriberServiceDeps extends ChannelHandlerDeps, PreferenceHandlerDeps {
  pool: Pool;
  log: Logger;
  /** Puts the job on the job stream; rejects (UNAVAILABLE) when the stream has not taken it. */
  publishDeleted(job: subscribersV1.SubscriberDeletedJob): Promise<void>;
}

function clearedNames(cleared: subscribersV1.ClearedFields | undefined): FieldName[] {
  const names = cleared?.names ?? [];
  for (const name of names) if (!isFieldName(name)) throw invalidField(name, `${name} cannot be cleared`);
  return names as FieldName[];
}

/** A channel that cannot be applied, as the upsert reports it: its field errors named under channels[index]. */
function channelFailure(index: number, error: ConnectError): ConnectError {
  const fields = fieldErrorsOf(error);
  if (!fields) return error;
  return invalidArgument(error.rawMessage, Object.fromEntries(Object.entries(fields).map(([field, entry]) => [`channels[${index}].${field}`, entry])));
}

export function createSubscriberService(deps: SubscriberServiceDeps): ServiceImpl<typeof subscribersV1.SubscriberService> {
  const { pool } = deps;
  const channelWriter = createChannelWriter(deps);

  /** The channels an upsert gives, checked and bound before its transaction. */
  function prepareChannels(scope: Scope, context: HandlerContext, request: Pick<subscribersV1.UpsertSubscriberRequest, "subscriberId" | "channels">) {
    if (request.channels.length > MAX_UPSERT_CHANNELS) {
      throw invalidField("channels", `channels must contain no more than ${MAX_UPSERT_CHANNELS} elements`, request.channels.length);
    }
    return channelWriter.prepare(
      scope,
      context,
      request.channels.map((channel) => ({ ...channel, subscriberId: request.subscriberId })),
    );
  }

  /** The subscriber (locked by `tx`) with the prepared channels applied in append mode; one that cannot be applied fails the call. */
  async function withChannels(tx: Queryable, scope: Scope, row: store.SubscriberRow, prepared: PreparedWrites): Promise<store.SubscriberRow> {
    if (prepared.writes.length === 0) return row;
    const channels = new Map([[row.subscriber_id, row.channels]]);
    const outcomes = channelWriter.merge(scope, prepared, channels, false);
    for (const [index, outcome] of outcomes.entries()) if (!outcome.applied) throw channelFailure(index, outcome.error);
    const merged = channels.get(row.subscriber_id)!;
    if (isDeepStrictEqual(merged, row.channels)) return row;
    const [updated] = await store.updateChannels(tx, scope.environmentId, [{ id: row.id, channels: merged }]);
    return updated!;
  }

  return {
    ...createChannelHandlers(deps),
    ...createPreferenceHandlers(deps),
    ...createChannelEndpointHandlers(deps),

    async upsertSubscriber(request, context) {
      const scope = scopeOf(context);
      checkSubscriberWrite(request.subscriberId, request.fields);
      const cleared = clearedNames(request.cleared);
      const channels = await prepareChannels(scope, context, request);
      return withTransaction(pool, async (tx) => {
        let existing = await store.selectSubscriberForUpdate(tx, scope.environmentId, request.subscriberId);
        if (!existing) {
          const inserted = await store.insertSubscriber(tx, scope.environmentId, {
            id: objectId(),
            organizationId: scope.organizationId,
            subscriberId: request.subscriberId,
            profile: applyFields(EMPTY_PROFILE, request.fields, cleared),
          });
          if (inserted) return { subscriber: subscriberFromRow(await withChannels(tx, scope, inserted, channels)), created: true };
          // A concurrent request created it between our read and insert: update that one instead.
          existing = (await store.selectSubscriberForUpdate(tx, scope.environmentId, request.subscriberId))!;
        }
        if (request.failIfExists) throw alreadyExists(`Subscriber with id "${request.subscriberId}" already exists`);
        const profile = applyFields(profileOf(existing), request.fields, cleared);
        const row = sameProfile(profile, profileOf(existing)) ? existing : await store.updateSubscriberProfile(tx, scope.environmentId, existing.id, profile);
        return { subscriber: subscriberFromRow(await withChannels(tx, scope, row, channels)), created: false };
      });
    },

    async updateSubscriber(request, context) {
      const scope = scopeOf(context);
      checkSubscriberWrite(request.subscriberId, request.fields);
      const cleared = clearedNames(request.cleared);
      const channels = await prepareChannels(scope, context, request);
      return withTransaction(pool, async (tx) => {
        const existing = await store.selectSubscriberForUpdate(tx, scope.environmentId, request.subscriberId);
        if (!existing) throw subscriberNotFound(request.subscriberId);
        const profile = applyFields(profileOf(existing), request.fields, cleared);
        const row = sameProfile(profile, profileOf(existing)) ? existing : await store.updateSubscriberProfile(tx, scope.environmentId, existing.id, profile);
        return subscriberFromRow(await withChannels(tx, scope, row, channels));
      });
    },

    async setSubscribersOnline(request, context) {
      const scope = scopeOf(context);
      if (request.subscriberIds.length > MAX_BATCH) throw invalidField("subscriberIds", `at most ${MAX_BATCH} ids per call`, request.subscriberIds.length);
      const subscriberIds = request.subscriberIds.filter((id) => !holdsNul(id));
      if (subscriberIds.length === 0) return { changed: 0 };
      return { changed: await store.updateOnlineStatus(pool, scope.environmentId, subscriberIds, request.isOnline) };
    },

    async deleteSubscriber(request, context) {
      const scope = scopeOf(context);
      return withTransaction(pool, async (tx) => {
        const id = await store.deleteSubscriber(tx, scope.environmentId, request.subscriberId);
        if (!id) throw subscriberNotFound(request.subscriberId);
        // Published before the commit: a job the stream refuses rolls the delete back, and the
        // worker acts on a job only once the subscriber is gone from committed data.
        await deps.publishDeleted(
          create(subscribersV1.SubscriberDeletedJobSchema, {
            organizationId: scope.organizationId,
            environmentId: scope.environmentId,
            id,
            subscriberId: request.subscriberId,
            deleteMessages: request.deleteMessages,
          }),
        );
        return { id };
      });
    },

    async batchGetSubscribers(request, context) {
      const scope = scopeOf(context);
      const count = request.subscriberIds.length + request.ids.length;
      if (count > MAX_BATCH) throw invalidField("subscriberIds", `at most ${MAX_BATCH} ids per call`, count);
      if (count === 0) return { subscribers: [] };
      // An id no row can hold is absent like any unknown one; sent along, it would fail the
      // statement, and with it the lookups of every caller batched into this call.
      const rows = await store.selectSubscribersByIds(
        pool,
        scope.environmentId,
        request.subscriberIds.filter((id) => !holdsNul(id)),
        request.ids.filter((id) => !holdsNul(id)),
      );
      return { subscribers: rows.map(subscriberFromRow) };
    },

    async matchSubscribers(request, context) {
      const scope = scopeOf(context);
      if (request.limit < 1 || request.limit > MAX_BATCH) throw invalidField("limit", `limit must be between 1 and ${MAX_BATCH}`, request.limit);
      if (request.subscriberIds.length > MAX_MATCH_VALUES)
        throw invalidField("subscriberIds", `at most ${MAX_MATCH_VALUES} subscriberIds`, request.subscriberIds.length);
      if (request.emails.length > MAX_MATCH_VALUES) throw invalidField("emails", `at most ${MAX_MATCH_VALUES} emails`, request.emails.length);
      const match: store.SubscriberMatch = { subscriberIds: request.subscriberIds, emails: request.emails, search: request.search ?? null };
      const ids = await store.selectMatchingSubscriberIds(pool, scope.environmentId, match, request.limit + 1);
      return { ids: ids.slice(0, request.limit), hasMore: ids.length > request.limit };
    },

    async pageRecipients(request, context) {
      const scope = scopeOf(context);
      const limit = pageLimit(request.limit, SUBSCRIBER_PAGE);
      const { page, cursors } = keysetPage(await store.selectRecipientPage(pool, scope.environmentId, request.after, limit), limit, request);
      return { recipients: page.map(recipientFromRow), ...(cursors.next ? { next: cursors.next } : {}) };
    },

    async batchGetRecipients(request, context) {
      const scope = scopeOf(context);
      boundBatch("ids", request.ids.length, MAX_BATCH);
      if (request.ids.length === 0) return { recipients: [] };
      return { recipients: (await store.selectRecipientsByIds(pool, scope.environmentId, request.ids)).map(recipientFromRow) };
    },

    async ensureSubscribers(request, context) {
      const scope = scopeOf(context);
      boundBatch("subscribers", request.subscribers.length, MAX_BATCH);
      if (request.strict) {
        const errors: FieldErrors = {};
        for (const [index, entry] of request.subscribers.entries()) {
          for (const [field, error] of Object.entries(subscriberWriteErrors(entry.subscriberId, entry.fields)))
            errors[`subscribers[${index}].${field}`] = error;
        }
        if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
      }
      const wanted = request.subscribers.filter((entry) => entry.subscriberId.length > 0 && entry.subscriberId.length <= 255);
      if (wanted.length === 0) return { subscribers: [] };
      const rows = wanted.map((entry) => {
        const invalid = subscriberWriteErrors(entry.subscriberId, entry.fields);
        const fields = entry.fields ? { ...entry.fields } : undefined;
        if (fields) for (const name of Object.keys(invalid)) delete (fields as Record<string, unknown>)[name];
        return { id: objectId(), subscriberId: entry.subscriberId, profile: applyFields(EMPTY_PROFILE, fields, []) };
      });
      if (rows.every((row) => sameProfile(row.profile, EMPTY_PROFILE))) {
        // Ids alone, a trigger's usual recipients, change no profile: the missing ones are inserted
        // in one statement, with no transaction and no UPDATE round trips around it.
        await store.insertMissingSubscribers(pool, scope.environmentId, scope.organizationId, rows);
      } else {
        await withTransaction(pool, async (tx) => {
          await store.insertMissingSubscribers(tx, scope.environmentId, scope.organizationId, rows);
          await store.applyProfiles(tx, scope.environmentId, rows);
        });
      }
      const found = await store.selectSubscribersByIds(
        pool,
        scope.environmentId,
        rows.map((row) => row.subscriberId),
        [],
      );
      // An id generated here is in the table only if this call inserted its row.
      const generated = new Set(rows.map((row) => row.id));
      return {
        subscribers: found.map(subscriberFromRow),
        createdSubscriberIds: found.filter((row) => generated.has(row.id)).map((row) => row.subscriber_id),
      };
    },

    async listSubscribers(request, context) {
      const scope = scopeOf(context);
      const limit = pageLimit(request.limit, SUBSCRIBER_PAGE);
      const { rows, ...page } = await readOffsetPage(
        { page: request.page, limit, countCap: COUNT_CAP },
        (offset) => store.selectSubscriberPage(pool, scope.environmentId, offset, limit),
        (cap) => store.countSubscribers(pool, scope.environmentId, cap),
      );
      return { subscribers: rows.map(subscriberFromRow), ...page };
    },

    async searchSubscribers(request, context) {
      const scope = scopeOf(context);
      const read = keysetRead({ ...request, descending: request.direction !== SortDirection.ASC }, SUBSCRIBER_PAGE);
      const filters: store.SearchFilters = {
        ...(request.email !== undefined ? { email: request.email } : {}),
        ...(request.phone !== undefined ? { phone: request.phone } : {}),
        ...(request.subscriberId !== undefined ? { subscriberId: request.subscriberId } : {}),
        ...(request.name !== undefined ? { name: request.name } : {}),
      };
      const [fetched, totalCount] = await Promise.all([
        store.selectSubscriberKeysetPage(pool, scope.environmentId, { ...read, byUpdatedAt: request.byUpdatedAt, filters }),
        store.countSubscribers(pool, scope.environmentId, COUNT_CAP, filters, read.cursor),
      ]);
      const { page, cursors } = keysetPage(fetched, read.limit, request);
      return {
        subscribers: page.map(subscriberFromRow),
        ...cursors,
        totalCount,
        totalCountCapped: totalCount >= COUNT_CAP,
      };
    },
  };
}
