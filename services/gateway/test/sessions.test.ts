import { webcrypto } from "node:crypto";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import type { Environment, Environments } from "../src/environments.js";
import { createSessionTokens, SESSION_AUDIENCE, SESSION_ISSUER, type SubscriberSession } from "../src/sessions.js";

const signingKey = (byte: number) => webcrypto.subtle.importKey("raw", Buffer.alloc(32, byte), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);

async function environmentsOf(...ids: string[]): Promise<Pick<Environments, "byId">> {
  const known = new Map<string, Environment>();
  for (const [index, id] of ids.entries()) {
    known.set(id, {
      id,
      organizationId: "0".repeat(24),
      name: "Development",
      identifier: `app-${index}`,
      inboxOrigins: null,
      rateLimits: null,
      signingKey: await signingKey(index + 1),
    });
  }
  return { byId: async (id) => known.get(id) };
}

const A = "a".repeat(24);
const B = "b".repeat(24);
const session = (environmentId: string): SubscriberSession => ({
  scope: { organizationId: "0".repeat(24), environmentId },
  subscriberId: "sub-1",
  subscriberDbId: "c".repeat(24),
  contextKeys: [],
});

describe("session tokens", () => {
  it("verify what they issue, in the token's own environment, with the end the lifetime sets", async () => {
    const tokens = createSessionTokens({ environments: await environmentsOf(A, B), ttlSeconds: 60 });
    const issuedAt = Date.now();
    const verified = await tokens.verify(await tokens.issue(session(A)));
    expect(verified).toEqual({ ...session(A), expiresAt: expect.any(Date) });
    expect(Math.abs(verified!.expiresAt.getTime() - (issuedAt + 60_000))).toBeLessThan(2_000);
    expect(await tokens.verify(await tokens.issue(session(B)))).toEqual({ ...session(B), expiresAt: expect.any(Date) });
  });

  it("refuse a token of an unknown environment, one signed with another environment's key, a changed one and garbage", async () => {
    const environments = await environmentsOf(A, B);
    const tokens = createSessionTokens({ environments, ttlSeconds: 60 });
    const token = await tokens.issue(session(A));
    expect(await createSessionTokens({ environments: await environmentsOf(B), ttlSeconds: 60 }).verify(token)).toBeUndefined();
    // A's claims, signed with B's key.
    const forged = await new SignJWT({ _id: "c".repeat(24), subscriberId: "sub-1", organizationId: "0".repeat(24), environmentId: A })
      .setProtectedHeader({ alg: "HS256" })
      .setAudience(SESSION_AUDIENCE)
      .setIssuer(SESSION_ISSUER)
      .setExpirationTime("1h")
      .sign((await environments.byId(B))!.signingKey);
    expect(await tokens.verify(forged)).toBeUndefined();
    const [header, payload, signature] = token.split(".");
    const changed = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), subscriberId: "sub-2" })).toString("base64url");
    expect(await tokens.verify(`${header}.${changed}.${signature}`)).toBeUndefined();
    for (const garbage of ["", "x", "a.b.c", `${token}x`, "x".repeat(10_000)]) expect(await tokens.verify(garbage)).toBeUndefined();
  });

  it("refuse an expired token, another audience or issuer, no expiry and another algorithm", async () => {
    const environments = await environmentsOf(A);
    const tokens = createSessionTokens({ environments, ttlSeconds: 60 });
    const key = (await environments.byId(A))!.signingKey;
    const claims = { _id: "c".repeat(24), subscriberId: "sub-1", organizationId: "0".repeat(24), environmentId: A };
    const sign = (build: (jwt: SignJWT) => SignJWT) => build(new SignJWT(claims).setProtectedHeader({ alg: "HS256" })).sign(key);
    expect(await tokens.verify(await sign((jwt) => jwt.setAudience(SESSION_AUDIENCE).setIssuer(SESSION_ISSUER).setExpirationTime("1h")))).toEqual({
      ...session(A),
      expiresAt: expect.any(Date),
    });
    expect(
      await tokens.verify(
        await sign((jwt) =>
          jwt
            .setAudience(SESSION_AUDIENCE)
            .setIssuer(SESSION_ISSUER)
            .setExpirationTime(Math.floor(Date.now() / 1000) - 5),
        ),
      ),
    ).toBeUndefined();
    expect(await tokens.verify(await sign((jwt) => jwt.setAudience("user").setIssuer(SESSION_ISSUER).setExpirationTime("1h")))).toBeUndefined();
    expect(await tokens.verify(await sign((jwt) => jwt.setAudience(SESSION_AUDIENCE).setIssuer("novu_api").setExpirationTime("1h")))).toBeUndefined();
    expect(await tokens.verify(await sign((jwt) => jwt.setAudience(SESSION_AUDIENCE).setIssuer(SESSION_ISSUER)))).toBeUndefined();
    const unsigned = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(JSON.stringify({ ...claims, aud: SESSION_AUDIENCE, iss: SESSION_ISSUER, exp: 2e9 })).toString("base64url")}.`;
    expect(await tokens.verify(unsigned)).toBeUndefined();
  });

  it("expire after their lifetime", async () => {
    const tokens = createSessionTokens({ environments: await environmentsOf(A), ttlSeconds: 60 });
    const token = await tokens.issue(session(A));
    const { exp, iat } = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { exp: number; iat: number };
    expect(exp - iat).toBe(60);
  });
});
