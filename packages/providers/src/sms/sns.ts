import { sigV4Headers } from "../aws.js";
import { expectOk, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import type { Provider } from "../types.js";
import { withProviderData } from "../provider-data.js";

const ID = "sns";

/** Publish's fields that are maps: their entries go as `<name>.entry.<n>.Name` and `.Value`. */
const MAP_FIELDS = new Set(["MessageAttributes"]);

/**
 * The fields of a body in the AWS Query API's form: a structure's members as `<name>.<member>`, a
 * list's items as `<name>.member.<n>`, a map's entries as `<name>.entry.<n>.Name` and `.Value`
 * (counted from 1), absent values left out.
 */
function queryFields(body: Readonly<Record<string, unknown>>, prefix = ""): [string, string][] {
  return Object.entries(body).flatMap(([member, value]): [string, string][] => {
    const name = `${prefix}${member}`;
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value.flatMap((item, index) => queryFields({ [String(index + 1)]: item }, `${name}.member.`));
    if (typeof value !== "object") return [[name, String(value)]];
    const fields = value as Record<string, unknown>;
    if (!MAP_FIELDS.has(member) || prefix !== "") return queryFields(fields, `${name}.`);
    return Object.entries(fields).flatMap(([key, entry], index) => [
      [`${name}.entry.${index + 1}.Name`, key] as [string, string],
      ...queryFields({ Value: entry }, `${name}.entry.${index + 1}.`),
    ]);
  });
}

/**
 * AWS SNS Publish to a phone number (Query API, form-encoded, SigV4). Credentials as Novu names
 * them: apiKey is the access key id, secretKey the secret access key.
 */
export const sns: ProviderFactory = (): Provider<"sms"> => ({
  id: ID,
  channel: "sms",
  // Publish deduplicates only on FIFO topics, never for SMS to a phone number.
  idempotent: false,
  async send(message, { credentials, http, providerData }) {
    const accessKeyId = requireSetting(ID, credentials, "apiKey");
    const secretAccessKey = requireSetting(ID, credentials, "secretKey");
    const region = requireSetting(ID, credentials, "region");
    // The trigger's provider overrides are merged before the request is signed.
    const request = withProviderData(
      {
        url: `${trimSlash(credentials.baseUrl ?? `https://sns.${region}.amazonaws.com`)}/`,
        body: { Action: "Publish", Version: "2010-03-31", PhoneNumber: message.to, Message: message.content },
        headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
      },
      providerData,
      "pascal",
    );
    const url = new URL(request.url);
    const body = new URLSearchParams(queryFields(request.body)).toString();
    const headers = sigV4Headers(url, { service: "sns", region, body, headers: request.headers }, { accessKeyId, secretAccessKey });
    const response = expectOk(ID, await http.request(url.toString(), { method: "POST", headers, body }));
    return { id: /<MessageId>([^<]+)<\/MessageId>/.exec(response.text)?.[1] };
  },
});
