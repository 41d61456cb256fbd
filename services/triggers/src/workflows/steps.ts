import { randomUUID } from "node:crypto";
import { clone } from "@bufbuild/protobuf";
import { workflowsV1 } from "@notify/proto";
import { isChannelName, objectId, type FieldErrors } from "@notify/runtime";
import { slugify } from "./slug.js";

/** Ids of the steps a workflow had, so an update keeps the identity of the steps it keeps. */
export class StepIdentities {
  private readonly byId = new Map<string, string>();
  private readonly idByUuid = new Map<string, string>();
  private readonly claimed = new Set<string>();

  constructor(previous: readonly workflowsV1.Step[] = []) {
    for (const step of previous.flatMap((one) => [one, ...one.variants])) {
      this.byId.set(step.id, step.uuid);
      this.idByUuid.set(step.uuid, step.id);
    }
  }

  /** The existing step this one names by _id, else by uuid; each existing step is given out once. */
  claim(step: workflowsV1.Step): { id: string; uuid: string } | undefined {
    const id = this.byId.has(step.id) ? step.id : this.idByUuid.get(step.uuid);
    if (id === undefined || this.claimed.has(id)) return undefined;
    this.claimed.add(id);
    return { id, uuid: step.uuid || this.byId.get(id)! };
  }
}

/** A stored step: its ids (kept or new), its parent link, and its defaults filled in. */
function identify(step: workflowsV1.Step, parentId: string | undefined, identities: StepIdentities, isVariant: boolean): workflowsV1.Step {
  const kept = identities.claim(step);
  const stored = clone(workflowsV1.StepSchema, step);
  stored.id = kept?.id ?? objectId();
  stored.uuid = kept?.uuid ?? (step.uuid || randomUUID());
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

/** The channel types of the active steps, each once, in step order. */
export function activeChannels(steps: readonly workflowsV1.Step[]): string[] {
  const types = steps.filter((step) => step.active !== false).map((step) => step.template?.type ?? "");
  // Only channel steps deliver a message (digest and delay only shape the flow).
  return [...new Set(types.filter(isChannelName))];
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
 * Gives every step Novu v2's stepId: the one given, else its slugified name (with its position
 * appended when that is taken). A given stepId that repeats is an error of that step.
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
    const derived = slugify(step.name ?? step.template?.type ?? "step");
    step.stepId = taken.has(derived) || given.has(derived) ? `${derived}-${index + 1}` : derived;
    taken.add(step.stepId);
  });
  return errors;
}
