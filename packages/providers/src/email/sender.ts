import { missingSetting, type EmailMessage, type ProviderCredentials } from "../types.js";

export interface Sender {
  address: string;
  name: string | undefined;
}

/** The From of a mail: the trigger's `overrides.email` beat the integration's settings. */
export function senderOf(providerId: string, message: EmailMessage, credentials: ProviderCredentials): Sender {
  const address = message.from || credentials.from;
  if (!address) throw missingSetting(providerId, "from");
  return { address, name: message.senderName || credentials.senderName || undefined };
}

/** `"Name" <address>` (the name quoted, so commas and the like in it stay part of it), or the bare address. */
export function formatSender({ address, name }: Sender): string {
  return name ? `"${name.replace(/["\\]/g, "\\$&")}" <${address}>` : address;
}

/** Bytes as a Buffer over the same memory, without a copy (attachments may be large). */
export const bufferOf = (content: Uint8Array) => Buffer.from(content.buffer, content.byteOffset, content.byteLength);

/** The mail's extra header lines, or nothing when it has none (APIs take an absent field best). */
export const extraHeaders = (message: EmailMessage) => (message.headers && Object.keys(message.headers).length > 0 ? message.headers : undefined);

/** An attachment's bytes as base64, the form every JSON email API takes them in. */
export const base64Of = (content: Uint8Array) => bufferOf(content).toString("base64");

/**
 * A mail's headers and parts as nodemailer takes them (the SMTP pools and SES's MIME): From, To,
 * Cc, Reply-To, extra headers, subject, HTML with its text alternative, attachments. Bcc is the caller's: it
 * belongs to the envelope only.
 */
export function mailPartsOf(message: EmailMessage, from: Sender) {
  return {
    from: from.name ? { name: from.name, address: from.address } : from.address,
    to: message.to,
    ...(message.cc?.length ? { cc: message.cc } : {}),
    ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    ...(message.headers ? { headers: { ...message.headers } } : {}),
    subject: message.subject,
    html: message.html,
    text: message.text,
    attachments: message.attachments.map((attachment) => ({
      filename: attachment.name,
      // A copy of its own: a view would carry (and, crossing to the SMTP thread, clone) all the memory it is a view of.
      content: Buffer.from(attachment.content),
      ...(attachment.mime ? { contentType: attachment.mime } : {}),
    })),
  };
}
