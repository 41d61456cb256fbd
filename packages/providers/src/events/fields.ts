import type { ProviderEvent, ProviderEventStatus } from "./types.js";

export type Fields = Readonly<Record<string, unknown>>;

export function isFields(value: unknown): value is Fields {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A body's events: providers that batch post an array, the others one object. */
export function eventsOf(body: unknown): Fields[] {
  return (Array.isArray(body) ? body : [body]).filter(isFields);
}

/** A field read as text: providers write some ids as numbers. Postgres cannot keep a NUL character. */
export function textOf(value: unknown): string | undefined {
  if (typeof value === "string") return value.length > 0 ? value.replaceAll("\u0000", "\uFFFD") : undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

export function fieldsOf(value: unknown): Fields {
  return isFields(value) ? value : {};
}

/** A time written as Unix seconds or as a date string; now when absent or unreadable. */
export function timeOf(value: unknown): Date {
  const date =
    typeof value === "number" || (typeof value === "string" && /^\d+(\.\d+)?$/.test(value))
      ? new Date(Number(value) * 1000)
      : typeof value === "string"
        ? new Date(value)
        : undefined;
  return date && !Number.isNaN(date.getTime()) ? date : new Date();
}

function countOf(value: unknown): number | undefined {
  const count = typeof value === "number" ? value : typeof value === "string" ? Number.parseInt(value, 10) : Number.NaN;
  return Number.isInteger(count) && count > 0 ? count : undefined;
}

/**
 * One event, or none when it names no message or is of a kind notify does not keep (`status`
 * undefined).
 */
export function eventFrom(
  raw: Fields,
  fields: {
    providerMessageId: unknown;
    status: ProviderEventStatus | undefined;
    occurredAt?: unknown;
    externalId?: unknown;
    attempts?: unknown;
    response?: unknown;
  },
): ProviderEvent[] {
  const providerMessageId = textOf(fields.providerMessageId);
  if (!providerMessageId || !fields.status) return [];
  const externalId = textOf(fields.externalId);
  const attempts = countOf(fields.attempts);
  const response = textOf(fields.response);
  return [
    {
      providerMessageId,
      status: fields.status,
      occurredAt: timeOf(fields.occurredAt),
      ...(externalId !== undefined ? { externalId } : {}),
      ...(attempts !== undefined ? { attempts } : {}),
      ...(response !== undefined ? { response } : {}),
      raw: JSON.stringify(raw),
    },
  ];
}

/** The status a provider's event name stands for, if notify keeps events of that kind. */
export function statusIn(table: Readonly<Record<string, ProviderEventStatus>>, name: unknown): ProviderEventStatus | undefined {
  return typeof name === "string" && Object.hasOwn(table, name) ? table[name] : undefined;
}
