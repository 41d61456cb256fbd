import aws4 from "aws4";
import { expectOk, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { requireSetting } from "../settings.js";
import type { Provider } from "../types.js";
import { formFields, withProviderData } from "../provider-data.js";

const ID = "sns";

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
    const body = new URLSearchParams(formFields(request.body)).toString();
    const signed = aws4.sign(
      { host: url.host, path: `${url.pathname}${url.search}`, method: "POST", service: "sns", region, body, headers: request.headers },
      { accessKeyId, secretAccessKey },
    );
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers ?? {})) {
      // The HTTP client writes Host from the URL, the same value that was signed.
      if (value !== undefined && name.toLowerCase() !== "host") headers[name.toLowerCase()] = String(value);
    }
    const response = expectOk(ID, await http.request(url.toString(), { method: "POST", headers, body }));
    return { id: /<MessageId>([^<]+)<\/MessageId>/.exec(response.text)?.[1] };
  },
});
