import { expectOk, parseJson, postJson } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import { ProviderError, type Provider } from "../types.js";
import { withProviderData } from "../provider-data.js";

const ID = "generic-sms";

/** A value at a dotted path of a JSON answer ("data.message.id"), as text when it is a string or number. */
function valueAt(answer: unknown, path: string): string | undefined {
  let value: unknown = answer;
  for (const key of path.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === "string" || typeof value === "number" ? String(value) : undefined;
}

/**
 * Novu's generic SMS provider: a JSON POST of the message to the integration's baseUrl, with the
 * API key (and secret) in headers the integration names. With authenticateByToken, a POST to
 * `domain` with those headers first answers `{data: {<authenticationTokenKey>: token}}`, and the
 * send carries only that token, in a header of the same name.
 */
export const genericSms: ProviderFactory = (): Provider<"sms"> => ({
  id: ID,
  channel: "sms",
  // An arbitrary HTTP API: nothing says it deduplicates.
  idempotent: false,
  async send(message, { credentials, http, providerData }) {
    const baseUrl = requireSetting(ID, credentials, "baseUrl");
    const keyHeaders: Record<string, string> = {
      [requireSetting(ID, credentials, "apiKeyRequestHeader")]: requireSetting(ID, credentials, "apiKey"),
    };
    if (credentials.secretKeyRequestHeader && credentials.secretKey) keyHeaders[credentials.secretKeyRequestHeader] = credentials.secretKey;
    let authHeaders = keyHeaders;
    if (credentials.authenticateByToken) {
      const domain = requireSetting(ID, credentials, "domain");
      const tokenKey = requireSetting(ID, credentials, "authenticationTokenKey");
      const reply = expectOk(`${ID} token endpoint`, await http.request(domain, { method: "POST", headers: keyHeaders }));
      // The key is one property name, dots and all, as Novu reads it.
      const token = parseJson<{ data?: Record<string, unknown> }>(reply.text).data?.[tokenKey];
      if (typeof token !== "string" || token === "") {
        throw new ProviderError(`${ID}: the token endpoint answered without data.${tokenKey}`, { transient: false });
      }
      authHeaders = { [tokenKey]: token };
    }
    // Novu posts the sender twice: as `from` (the trigger's, else the integration's) and as `sender`,
    // with its message id and the trigger's customData.
    const sender = message.from || credentials.from;
    const posted = { to: message.to, content: message.content, from: sender, id: message.messageId, customData: message.customData ?? {}, sender };
    const { url, body, headers } = withProviderData({ url: baseUrl, body: posted, headers: authHeaders }, providerData, "camel");
    const answer = await postJson<unknown>(ID, http, url, body, headers);
    return { id: valueAt(answer, credentials.idPath || "id") };
  },
});
