import type { JsonObject } from "@bufbuild/protobuf";
import { createSealer, developmentKey } from "@notify/runtime";

/** Seals JSON with AES-256-GCM; `context` (the integration id) is authenticated with it. */
export interface SecretBox {
  seal(plain: JsonObject, context: string): Buffer;
  open(sealed: Buffer, context: string): JsonObject;
}

/** The key for local runs without INTEGRATIONS_ENCRYPTION_KEY (public: see developmentKey). */
export const DEVELOPMENT_KEY = developmentKey("integrations");

export function createSecretBox(key: Buffer): SecretBox {
  const sealer = createSealer(key, "INTEGRATIONS_ENCRYPTION_KEY");
  return {
    seal: (plain, context) => sealer.seal(Buffer.from(JSON.stringify(plain), "utf8"), context),
    open: (sealed, context) => JSON.parse(sealer.open(sealed, context).toString("utf8")) as JsonObject,
  };
}
