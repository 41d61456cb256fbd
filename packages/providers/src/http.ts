import type { OutboundHttp, OutboundResponse } from "./outbound.js";
import { formFields } from "./provider-data.js";
import { ProviderError } from "./types.js";

/** Statuses worth another attempt: the request may succeed unchanged later. */
const TRANSIENT = new Set([408, 425, 429, 500, 502, 503, 504]);

/** Retry-After as milliseconds (seconds or an HTTP date), undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Throws the ProviderError a non-2xx answer means; answers the response otherwise. */
export function expectOk(providerId: string, response: OutboundResponse): OutboundResponse {
  if (response.status >= 200 && response.status < 300) return response;
  throw answerError(providerId, response);
}

/**
 * The ProviderError for a failed answer, quoting it; transient by its status unless the provider
 * knows better (an expired token it will renew, say).
 */
export function answerError(
  providerId: string,
  response: OutboundResponse,
  transient = TRANSIENT.has(response.status) || response.status >= 500,
): ProviderError {
  // A redirect reads as a failure only once it is said that the guard does not follow it.
  const redirect = response.status >= 300 && response.status < 400 ? " (a redirect, not followed)" : "";
  return new ProviderError(`${providerId} answered ${response.status}${redirect}: ${response.text.slice(0, 2000)}`, {
    transient,
    status: response.status,
    retryAfterMs: retryAfterMs(response.headers["retry-after"]),
  });
}

/** Sends a JSON body with `method` and answers the whole 2xx response; non-2xx throws. */
async function sendJson(
  providerId: string,
  http: OutboundHttp,
  method: "POST" | "PATCH",
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<OutboundResponse> {
  return expectOk(providerId, await http.request(url, { method, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }));
}

/** POSTs a JSON body and answers the whole 2xx response, for providers that read their id from a header or the raw body; non-2xx throws. */
export const postJsonResponse = (providerId: string, http: OutboundHttp, url: string, body: unknown, headers: Record<string, string> = {}) =>
  sendJson(providerId, http, "POST", url, body, headers);

/** A JSON request with `method` that answers the parsed JSON reply ({} for an empty one); non-2xx throws. */
const jsonRequest =
  (method: "POST" | "PATCH") =>
  async <T = Record<string, unknown>>(providerId: string, http: OutboundHttp, url: string, body: unknown, headers: Record<string, string> = {}): Promise<T> =>
    parseJson<T>((await sendJson(providerId, http, method, url, body, headers)).text);

export const postJson = jsonRequest("POST");
export const patchJson = jsonRequest("PATCH");

/**
 * A form request (application/x-www-form-urlencoded; a field given as an array or in URLSearchParams repeats)
 * with `method` that answers the parsed JSON reply; non-2xx throws.
 */
const formRequest =
  (method: "POST" | "PUT") =>
  async <T = Record<string, unknown>>(
    providerId: string,
    http: OutboundHttp,
    url: string,
    fields: Readonly<Record<string, unknown>> | URLSearchParams,
    headers: Record<string, string> = {},
  ): Promise<T> => {
    const body = (fields instanceof URLSearchParams ? fields : new URLSearchParams(formFields(fields))).toString();
    const response = expectOk(
      providerId,
      await http.request(url, { method, headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body }),
    );
    return parseJson<T>(response.text);
  };

export const postForm = formRequest("POST");
export const putForm = formRequest("PUT");

/** GETs a JSON reply and answers it parsed ({} for an empty one); non-2xx throws. */
export async function getJson<T = Record<string, unknown>>(
  providerId: string,
  http: OutboundHttp,
  url: string,
  headers: Record<string, string> = {},
): Promise<T> {
  return parseJson<T>(expectOk(providerId, await http.request(url, { method: "GET", headers })).text);
}

/** A reply body as JSON; {} when it is empty or not JSON (some vendors answer "ok"). */
export function parseJson<T>(text: string): T {
  if (!text.trim()) return {} as T;
  try {
    return (JSON.parse(text) ?? {}) as T;
  } catch {
    return {} as T;
  }
}

/** A base URL without its trailing slash, so paths can be appended as written in the vendor's docs. */
export const trimSlash = (url: string) => url.replace(/\/+$/, "");

export const basicAuth = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

/** A response header's value (the first one when it is repeated). */
export function headerOf(response: OutboundResponse, name: string): string | undefined {
  const value = response.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
