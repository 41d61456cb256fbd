import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";

/** Seals JSON with AES-256-GCM; `context` (the integration id) is authenticated with it. */
export interface SecretBox {
  seal(plain: JsonObject, context: string): Buffer;
  open(sealed: Buffer, context: string): JsonObject;
}

const FORMAT_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES;

export const KEY_BYTES = 32;

/**
 * The key for local runs without INTEGRATIONS_ENCRYPTION_KEY. It is public (derived from a fixed
 * text), so it only keeps secrets out of plain sight in a development database.
 */
export const DEVELOPMENT_KEY = createHash("sha256").update("notify development integrations key").digest();

/** Passphrases shorter than this are refused: the key is only as strong as its text. */
export const MIN_PASSPHRASE = 32;

/**
 * The 32-byte key a configured text names: 64 hex characters or base64 of 32 bytes as they are,
 * any other text of at least 32 characters through SHA-256; undefined for a shorter text.
 */
export function parseKey(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, "hex");
  const decoded = Buffer.from(text, "base64");
  if (decoded.length === KEY_BYTES && decoded.toString("base64") === text) return decoded;
  return text.length >= MIN_PASSPHRASE ? createHash("sha256").update(text, "utf8").digest() : undefined;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== KEY_BYTES) throw new Error(`the integrations encryption key must be ${KEY_BYTES} bytes`);
  return {
    seal(plain, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(JSON.stringify(plain), "utf8"), cipher.final()]);
      return Buffer.concat([Buffer.of(FORMAT_VERSION), iv, cipher.getAuthTag(), body]);
    },
    open(sealed, context) {
      if (sealed.length < HEADER_BYTES || sealed[0] !== FORMAT_VERSION) throw new Error(`secrets of ${context} have an unknown format`);
      const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(1, 1 + IV_BYTES));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(sealed.subarray(1 + IV_BYTES, HEADER_BYTES));
      try {
        const plain = Buffer.concat([decipher.update(sealed.subarray(HEADER_BYTES)), decipher.final()]);
        return JSON.parse(plain.toString("utf8")) as JsonObject;
      } catch {
        // Never the cause: it could echo key material. A failure here means another key sealed it.
        throw new Error(`secrets of ${context} cannot be opened: was INTEGRATIONS_ENCRYPTION_KEY changed?`);
      }
    },
  };
}
