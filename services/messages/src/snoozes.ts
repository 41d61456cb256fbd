import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { triggersV1 } from "@notify/proto";
import { scopeHeaders, type Scope } from "@notify/runtime";

export type TriggersClient = Client<typeof triggersV1.TriggerService>;

/** Where snoozes are kept until they end: the durable schedule of delays. */
export interface SnoozeSchedule {
  /** Has the message come back at `until` (the worker runs the job then: MessageService.ReturnSnoozedMessage). */
  schedule(scope: Scope, message: { id: string; transactionId: string }, until: Date): Promise<void>;
}

/**
 * Snoozes as jobs of the triggers service's schedule, which the worker consumes like a delay's
 * resumption. A job per snooze: one that ends after the message was snoozed again finds its
 * time changed and changes nothing.
 */
export function createSnoozeSchedule(client: TriggersClient): SnoozeSchedule {
  return {
    async schedule(scope, message, until) {
      const job = create(triggersV1.TriggerJobSchema, {
        // The schedule keeps one job per trigger id, step and time: the message id stands for the trigger.
        triggerId: message.id,
        organizationId: scope.organizationId,
        environmentId: scope.environmentId,
        transactionId: message.transactionId,
        snoozeReturn: { messageId: message.id, snoozedUntil: timestampFromDate(until) },
      });
      await client.scheduleJobs({ jobs: [{ runAt: timestampFromDate(until), job }] }, { headers: scopeHeaders(scope) });
    },
  };
}
