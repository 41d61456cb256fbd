import { isDeepStrictEqual } from "node:util";
import type { Client, ConnectError, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { integrationsV1, subscribersV1 } from "@notify/proto";
import {
  failedPrecondition,
  fieldErrorsOf,
  invalidArgument,
  scopeHeaders,
  scopeOf,
  subscriberNotFound,
  withTransaction,
  type FieldErrors,
  type Pool,
  type Scope,
  boundBatch,
} from "@notify/runtime";
import {
  channelWriteErrors,
  describeErrors,
  MAX_DEVICE_TOKENS,
  mergeChannel,
  tokenLimitErrors,
  withoutProvider,
  withoutTokens,
  type ChannelWrite,
} from "./channels.js";
import type { StoredChannel } from "./store.js";
import { subscriberFromRow } from "./mapping.js";
import * as store from "./store.js";

/** Credentials entries per ApplyChannelCredentials call. */
export const MAX_CREDENTIAL_ENTRIES = 1000;

export interface ChannelHandlerDeps {
  pool: Pool;
  integrations: Client<typeof integrationsV1.IntegrationService>;
}

export interface SubscriberWrite extends ChannelWrite {
  subscriberId: string;
}

export type Outcome = { applied: true } | { applied: false; error: ConnectError };

/** Writes checked and bound to integrations, ready to merge under row locks. */
export interface PreparedWrites {
  writes: readonly SubscriberWrite[];
  /** The value errors of each write (empty when valid). */
  checks: FieldErrors[];
  /** The integration each distinct provider and identifier binds to (undefined: none active). */
  integrationIds: Map<string, string | undefined>;
}

/** The two halves of every credentials write, shared by the credentials calls and subscriber creation. */
export interface ChannelWriter {
  /**
   * Checks each write and binds the valid ones to an integration, one lookup per distinct
   * provider and identifier. Runs before any transaction, so no row lock waits on another service.
   */
  prepare(scope: Scope, context: HandlerContext, writes: readonly SubscriberWrite[]): Promise<PreparedWrites>;
  /**
   * Merges the writes in order into `channels` (external subscriber id → channels of a subscriber
   * locked by the caller's transaction; entries are replaced as they change). An outcome per write.
   */
  merge(scope: Scope, prepared: PreparedWrites, channels: Map<string, StoredChannel[]>, replaceTokens: boolean): Outcome[];
}

type Handlers = Pick<
  ServiceImpl<typeof subscribersV1.SubscriberService>,
  "updateChannelCredentials" | "deleteChannelCredentials" | "applyChannelCredentials" | "removeDeviceTokens"
>;

const integrationKey = (write: ChannelWrite) => JSON.stringify([write.providerId, write.integrationIdentifier ?? null]);

function noActiveIntegration(scope: Scope, write: ChannelWrite): ConnectError {
  const identifier = write.integrationIdentifier === undefined ? "" : ` with identifier ${write.integrationIdentifier}`;
  return failedPrecondition(`Subscribers environment (${scope.environmentId}) do not have active ${write.providerId} integration${identifier}.`);
}

const writeOf = (request: subscribersV1.UpdateChannelCredentialsRequest | subscribersV1.ChannelCredentialsEntry): SubscriberWrite => ({
  subscriberId: request.subscriberId,
  providerId: request.providerId,
  integrationIdentifier: request.integrationIdentifier,
  credentials: request.credentials,
});

export function createChannelWriter({ integrations }: Pick<ChannelHandlerDeps, "integrations">): ChannelWriter {
  /** The integration each distinct provider and identifier binds to, one lookup per pair. */
  async function bindings(scope: Scope, context: HandlerContext, writes: readonly SubscriberWrite[]) {
    const distinct = new Map(writes.map((write) => [integrationKey(write), write]));
    const call = { headers: scopeHeaders(scope), signal: context.signal };
    const found = await Promise.all(
      [...distinct].map(async ([key, write]) => {
        const reply = await integrations.findActiveIntegration(
          { providerId: write.providerId, ...(write.integrationIdentifier !== undefined ? { identifier: write.integrationIdentifier } : {}) },
          call,
        );
        return [key, reply.integration?.id] as const;
      }),
    );
    return new Map(found);
  }

  return {
    async prepare(scope, context, writes) {
      const checks = writes.map((write) => channelWriteErrors(write));
      const valid = writes.filter((_, index) => Object.keys(checks[index]!).length === 0);
      const integrationIds = valid.length ? await bindings(scope, context, valid) : new Map<string, string | undefined>();
      return { writes, checks, integrationIds };
    },

    merge(scope, { writes, checks, integrationIds }, channels, replaceTokens) {
      return writes.map((write, index): Outcome => {
        const errors = checks[index]!;
        if (Object.keys(errors).length > 0) return { applied: false, error: invalidArgument("Validation failed", errors) };
        const current = channels.get(write.subscriberId);
        if (!current) return { applied: false, error: subscriberNotFound(write.subscriberId) };
        const integrationId = integrationIds.get(integrationKey(write));
        if (!integrationId) return { applied: false, error: noActiveIntegration(scope, write) };
        const next = mergeChannel(current, write, integrationId, replaceTokens);
        const tooMany = tokenLimitErrors(next.merged);
        if (Object.keys(tooMany).length > 0) return { applied: false, error: invalidArgument("Validation failed", tooMany) };
        channels.set(write.subscriberId, next.channels);
        return { applied: true };
      });
    },
  };
}

export function createChannelHandlers({ pool, integrations }: ChannelHandlerDeps): Handlers {
  const writer = createChannelWriter({ integrations });

  /**
   * The one code path of the credentials calls: checks and binds every write, then under row
   * locks merges them in order and stores each changed subscriber once. Answers an outcome per
   * write and the subscribers as they now are.
   */
  async function applyWrites(scope: Scope, context: HandlerContext, writes: readonly SubscriberWrite[], replaceTokens: boolean) {
    const prepared = await writer.prepare(scope, context, writes);
    return withTransaction(pool, async (tx) => {
      const subscriberIds = [...new Set(writes.map((write) => write.subscriberId))];
      const locked = subscriberIds.length ? await store.selectSubscribersForUpdate(tx, scope.environmentId, subscriberIds) : [];
      const channels = new Map(locked.map((row) => [row.subscriber_id, row.channels]));
      const outcomes = writer.merge(scope, prepared, channels, replaceTokens);
      const changed = locked.filter((row) => !isDeepStrictEqual(channels.get(row.subscriber_id), row.channels));
      const updated = changed.length
        ? await store.updateChannels(
            tx,
            scope.environmentId,
            changed.map((row) => ({ id: row.id, channels: channels.get(row.subscriber_id)! })),
          )
        : [];
      const rows = new Map([...locked, ...updated].map((row) => [row.subscriber_id, row]));
      return { outcomes, rows };
    });
  }

  return {
    async updateChannelCredentials(request, context) {
      const scope = scopeOf(context);
      const { outcomes, rows } = await applyWrites(scope, context, [writeOf(request)], request.replaceDeviceTokens);
      const outcome = outcomes[0]!;
      if (!outcome.applied) throw outcome.error;
      return subscriberFromRow(rows.get(request.subscriberId)!);
    },

    async removeDeviceTokens(request, context) {
      const scope = scopeOf(context);
      boundBatch("tokens", request.tokens.length, MAX_DEVICE_TOKENS);
      const tokens = new Set(request.tokens);
      return withTransaction(pool, async (tx) => {
        const row = await store.selectSubscriberForUpdate(tx, scope.environmentId, request.subscriberId);
        if (!row) return { removed: 0 };
        const count = (channels: readonly StoredChannel[]) => channels.reduce((sum, channel) => sum + channel.credentials.deviceTokens.length, 0);
        const remaining = withoutTokens(row.channels, request.integrationId, tokens);
        const removed = count(row.channels) - count(remaining);
        if (removed > 0) await store.updateChannels(tx, scope.environmentId, [{ id: row.id, channels: remaining }]);
        return { removed };
      });
    },

    async deleteChannelCredentials(request, context) {
      const scope = scopeOf(context);
      const errors = channelWriteErrors({ providerId: request.providerId });
      if (Object.keys(errors).length > 0) throw invalidArgument("Validation failed", errors);
      await withTransaction(pool, async (tx) => {
        const row = await store.selectSubscriberForUpdate(tx, scope.environmentId, request.subscriberId);
        if (!row) throw subscriberNotFound(request.subscriberId);
        const remaining = withoutProvider(row.channels, request.providerId);
        if (remaining.length !== row.channels.length) await store.updateChannels(tx, scope.environmentId, [{ id: row.id, channels: remaining }]);
      });
      return {};
    },

    async applyChannelCredentials(request, context) {
      const scope = scopeOf(context);
      boundBatch("entries", request.entries.length, MAX_CREDENTIAL_ENTRIES);
      const writes = request.entries.map(writeOf);
      const { outcomes, rows } = await applyWrites(scope, context, writes, false);
      const appliedTo = new Set(writes.filter((_, index) => outcomes[index]!.applied).map((write) => write.subscriberId));
      return {
        outcomes: outcomes.map((outcome) => {
          if (outcome.applied) return { applied: true };
          const fieldErrors = fieldErrorsOf(outcome.error);
          return { applied: false, reason: fieldErrors ? describeErrors(fieldErrors) : outcome.error.rawMessage };
        }),
        subscribers: [...appliedTo].map((subscriberId) => subscriberFromRow(rows.get(subscriberId)!)),
      };
    },
  };
}
