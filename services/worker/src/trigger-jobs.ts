import { fromBinary } from "@bufbuild/protobuf";
import { triggersV1, type workflowsV1 } from "@notify/proto";
import { StepType, stepTypeNamed, timedDaysNamed } from "@notify/runtime";

/**
 * Moves what steps written before step types, weekdays and ordinals were enums carry in their
 * legacy string fields into the enum fields. Jobs queued, scheduled or dead-lettered before that
 * change still hold them; steps written since have none and pass unchanged.
 */
function upgradeLegacySteps(steps: readonly workflowsV1.Step[]): void {
  for (const step of steps) {
    const template = step.template;
    if (template?.legacyType) {
      template.type = stepTypeNamed(template.legacyType) ?? StepType.UNSPECIFIED;
      template.legacyType = "";
    }
    const timed = step.metadata?.timed;
    if (timed && (timed.legacyWeekDays.length > 0 || timed.legacyOrdinal !== undefined || timed.legacyOrdinalValue !== undefined)) {
      Object.assign(timed, timedDaysNamed({ weekDays: timed.legacyWeekDays, ordinal: timed.legacyOrdinal, ordinalValue: timed.legacyOrdinalValue }));
      timed.legacyWeekDays = [];
      delete timed.legacyOrdinal;
      delete timed.legacyOrdinalValue;
    }
    upgradeLegacySteps(step.variants);
  }
}

/** A trigger job as this build runs it, whenever it was written. */
export function decodeTriggerJob(bytes: Uint8Array): triggersV1.TriggerJob {
  const job = fromBinary(triggersV1.TriggerJobSchema, bytes);
  if (job.workflow) upgradeLegacySteps(job.workflow.steps);
  return job;
}
