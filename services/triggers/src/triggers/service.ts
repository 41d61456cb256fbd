import { createHash, randomFillSync } from "node:crypto";
import { create, toBinary, type JsonObject } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { triggersV1, workflowsV1 } from "@notify/proto";
import {
  contextKeyOf,
  currentOrigin,
  failedPrecondition,
  invalidField,
  objectId,
  retryOnDeadlock,
  scopeOf,
  StepType,
  withTransaction,
  type FollowedCache,
  type Logger,
  type Pool,
  type Queryable,
} from "@notify/runtime";
import { missingRequiredVariables, missingVariablesMessage, scheduledDate, valueAtPath, variableDefaults, withDefaults } from "@notify/templates";
import { contextsRefusal } from "../contexts/rules.js";
import { batchLayouts } from "../layouts/batch.js";
import { selectTenantsByIdentifiers, type TenantRow } from "../tenants/store.js";
import { selectOverridesActive } from "../workflow-overrides/store.js";
import { workflowFromRow } from "../workflows/mapping.js";
import { payloadErrorMessage, payloadErrors } from "../workflows/payload-schema.js";
import { markWorkflowsTriggered, selectWorkflowByKey } from "../workflows/store.js";
import { cancelDigestsOf, checkDigestIds, digestEvents, digestsRunBy, getDigests } from "./digests.js";
import { passThrottles } from "./throttles.js";
import * as store from "./store.js";

const { TriggerJobSchema } = triggersV1;

/** Events in one call: a coalesced batch of single triggers, a bulk (≤ 100), or a broadcast. */
export const MAX_EVENTS = 1000;

export interface TriggerServiceDeps {
  pool: Pool;
  log: Logger;
  /** Where accepted jobs are published, e.g. notify.jobs.trigger. */
  jobSubject: string;
  workflowsByIdentifier: FollowedCache<workflowsV1.Workflow>;
  /**
   * Whether recipients whose id breaks Novu's rule are dropped (SUBSCRIBER_ID_VALIDATION=enforce);
   * by default they are only logged and notified, as Novu's dry run of the rule does.
   */
  enforceRecipientIds: boolean;
}

/** Novu's rule for recipient ids: a plain token or an email-like id, after trimming. */
const RECIPIENT_ID = /^[a-zA-Z0-9_:.-]+$/;
const EMAIL_LIKE = /^\S+@\S+\.\S+$/;
const isValidRecipientId = (id: string) => RECIPIENT_ID.test(id.trim()) || EMAIL_LIKE.test(id.trim());

/** Runs of one cancel before a deadlock is let through (each one rolls back at once). */
const CANCEL_ATTEMPTS = 5;

const TRANSACTION_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * Random bytes drawn from the generator 4 KiB at a time: one call serves 341 transaction ids
 * (a call per id showed in the triggers process's CPU profile under load).
 */
const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;

/** txn_ + 8 hex digits of Unix seconds + 12 characters of [0-9a-z], as Novu generates them. */
function generateTransactionId(): string {
  const seconds = Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, "0");
  if (randomOffset + 12 > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  let random = "";
  for (let index = randomOffset; index < randomOffset + 12; index += 1) random += TRANSACTION_ALPHABET[randomPool[index]! % TRANSACTION_ALPHABET.length];
  randomOffset += 12;
  return `txn_${seconds}${random}`;
}

/**
 * What a job carries of its workflow, frozen at trigger time: what running it reads (identity,
 * criticality, preference defaults, the steps, the language of their templates and the environment
 * variables they read, and the tags
 * and severity its messages are written with).
 * Names, the group, variables and timestamps stay in the catalogue: they were a large share of every job's bytes, which travel
 * through the outbox (as hex, in and out), the WAL and JetStream.
 */
function jobWorkflow(workflow: workflowsV1.Workflow): workflowsV1.Workflow {
  return create(workflowsV1.WorkflowSchema, {
    id: workflow.id,
    identifier: workflow.identifier,
    critical: workflow.critical,
    tags: workflow.tags,
    severity: workflow.severity,
    ...(workflow.preferenceSettings ? { preferenceSettings: workflow.preferenceSettings } : {}),
    steps: workflow.steps,
    templateEngine: workflow.templateEngine,
    environmentVariables: workflow.environmentVariables,
  });
}

/**
 * A TriggerJob's workflow field, encoded on its own. Parsers merge concatenated encodings of a
 * message (protobuf's wire rule), so a job is its other fields' bytes followed by these: the
 * workflow, the same for every event of a batch that names it, is encoded once per batch, not
 * once per event (it was most of the acceptance path's encoding CPU).
 */
function encodedWorkflowField(workflow: workflowsV1.Workflow): Uint8Array {
  return new BinaryWriter()
    .tag(TriggerJobSchema.field.workflow.number, WireType.LengthDelimited)
    .bytes(toBinary(workflowsV1.WorkflowSchema, jobWorkflow(workflow)))
    .finish();
}

const result = (status: string, transactionId?: string, error: string[] = []): triggersV1.TriggerOutcome =>
  create(triggersV1.TriggerOutcomeSchema, {
    outcome: { case: "result", value: { acknowledged: true, status, error, ...(transactionId ? { transactionId } : {}) } },
  });

/** A held job's dedupe key: apart from every timed resumption's (those start with their trigger id). */
const heldKey = (holdKey: string) => `held:${holdKey}`;

/**
 * The tenant a run reads, as Novu's run reads it from its store: the stored tenant, with the
 * fields the trigger's tenant object gives (and writes) over it.
 */
function runTenant(identifier: string, row: TenantRow | undefined, given?: triggersV1.TenantInput): triggersV1.TenantInput {
  const name = given?.name ?? row?.name ?? undefined;
  const data = given?.data ?? (row?.data as JsonObject | null | undefined) ?? undefined;
  return create(triggersV1.TenantInputSchema, { identifier, ...(name !== undefined ? { name } : {}), ...(data ? { data } : {}) });
}

function recipientId(recipient: triggersV1.Recipient): string | undefined {
  const kind = recipient.kind;
  if (kind.case === "subscriberId" || kind.case === "topicKey") return kind.value;
  if (kind.case === "subscriber") return kind.value.subscriberId;
  return undefined;
}

/**
 * Novu's check of a payload against the workflow's schema when the workflow asks for it: the
 * refusal, or nothing (the schema's defaults then filled into the payload).
 */
function payloadRefusal(workflow: workflowsV1.Workflow, event: triggersV1.TriggerEvent): triggersV1.TriggerOutcome | undefined {
  if (!workflow.validatePayload || !workflow.payloadSchema) return undefined;
  event.payload ??= {};
  const errors = payloadErrors(workflow.payloadSchema, event.payload);
  if (errors.length === 0) return undefined;
  return create(triggersV1.TriggerOutcomeSchema, {
    outcome: {
      case: "error",
      value: {
        code: Code.FailedPrecondition,
        message: payloadErrorMessage(errors),
        payloadErrors: errors.map((error) => ({ ...error })),
        payloadSchema: workflow.payloadSchema,
      },
    },
  });
}

/**
 * Novu's check of what a trigger's payload must hold, step by step: the variables a v1 step
 * requires, and the date each scheduled delay step waits for (else the steps before the delay
 * would be sent and the rest dropped). A payload without them runs nothing.
 */
function missingKeysRefusal(workflow: workflowsV1.Workflow, event: triggersV1.TriggerEvent): triggersV1.TriggerOutcome | undefined {
  const payload = event.payload ?? {};
  const missing = workflow.steps.flatMap((step) => [
    ...missingRequiredVariables(step.template?.variables ?? [], (path) => valueAtPath(payload, path)),
    ...(step.template?.type === StepType.DELAY && step.metadata?.type === "scheduled" && !scheduledDate(payload, step.metadata.delayPath)
      ? [`${step.metadata.delayPath ?? ""} (ISO Date)`]
      : []),
  ]);
  if (missing.length === 0) return undefined;
  const message = missingVariablesMessage(missing);
  return create(triggersV1.TriggerOutcomeSchema, { outcome: { case: "error", value: { code: Code.FailedPrecondition, message } } });
}

/**
 * The payload with the default values of the variables the workflow's v1 steps declare where it
 * has none. Novu fills in only its last step's (each step's replaces the one before); here every
 * step's count, a later step's default winning over an earlier one's.
 */
function withVariableDefaults(workflow: workflowsV1.Workflow, payload: JsonObject | undefined): JsonObject | undefined {
  const defaults = variableDefaults(workflow.steps.flatMap((step) => step.template?.variables ?? []));
  if (Object.keys(defaults).length === 0) return payload;
  return withDefaults(defaults, payload ?? {}) as JsonObject;
}

interface Accepted {
  /** The trigger record's id, and its job's. */
  id: string;
  transactionId: string;
  workflow: workflowsV1.Workflow;
  event: triggersV1.TriggerEvent;
  /** The job, encoded: the event with the workflow as it is now. */
  job: Uint8Array;
  /** The recipients the job goes to; the invalid ones are reported instead. */
  invalid: string[];
}

/**
 * The most a trigger job may take: NATS refuses a stream message over its max_payload (1 MiB unless
 * the server raises it), and the jobs that resume a run later carry up to a thousand subscriber and
 * digest ids more than the job they come from. A job over it could never be published, and would
 * hold the outbox for every later trigger.
 */
const MAX_JOB_BYTES = 1024 * 1024 - 128 * 1024;

type Decision = { outcome: triggersV1.TriggerOutcome } | { accepted: Accepted };

/** How stale a workflow's lastTriggeredAt may be, as Novu keeps it: a trigger writes it at most this often. */
const LAST_TRIGGERED_INTERVAL_MS = 5 * 60_000;
/** Workflows whose marks this process remembers; past it, it forgets them all (and marks them once more). */
const MARKS_KEPT = 10_000;

export function createTriggerService({
  pool,
  log,
  jobSubject,
  workflowsByIdentifier,
  enforceRecipientIds,
}: TriggerServiceDeps): ServiceImpl<typeof triggersV1.TriggerService> {
  /** Workflow id → when this process last marked it triggered. */
  const markedAt = new Map<string, number>();
  /**
   * Marks the workflows of accepted events triggered (Novu's lastTriggeredAt), except what
   * Novu leaves out (a trigger its dashboard sent, `payload.__source`). Remembered here, so that
   * most triggers make no write; a failed mark is logged and the trigger still succeeds.
   */
  async function markTriggered(environmentId: string, accepted: readonly Accepted[]) {
    const now = Date.now();
    const due = new Set<string>();
    for (const { workflow, event } of accepted) {
      if (event.payload?.["__source"] !== undefined || now - (markedAt.get(workflow.id) ?? 0) < LAST_TRIGGERED_INTERVAL_MS) continue;
      due.add(workflow.id);
    }
    if (due.size === 0) return;
    if (markedAt.size + due.size > MARKS_KEPT) markedAt.clear();
    for (const id of due) markedAt.set(id, now);
    await markWorkflowsTriggered(pool, environmentId, [...due], `${LAST_TRIGGERED_INTERVAL_MS} milliseconds`).catch((error: unknown) => {
      // The next trigger of these workflows tries again.
      for (const id of due) markedAt.delete(id);
      log.warn({ err: error, workflowIds: [...due] }, "could not mark workflows triggered");
    });
  }

  /** The live workflow with this trigger identifier: a kept copy (read-only), else read and kept. */
  const workflowNamed = (environmentId: string, name: string): Promise<workflowsV1.Workflow | undefined> =>
    workflowsByIdentifier.readThrough(environmentId, name, async () => {
      const row = await selectWorkflowByKey(pool, environmentId, { identifier: name });
      return row ? workflowFromRow(row) : undefined;
    });

  return {
    async triggerBatch(request, context) {
      const scope = scopeOf(context);
      // The workflow's part of the jobs, encoded once per workflow of the batch.
      const workflowFields = new Map<workflowsV1.Workflow, Uint8Array>();
      const workflowFieldOf = (workflow: workflowsV1.Workflow) => {
        let field = workflowFields.get(workflow);
        if (!field) {
          field = encodedWorkflowField(workflow);
          workflowFields.set(workflow, field);
        }
        return field;
      };
      const events = request.events;
      if (events.length > MAX_EVENTS) throw invalidField("events", `at most ${MAX_EVENTS} events per call`, events.length);
      if (events.length === 0) return { outcomes: [] };

      // Workflows once per distinct name; tenants named by identifier in one query.
      const names = [...new Set(events.map((event) => event.name))];
      const workflows = new Map(await Promise.all(names.map(async (name) => [name, await workflowNamed(scope.environmentId, name)] as const)));
      const tenantIdentifiers = [
        ...new Set(
          events.flatMap((event) => {
            const kind = event.tenant?.kind;
            return kind?.case === "identifier" ? [kind.value] : kind?.case === "tenant" ? [kind.value.identifier] : [];
          }),
        ),
      ];
      const tenants = new Map(
        (tenantIdentifiers.length ? await selectTenantsByIdentifiers(pool, scope.environmentId, tenantIdentifiers) : []).map((row) => [row.identifier, row]),
      );
      const tenantOf = (event: triggersV1.TriggerEvent) => {
        const kind = event.tenant?.kind;
        return kind?.case === "identifier" ? tenants.get(kind.value) : kind?.case === "tenant" ? tenants.get(kind.value.identifier) : undefined;
      };
      // A tenant's override of a workflow decides whether the workflow runs for the tenant, as Novu's does.
      const overridePairs = events.flatMap((event) => {
        const workflow = workflows.get(event.name);
        const tenant = tenantOf(event);
        return workflow && tenant ? [{ workflowId: workflow.id, tenantId: tenant.id }] : [];
      });
      const overridesActive = new Map(
        (overridePairs.length ? await selectOverridesActive(pool, scope.environmentId, overridePairs) : []).map((row) => [
          `${row.workflow_id}/${row.tenant_id}`,
          row.active,
        ]),
      );

      // Contexts once per key for the batch: created when new, read as stored (the job carries them).
      const contextRefusals = events.map((event) => contextsRefusal(event.context));
      const contextInputs = new Map<string, store.ContextInputRow>();
      events.forEach((event, index) => {
        if (contextRefusals[index]) return;
        for (const { type, id, data } of event.context) {
          const key = contextKeyOf({ type, id });
          if (!contextInputs.has(key)) contextInputs.set(key, { type, id, data: data ? JSON.stringify(data) : null });
        }
      });
      const contexts = new Map(
        (contextInputs.size > 0 ? await store.ensureContexts(pool, scope.environmentId, scope.organizationId, [...contextInputs.values()]) : []).map((row) => [
          contextKeyOf(row),
          row,
        ]),
      );

      // Layouts once per key for the batch: a job carries those its email steps are sent in.
      const layouts = await batchLayouts(pool, scope.environmentId, events, workflows);

      const decisions: Decision[] = events.map((event, index) => {
        const contextRefused = contextRefusals[index];
        if (contextRefused) {
          const message = `${contextRefused.field}: ${contextRefused.message}`;
          return { outcome: create(triggersV1.TriggerOutcomeSchema, { outcome: { case: "error", value: { code: Code.InvalidArgument, message } } }) };
        }
        const workflow = workflows.get(event.name);
        if (!workflow)
          return {
            outcome: create(triggersV1.TriggerOutcomeSchema, {
              outcome: { case: "error", value: { code: Code.InvalidArgument, message: "workflow_not_found" } },
            }),
          };
        const refused = payloadRefusal(workflow, event) ?? missingKeysRefusal(workflow, event);
        if (refused) return { outcome: refused };
        let tenant: triggersV1.TenantInput | undefined;
        const tenantRow = tenantOf(event);
        if (event.tenant?.kind.case === "identifier") {
          if (!tenantRow) return { outcome: result("no_tenant_found") };
          tenant = runTenant(tenantRow.identifier, tenantRow);
        } else if (event.tenant?.kind.case === "tenant") {
          const given = event.tenant.kind.value;
          tenant = runTenant(given.identifier, tenantRow, given);
        }
        const overrideActive = tenantRow ? overridesActive.get(`${workflow.id}/${tenantRow.id}`) : undefined;
        if (!(overrideActive ?? workflow.active)) return { outcome: result("trigger_not_active") };
        if (workflow.steps.length === 0) return { outcome: result("no_workflow_steps_defined") };
        if (!workflow.steps.some((step) => step.active !== false)) return { outcome: result("no_workflow_active_steps_defined") };
        const transactionId = event.transactionId ?? generateTransactionId();
        const valid: triggersV1.Recipient[] = [];
        const invalid: string[] = [];
        const passedOn: string[] = [];
        for (const recipient of event.broadcast ? [] : event.to) {
          const id = recipientId(recipient);
          // No subscriber has an empty id, whatever the rule's mode.
          if (id === undefined || id.trim() === "") invalid.push(String(id));
          else if (isValidRecipientId(id)) valid.push(recipient);
          else if (enforceRecipientIds) invalid.push(id);
          else {
            valid.push(recipient);
            passedOn.push(id);
          }
        }
        if (passedOn.length > 0)
          log.warn({ transactionId, recipients: passedOn }, "recipient ids outside Novu's rule notified (SUBSCRIBER_ID_VALIDATION=dry-run)");
        if (!event.broadcast && valid.length === 0) {
          return {
            outcome: result(
              "invalid_recipients",
              transactionId,
              invalid.map((id) => `Invalid recipient: ${id}`),
            ),
          };
        }
        const id = objectId();
        const job = Buffer.concat([
          toBinary(
            TriggerJobSchema,
            create(TriggerJobSchema, {
              triggerId: id,
              organizationId: scope.organizationId,
              environmentId: scope.environmentId,
              transactionId,
              // The contexts travel as stored, not as the event named them.
              event: { ...event, payload: withVariableDefaults(workflow, event.payload), transactionId, to: valid, origin: {}, context: [] },
              ...(tenant ? { tenant } : {}),
              contexts: event.context.map(({ type, id }) => ({ type, id, data: contexts.get(contextKeyOf({ type, id }))?.data ?? {} })),
              ...layouts[index]!,
            }),
          ),
          workflowFieldOf(workflow),
        ]);
        if (job.length > MAX_JOB_BYTES) {
          const message = `The trigger takes ${job.length} bytes with its workflow's steps, more than the ${MAX_JOB_BYTES} a trigger may take: send a smaller payload or split the workflow's templates`;
          return { outcome: create(triggersV1.TriggerOutcomeSchema, { outcome: { case: "error", value: { code: Code.InvalidArgument, message } } }) };
        }
        return { accepted: { id, transactionId, workflow, event, job, invalid } };
      });

      // A transaction id repeated inside the batch is accepted once, like one repeated across calls.
      const firstOfTransaction = new Map<string, Accepted>();
      for (const decision of decisions) {
        if ("accepted" in decision && !firstOfTransaction.has(decision.accepted.transactionId)) {
          firstOfTransaction.set(decision.accepted.transactionId, decision.accepted);
        }
      }
      const toRecord = [...firstOfTransaction.values()];
      if (toRecord.length > 0) {
        // Events that travel with others' name their own request; the rest continue this call.
        const callOrigin = currentOrigin();
        const jobs = toRecord.map((accepted) => {
          const origin = Object.keys(accepted.event.origin).length > 0 ? accepted.event.origin : callOrigin;
          return {
            id: accepted.id,
            transactionId: accepted.transactionId,
            workflowId: accepted.workflow.id,
            job: accepted.job,
            origin: Object.keys(origin).length > 0 ? origin : null,
          };
        });
        const record = (db: Queryable) => store.recordTriggers(db, scope.environmentId, scope.organizationId, jobSubject, jobs);
        // One row per identifier, as the last event of the batch has it: one statement may not write a row twice.
        const tenantObjects = [
          ...new Map(
            toRecord.flatMap((accepted) =>
              accepted.event.tenant?.kind.case === "tenant" ? [[accepted.event.tenant.kind.value.identifier, accepted.event.tenant.kind.value]] : [],
            ),
          ).values(),
        ];
        if (tenantObjects.length === 0) {
          // One statement, its own transaction: the usual batch costs one round trip.
          await record(pool);
        } else {
          await withTransaction(pool, async (tx) => {
            await store.upsertTenants(
              tx,
              scope.environmentId,
              scope.organizationId,
              tenantObjects.map((tenant) => ({
                id: objectId(),
                identifier: tenant.identifier,
                name: tenant.name ?? null,
                data: tenant.data ? JSON.stringify(tenant.data) : null,
              })),
            );
            await record(tx);
          });
        }
        await markTriggered(scope.environmentId, toRecord);
      }

      // A repeat of a recorded transaction id creates nothing and answers what the first one did.
      return {
        outcomes: decisions.map((decision) => {
          if ("outcome" in decision) return decision.outcome;
          const { transactionId, invalid } = decision.accepted;
          return result(
            "processed",
            transactionId,
            invalid.map((id) => `Invalid recipient: ${id}`),
          );
        }),
      };
    },

    async cancelTrigger(request, context) {
      const scope = scopeOf(context);
      // Locking digests before schedules, a cancel can deadlock with the relay taking the same
      // digest's schedule as it comes due; Postgres then fails one of them, and a cancel runs again.
      return retryOnDeadlock(CANCEL_ATTEMPTS, () =>
        withTransaction(pool, async (tx) => {
          const id = await store.cancelTriggerRecord(tx, scope.environmentId, request.transactionId);
          // As Novu answers it: nothing to cancel is no error.
          if (!id) return { canceled: false };
          // Among its jobs still in the outbox may be the runs of digests that came due.
          const unpublished = await store.deleteOutboxFor(tx, scope.environmentId, id);
          const dueDigestIds = digestsRunBy(unpublished);
          // Locked first, so that a digest another cancel just passed to this trigger has its schedule deleted below.
          await store.lockDigestsOf(tx, scope.environmentId, id, request.transactionId, dueDigestIds);
          const waiting = await store.deleteSchedulesFor(tx, scope.environmentId, id);
          // Its digests' runs were among the jobs just deleted: each goes on under its next event's trigger.
          const digests = await cancelDigestsOf(tx, scope.environmentId, id, request.transactionId, jobSubject, dueDigestIds);
          // True, as Novu answers, only when work still waiting was stopped (a delay, a digest, a
          // run not started yet): not for a run that already went out, nor for a second cancel.
          return { canceled: unpublished.length + waiting + digests.eventsTaken > 0, passedDigests: digests.passedDigests };
        }),
      );
    },

    async passCanceledDigests(request, context) {
      const scope = scopeOf(context);
      checkDigestIds(request.digestIds);
      return retryOnDeadlock(CANCEL_ATTEMPTS, () =>
        withTransaction(pool, async (tx) => {
          const id = await store.selectCanceledTriggerId(tx, scope.environmentId, request.transactionId);
          if (!id) throw failedPrecondition(`Transaction ${request.transactionId} was not canceled`);
          // Digests passed already name another trigger: they are passed over.
          await store.lockDigestsOf(tx, scope.environmentId, id, request.transactionId, request.digestIds);
          const { passedDigests } = await cancelDigestsOf(tx, scope.environmentId, id, request.transactionId, jobSubject, request.digestIds);
          return { passedDigests };
        }),
      );
    },

    async scheduleJobs(request, context) {
      const scope = scopeOf(context);
      if (request.jobs.length > MAX_EVENTS) throw invalidField("jobs", `at most ${MAX_EVENTS} jobs per call`, request.jobs.length);
      const rows = request.jobs.flatMap((scheduled): store.NewSchedule[] => {
        const job = scheduled.job;
        if (!job || job.environmentId !== scope.environmentId) return [];
        const row = { triggerId: job.triggerId, subject: jobSubject, job: toBinary(TriggerJobSchema, job) };
        if (scheduled.holdKey !== "") return [{ ...row, dedupeKey: heldKey(scheduled.holdKey), runAt: null }];
        if (!scheduled.runAt) return [];
        const runAt = timestampDate(scheduled.runAt);
        const subscribers = createHash("sha256")
          .update((job.resumption?.subscriberIds ?? []).join(","))
          .digest("hex")
          .slice(0, 16);
        return [{ ...row, dedupeKey: `${job.triggerId}:${job.resumption?.fromStep ?? 0}:${runAt.getTime()}:${subscribers}`, runAt }];
      });
      if (rows.length > 0) {
        await withTransaction(pool, async (tx) => {
          await store.insertSchedules(tx, scope.environmentId, currentOrigin(), rows);
          await store.notifySchedules(tx);
        });
      }
      return {};
    },

    async releaseHeldJobs(request, context) {
      const scope = scopeOf(context);
      if (request.holdKeys.length > MAX_EVENTS) throw invalidField("holdKeys", `at most ${MAX_EVENTS} keys per call`, request.holdKeys.length);
      await withTransaction(pool, async (tx) => {
        if ((await store.releaseHeldSchedules(tx, scope.environmentId, request.holdKeys.map(heldKey))) > 0) await store.notifySchedules(tx);
      });
      return {};
    },

    async digestEvents(request, context) {
      return digestEvents(pool, scopeOf(context).environmentId, request, jobSubject);
    },

    async passThrottles(request, context) {
      return { passed: await passThrottles(pool, scopeOf(context).environmentId, request.entries) };
    },

    async getDigests(request, context) {
      return { digests: await getDigests(pool, scopeOf(context).environmentId, request.digestIds) };
    },

    async getCanceledTriggers(request, context) {
      const scope = scopeOf(context);
      if (request.transactionIds.length > MAX_EVENTS) {
        throw invalidField("transactionIds", `at most ${MAX_EVENTS} per call`, request.transactionIds.length);
      }
      return { transactionIds: await store.selectCanceledTransactionIds(pool, scope.environmentId, request.transactionIds) };
    },
  };
}
