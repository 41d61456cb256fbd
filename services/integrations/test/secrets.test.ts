import { describe, expect, it } from "vitest";
import { readConfig } from "../src/config.js";
import { parseEncryptionKey as parseKey } from "@notify/runtime";
import { DEVELOPMENT_KEY, createSecretBox } from "../src/secrets.js";

const key = Buffer.alloc(32, 1);

describe("secret box (AES-256-GCM)", () => {
  const box = createSecretBox(key);

  it("opens what it sealed, with the same context", () => {
    const sealed = box.seal({ credentials: { apiKey: "sk_live_1" } }, "integration-a");
    expect(sealed.includes(Buffer.from("sk_live_1"))).toBe(false);
    expect(box.open(sealed, "integration-a")).toEqual({ credentials: { apiKey: "sk_live_1" } });
  });

  it("uses a fresh IV each time", () => {
    expect(box.seal({ a: "x" }, "c").equals(box.seal({ a: "x" }, "c"))).toBe(false);
  });

  it("refuses another context, a tampered value and another key, without echoing the secret", () => {
    const sealed = box.seal({ token: "t0p-secret" }, "integration-a");
    expect(() => box.open(sealed, "integration-b")).toThrow(/cannot be opened/);
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => box.open(tampered, "integration-a")).toThrow(/cannot be opened/);
    const error = (() => {
      try {
        createSecretBox(Buffer.alloc(32, 2)).open(sealed, "integration-a");
      } catch (caught) {
        return caught as Error;
      }
      throw new Error("opened with another key");
    })();
    expect(error.message).not.toContain("t0p-secret");
    expect(() => box.open(Buffer.from([9, 9, 9]), "integration-a")).toThrow(/unknown format/);
  });

  it("refuses keys that are not 32 bytes", () => {
    expect(() => createSecretBox(Buffer.alloc(16))).toThrow();
  });
});

describe("INTEGRATIONS_ENCRYPTION_KEY", () => {
  it("accepts 64 hex characters, base64 of 32 bytes and long passphrases", () => {
    expect(parseKey("ab".repeat(32))).toEqual(Buffer.alloc(32, 0xab));
    expect(parseKey(Buffer.alloc(32, 5).toString("base64"))).toEqual(Buffer.alloc(32, 5));
    const derived = parseKey("dev-only-encryption-key-change-me");
    expect(derived).toHaveLength(32);
    expect(derived?.equals(DEVELOPMENT_KEY)).toBe(false);
  });

  it("refuses short text, and the service refuses to start with it", () => {
    expect(parseKey("short")).toBeUndefined();
    expect(() => readConfig({ INTEGRATIONS_ENCRYPTION_KEY: "short" })).toThrow(/INTEGRATIONS_ENCRYPTION_KEY/);
    expect(readConfig({}).INTEGRATIONS_ENCRYPTION_KEY).toBeUndefined();
    expect(readConfig({ INTEGRATIONS_ENCRYPTION_KEY: "ab".repeat(32) }).INTEGRATIONS_ENCRYPTION_KEY).toEqual(Buffer.alloc(32, 0xab));
  });
});
