/** Reads a dotted path (`address.city`, `tags.0`) without touching prototypes. */
export function valueAtPath(source: unknown, path: string): unknown {
  let current = source;
  for (const key of path.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/**
 * The date a scheduled delay waits for: the payload's value at `delayPath`, a date text or a
 * time in milliseconds; undefined when it is missing or no date. The trigger is refused without
 * one, and the worker waits until it.
 */
export function scheduledDate(payload: unknown, delayPath: string | undefined): Date | undefined {
  const value = delayPath ? valueAtPath(payload, delayPath) : undefined;
  const at = typeof value === "string" || typeof value === "number" ? new Date(value) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : undefined;
}
