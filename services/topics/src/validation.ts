import type { JsonObject } from "@bufbuild/protobuf";
import { invalidField } from "@notify/runtime";
import type { NewPreference } from "./store.js";

const MAX_TEXT = 255;
/** Novu's rule for ids a client chooses (VALID_ID_REGEX): these characters, or an email address. */
const VALID_KEY = /^[a-zA-Z0-9_:.-]+$/;
const EMAIL = /^\S+@\S+\.\S+$/;

/** The key of a topic being created. */
export function checkNewTopicKey(key: string, field = "key"): void {
  if (key.length === 0 || key.length > MAX_TEXT) {
    throw invalidField(field, `${field} must be between 1 and ${MAX_TEXT} characters`, key);
  }
  if (!VALID_KEY.test(key) && !EMAIL.test(key)) {
    throw invalidField(
      field,
      `${field} must contain only alphanumeric characters (a-z, A-Z, 0-9), hyphens (-), underscores (_), colons (:), dots (.), or be a valid email address`,
      key,
    );
  }
}

/** The name of a topic or of a subscription. */
export function checkName(name: string): void {
  if (name.trim().length === 0 || name.length > MAX_TEXT) throw invalidField("name", `name must be between 1 and ${MAX_TEXT} characters`, name);
}

/** A bounded list of ids, each 1 to 255 characters. */
export function checkIdList(field: string, ids: readonly string[], max: number): void {
  if (ids.length > max) throw invalidField(field, `${field} must contain at most ${max} elements`, ids.length);
  const bad = ids.find((id) => id.length === 0 || id.length > MAX_TEXT);
  if (bad !== undefined) throw invalidField(field, `each of ${field} must be between 1 and ${MAX_TEXT} characters`, bad);
}

export function checkRange(field: string, value: number, min: number, max: number): void {
  if (value < min || value > max) throw invalidField(field, `${field} must be between ${min} and ${max}`, value);
}

/** Preferences one subscription may hold: one per workflow named. */
export const MAX_PREFERENCES = 100;
/** A preference's condition, as JSON text. */
export const MAX_CONDITION_BYTES = 16 * 1024;

/** Preferences as stored: checked, the first one of each workflow kept. */
export function checkPreferences(preferences: readonly { workflowId: string; enabled: boolean; condition?: JsonObject | undefined }[]): NewPreference[] {
  const byWorkflow = new Map<string, NewPreference>();
  for (const preference of preferences) {
    if (preference.workflowId.length === 0 || preference.workflowId.length > MAX_TEXT) {
      throw invalidField("preferences", `each workflow id must be between 1 and ${MAX_TEXT} characters`, preference.workflowId);
    }
    if (preference.condition !== undefined && Buffer.byteLength(JSON.stringify(preference.condition)) > MAX_CONDITION_BYTES) {
      throw invalidField("preferences", `a condition must be at most ${MAX_CONDITION_BYTES} bytes of JSON`);
    }
    if (!byWorkflow.has(preference.workflowId)) {
      byWorkflow.set(preference.workflowId, { workflowId: preference.workflowId, enabled: preference.enabled, condition: preference.condition ?? null });
    }
  }
  if (byWorkflow.size > MAX_PREFERENCES) throw invalidField("preferences", `at most ${MAX_PREFERENCES} workflows`, byWorkflow.size);
  return [...byWorkflow.values()];
}
