import { randomUUID } from "node:crypto";
import { clone } from "@bufbuild/protobuf";
import { workflowsV1 } from "@notify/proto";
import { CHANNEL_NAMES, objectId, StepType, stepChannel, stepTypeName, type FieldErrors } from "@notify/runtime";
import { slugify } from "./slug.js";

/** Ids of the steps a workflow had, so an update keeps the identity of the steps it keeps. */
export class StepIdentities {
  private readonly byId = new Map<string, workflowsV1.Step>();
  private readonly idByUuid = new Map<string, string>();
  private readonly claimed = new Set<string>();

  constructor(previous: readonly workflowsV1.Step[] = []) {
    for (const step of previous.flatMap((one) => [one, ...one.variants])) {
      this.byId.set(step.id, step);
      this.idByUuid.set(step.uuid, step.id);
    }
  }

  /** The existing step this one names by _id, else by uuid; each existing step is given out once. */
  claim(step: workflowsV1.Step): { id: string; uuid: string; stepId: string | undefined } | undefined {
    const id = this.byId.has(step.id) ? step.id : this.idByUuid.get(step.uuid);
    if (id === undefined || this.claimed.has(id)) return undefined;
    this.claimed.add(id);
    const previous = this.byId.get(id)!;
    return { id, uuid: step.uuid || previous.uuid, stepId: previous.stepId };
  }
}

/** A stored step: its ids (kept or new), its parent link, and its defaults filled in. */
function identify(step: workflowsV1.Step, parentId: string | undefined, identities: StepIdentities, isVariant: boolean): workflowsV1.Step {
  const kept = identities.claim(step);
  const stored = clone(workflowsV1.StepSchema, step);
  stored.id = kept?.id ?? objectId();
  stored.uuid = kept?.uuid ?? (step.uuid || randomUUID());
  // A step kept keeps its stepId, as in Novu: overrides.steps, steps.<stepId> in templates and
  // reads by stepId name it, so a rename or a stepId in the update does not change it.
  if (kept?.stepId) stored.stepId = kept.stepId;
  stored.active = step.active ?? true;
  if (parentId === undefined) delete stored.parentId;
  else stored.parentId = parentId;
  if (stored.template) stored.template.id = stored.id;
  // Variants never have variants of their own.
  stored.variants = isVariant ? [] : chain(step.variants, identities, true);
  return stored;
}

function chain(steps: readonly workflowsV1.Step[], identities: StepIdentities, areVariants: boolean): workflowsV1.Step[] {
  const out: workflowsV1.Step[] = [];
  for (const step of steps) out.push(identify(step, out.at(-1)?.id, identities, areVariants));
  return out;
}

/** The steps as stored: ids assigned (or kept from `previous`), each linked to the one before. */
export function identifySteps(steps: readonly workflowsV1.Step[], previous: readonly workflowsV1.Step[] = []): workflowsV1.Step[] {
  return chain(steps, new StepIdentities(previous), false);
}

/** The channel names of the active steps, each once, in step order. */
export function activeChannels(steps: readonly workflowsV1.Step[]): string[] {
  const channels = steps.filter((step) => step.active !== false).map((step) => stepChannel(step.template?.type ?? StepType.UNSPECIFIED));
  // Only channel steps deliver a message (digest and delay only shape the flow).
  return [...new Set(channels.flatMap((channel) => (channel === undefined ? [] : [CHANNEL_NAMES[channel]])))];
}

/** Every feed a step or variant template names, with the public path of the field. */
export function feedReferences(steps: readonly workflowsV1.Step[]): { path: string; feedId: string }[] {
  const references: { path: string; feedId: string }[] = [];
  steps.forEach((step, index) => {
    const feedId = step.template?.feedId;
    if (feedId) references.push({ path: `steps[${index}].template.feedId`, feedId });
    step.variants.forEach((variant, variantIndex) => {
      const variantFeed = variant.template?.feedId;
      if (variantFeed) references.push({ path: `steps[${index}].variants[${variantIndex}].template.feedId`, feedId: variantFeed });
    });
  });
  return references;
}

/**
 * Gives every step Novu v2's stepId: the one it has (kept or given), else its slugified name, with
 * its position and then a count appended while that is taken. A stepId that repeats is an error
 * of that step.
 */
export function assignStepIds(steps: workflowsV1.Step[]): FieldErrors {
  const errors: FieldErrors = {};
  const given = new Set(steps.flatMap((step) => (step.stepId ? [step.stepId] : [])));
  const taken = new Set<string>();
  steps.forEach((step, index) => {
    if (step.stepId) {
      if (taken.has(step.stepId)) errors[`steps[${index}].stepId`] = { messages: ["stepId must be unique in the workflow"], value: step.stepId };
      taken.add(step.stepId);
      return;
    }
    const derived = slugify(step.name ?? stepTypeName(step.template?.type ?? StepType.UNSPECIFIED) ?? "step");
    const free = (candidate: string) => !taken.has(candidate) && !given.has(candidate);
    let stepId = free(derived) ? derived : `${derived}-${index + 1}`;
    for (let count = 2; !free(stepId); count += 1) stepId = `${derived}-${index + 1}-${count}`;
    step.stepId = stepId;
    taken.add(stepId);
  });
  return errors;
}
