import { describe, expect, it } from "vitest";
import { z } from "zod";
import { HttpError } from "../src/errors.js";
import { createIntegrationBody } from "../src/mappers/integrations.js";
import { createSubscriberV1Body, credentialsBody } from "../src/mappers/subscribers.js";
import { triggerBody } from "../src/mappers/triggers.js";
import { outboundCheck, outboundUrl } from "../src/validation.js";

const strict = { allowedCidrs: [] };

async function errorsOf(check: ReturnType<typeof outboundCheck>, body: unknown) {
  const outcome = await Promise.resolve(check!(body, strict)).then(
    () => undefined,
    (error: unknown) => error,
  );
  if (outcome === undefined) return undefined;
  expect(outcome).toBeInstanceOf(HttpError);
  expect((outcome as HttpError).status).toBe(422);
  return Object.keys((outcome as HttpError).extra.errors as object).sort();
}

describe("outboundCheck: the destination fields of a body schema", () => {
  it("finds them in nested objects, arrays and unions", async () => {
    expect(await errorsOf(outboundCheck(credentialsBody), { providerId: "slack", credentials: { webhookUrl: "http://127.0.0.1/" } })).toEqual([
      "credentials.webhookUrl",
    ]);
    const channels = [{ credentials: { webhookUrl: "https://203.0.113.9.example/" } }, { credentials: { webhookUrl: "http://[::1]/" } }];
    expect(await errorsOf(outboundCheck(createSubscriberV1Body), { channels })).toEqual(["channels[1].credentials.webhookUrl"]);
    const recipient = { subscriberId: "s", channels: [{ credentials: { webhookUrl: "http://10.0.0.1/" } }] };
    expect(await errorsOf(outboundCheck(triggerBody), { to: ["id", recipient] })).toEqual(["to[1].channels[0].credentials.webhookUrl"]);
    expect(await errorsOf(outboundCheck(triggerBody), { to: recipient, actor: recipient })).toEqual([
      "actor.channels[0].credentials.webhookUrl",
      "to.channels[0].credentials.webhookUrl",
    ]);
    expect(await errorsOf(outboundCheck(createIntegrationBody), { credentials: { baseUrl: "http://0x7f.1/", host: "192.168.0.10", webhookUrl: "" } })).toEqual([
      "credentials.baseUrl",
      "credentials.host",
    ]);
  });

  it("waits for nothing when a body sets no destination", () => {
    expect(outboundCheck(triggerBody)!({ to: "subscriber-id" }, strict)).toBeUndefined();
    expect(outboundCheck(z.object({ name: z.string() }))).toBeUndefined();
  });

  it("refuses to vet fields under a transform, whose output it could not find them in", () => {
    const hidden = z.object({ credentials: z.object({ webhookUrl: outboundUrl("webhookUrl") }).transform((value) => value) });
    expect(() => outboundCheck(hidden)).toThrow(/credentials.*cannot be vetted/);
  });
});
