import type { JsonObject } from "@bufbuild/protobuf";
import { CONTEXT_NAME, MAX_CONTEXT_DATA_BYTES, MAX_CONTEXTS } from "@notify/runtime";

export interface ContextRefusal {
  field: string;
  message: string;
  value: unknown;
}

/** Why a context's type, id or data is refused (fields named under `at`), or undefined. */
export function contextRefusal(at: string, input: { type: string; id: string; data?: JsonObject | undefined }): ContextRefusal | undefined {
  if (!CONTEXT_NAME.test(input.type)) return { field: `${at}type`, message: "type must be 1 to 100 letters, digits, _ or -", value: input.type };
  if (!CONTEXT_NAME.test(input.id)) return { field: `${at}id`, message: "id must be 1 to 100 letters, digits, _ or -", value: input.id };
  if (input.data !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(input.data));
    if (bytes > MAX_CONTEXT_DATA_BYTES) return { field: `${at}data`, message: `data must take at most ${MAX_CONTEXT_DATA_BYTES} bytes as JSON`, value: bytes };
  }
  return undefined;
}

/** Why a trigger's or a session's list of contexts is refused, or undefined. */
export function contextsRefusal(inputs: readonly { type: string; id: string; data?: JsonObject | undefined }[]): ContextRefusal | undefined {
  if (inputs.length > MAX_CONTEXTS) return { field: "context", message: `at most ${MAX_CONTEXTS} contexts`, value: inputs.length };
  const types = new Set<string>();
  for (const input of inputs) {
    const refusal = contextRefusal(`context.${input.type}.`, input);
    if (refusal) return refusal;
    if (types.has(input.type)) return { field: `context.${input.type}`, message: "a context type is named once", value: input.type };
    types.add(input.type);
  }
  return undefined;
}
