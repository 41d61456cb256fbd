import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { z } from "zod";

/**
 * Seals bytes with AES-256-GCM; `context` (what the value belongs to, e.g. its row's id) is
 * authenticated with it, so a sealed value copied to another row does not open there.
 */
export interface Sealer {
  seal(plain: Buffer, context: string): Buffer;
  /** Throws when the value was sealed with another key or context, or was changed. */
  open(sealed: Buffer, context: string): Buffer;
}

const FORMAT_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES;

export const ENCRYPTION_KEY_BYTES = 32;

/** Passphrases shorter than this are refused: the key is only as strong as its text. */
export const MIN_PASSPHRASE = 32;

/**
 * The key of local runs that configure none. It is public (derived from a fixed text naming its
 * purpose), so it only keeps secrets out of plain sight in a development database.
 */
export const developmentKey = (purpose: string) => createHash("sha256").update(`notify development ${purpose} key`).digest();

/**
 * The 32-byte key a configured text names: 64 hex characters or base64 of 32 bytes as they are,
 * any other text of at least MIN_PASSPHRASE characters through SHA-256; undefined for a shorter text.
 */
export function parseEncryptionKey(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, "hex");
  const decoded = Buffer.from(text, "base64");
  if (decoded.length === ENCRYPTION_KEY_BYTES && decoded.toString("base64") === text) return decoded;
  return text.length >= MIN_PASSPHRASE ? createHash("sha256").update(text, "utf8").digest() : undefined;
}

/** An encryption key variable: unset or empty → undefined (the process then warns and uses its development key). */
export const encryptionKeyVariable = () =>
  z
    .string()
    .optional()
    .transform((text, context) => {
      if (text === undefined || text === "") return undefined;
      const key = parseEncryptionKey(text);
      if (!key) {
        context.addIssue({
          code: "custom",
          message: `must be ${ENCRYPTION_KEY_BYTES} bytes as 64 hex characters or base64, or a passphrase of at least ${MIN_PASSPHRASE} characters`,
        });
      }
      return key;
    });

/** `keyName` (the variable the key comes from) is named when a value cannot be opened. */
export function createSealer(key: Buffer, keyName: string): Sealer {
  if (key.length !== ENCRYPTION_KEY_BYTES) throw new Error(`${keyName} must be ${ENCRYPTION_KEY_BYTES} bytes`);
  return {
    seal(plain, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([Buffer.of(FORMAT_VERSION), iv, cipher.getAuthTag(), body]);
    },
    open(sealed, context) {
      if (sealed.length < HEADER_BYTES || sealed[0] !== FORMAT_VERSION) throw new Error(`the sealed value of ${context} has an unknown format`);
      const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(1, 1 + IV_BYTES));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(sealed.subarray(1 + IV_BYTES, HEADER_BYTES));
      try {
        return Buffer.concat([decipher.update(sealed.subarray(HEADER_BYTES)), decipher.final()]);
      } catch {
        // Never the cause: it could echo key material. A failure here means another key sealed it.
        throw new Error(`the sealed value of ${context} cannot be opened: was ${keyName} changed?`);
      }
    },
  };
}
