import { randomBytes } from "node:crypto";

/** A multipart/form-data field: text, or a file with its name and type. */
export type FormPart = { name: string; value: string } | { name: string; filename: string; contentType: string; content: Uint8Array };

const quoted = (text: string) => `"${text.replace(/["\\\r\n]/g, (character) => encodeURIComponent(character))}"`;

/**
 * Encodes fields as multipart/form-data (RFC 7578), repeated names kept in order, for APIs that take
 * files in a form. Answers the body and the content-type header that carries its boundary.
 */
export function multipartBody(parts: readonly FormPart[]): { body: Uint8Array; contentType: string } {
  const boundary = `----notify${randomBytes(16).toString("hex")}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const head =
      "filename" in part
        ? `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(part.name)}; filename=${quoted(part.filename)}\r\nContent-Type: ${part.contentType}\r\n\r\n`
        : `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(part.name)}\r\n\r\n`;
    chunks.push(Buffer.from(head, "utf8"), "filename" in part ? Buffer.from(part.content) : Buffer.from(part.value, "utf8"), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
