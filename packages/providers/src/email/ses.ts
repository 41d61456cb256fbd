import MailComposer from "nodemailer/lib/mail-composer";
import { sigV4Headers } from "../aws.js";
import { expectOk, parseJson, trimSlash } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import { missingSetting, type EmailMessage, type Provider, type SendContext } from "../types.js";
import { mailPartsOf, senderOf } from "./sender.js";
import { mergedBody } from "../provider-data.js";

const ID = "ses";

/** The MIME message SES sends as is: HTML with its text alternative, attachments, Reply-To (Bcc only in the envelope). */
function mimeOf(message: EmailMessage, from: { address: string; name: string | undefined }, providerData: SendContext["providerData"]): Promise<Buffer> {
  return new MailComposer({
    // The trigger's provider overrides reach the mail's options, as Novu merges them into nodemailer's SES transport.
    ...mergedBody(mailPartsOf(message, from), providerData, "camel"),
    disableFileAccess: true,
    disableUrlAccess: true,
  })
    .compile()
    .build();
}

/**
 * Amazon SES v2 SendEmail with raw content, signed with Signature Version 4. Credentials as Novu names
 * them: apiKey is the access key id, secretKey the secret access key.
 */
async function send(message: EmailMessage, { credentials, configurations, http, providerData }: SendContext) {
  if (!credentials.apiKey) throw missingSetting(ID, "apiKey");
  if (!credentials.secretKey) throw missingSetting(ID, "secretKey");
  if (!credentials.region) throw missingSetting(ID, "region");
  const from = senderOf(ID, message, { ...credentials, senderName: credentials.senderName || "no-reply" });
  const url = new URL(`${trimSlash(credentials.baseUrl || `https://email.${credentials.region}.amazonaws.com`)}/v2/email/outbound-emails`);
  const body = JSON.stringify({
    FromEmailAddress: from.address,
    Destination: {
      ToAddresses: message.to,
      ...(message.cc?.length ? { CcAddresses: message.cc } : {}),
      ...(message.bcc?.length ? { BccAddresses: message.bcc } : {}),
    },
    ...(message.replyTo ? { ReplyToAddresses: [message.replyTo] } : {}),
    Content: { Raw: { Data: (await mimeOf(message, from, providerData)).toString("base64") } },
    ...(configurations?.configurationSetName ? { ConfigurationSetName: configurations.configurationSetName } : {}),
  });
  const headers = sigV4Headers(
    url,
    { service: "ses", region: credentials.region, body, headers: { "content-type": "application/json" } },
    { accessKeyId: credentials.apiKey, secretAccessKey: credentials.secretKey },
  );
  const response = expectOk(ID, await http.request(url.toString(), { method: "POST", headers, body }));
  return { id: parseJson<{ MessageId?: string }>(response.text).MessageId };
}

export const ses: ProviderFactory = (): Provider<"email"> => ({ id: ID, channel: "email", idempotent: false, send });
