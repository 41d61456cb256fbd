import { describe, expect, it } from "vitest";
import { createOutbound, DEFAULT_OUTBOUND_POLICY, OutboundRefused } from "../src/outbound.js";
import type { TextSetting } from "../src/settings.js";
import { ProviderError, type ProviderCredentials, type SmsMessage } from "../src/types.js";
import { verifySigV4 } from "@notify/testing";
import { basic, formOf, sendContext, sendingFixture } from "./helpers.js";

const { receiver, http, providers } = await sendingFixture();

const sms: SmsMessage = { to: "+15550001111", content: "Your code is 1234" };

function send(id: string, message: SmsMessage, credentials: ProviderCredentials) {
  const provider = providers.get("sms", id);
  if (!provider) throw new Error(`no sms provider ${id}`);
  return provider.send(message, sendContext(http, credentials));
}

/** The only request the receiver saw. */
function only() {
  expect(receiver.received).toHaveLength(1);
  const [request] = receiver.received;
  if (!request) throw new Error("no request");
  return request;
}

describe("twilio", () => {
  const credentials = () => ({ accountSid: "AC0123", token: "twilio-secret-token", from: "+15559990000", baseUrl: receiver.url });

  it("posts the form-encoded Messages API with basic auth and answers the SID", async () => {
    receiver.respond = () => ({ status: 201, body: { sid: "SM42", status: "queued", date_created: "Wed, 25 Nov 2026 16:00:00 +0000" } });
    const result = await send("twilio", sms, credentials());
    expect(result.id).toBe("SM42");
    const request = only();
    expect(request.method).toBe("POST");
    expect(request.url).toBe("/2010-04-01/Accounts/AC0123/Messages.json");
    expect(request.headers.authorization).toBe(basic("AC0123", "twilio-secret-token"));
    expect(request.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(formOf(request.body)).toEqual({ To: "+15550001111", From: "+15559990000", Body: "Your code is 1234" });
  });

  it("takes the trigger's from, and a Messaging Service SID as such", async () => {
    receiver.respond = () => ({ status: 201, body: { sid: "SM43" } });
    await send("twilio", { ...sms, from: "+15558887777" }, credentials());
    expect(formOf(only().body).From).toBe("+15558887777");
    receiver.received.length = 0;
    const service = `MG${"a".repeat(32)}`;
    await send("twilio", { ...sms, from: service }, credentials());
    expect(formOf(only().body)).toEqual({ To: "+15550001111", Body: "Your code is 1234", MessagingServiceSid: service });
  });
});

describe("vonage", () => {
  const credentials = () => ({ apiKey: "vonage-key", secretKey: "vonage-secret", from: "Acme", baseUrl: receiver.url });
  const accepted = { body: { "message-count": "1", messages: [{ to: "15550001111", "message-id": "0A0000000123ABCD1", status: "0" }] } };

  it("posts the form with api_key/api_secret and answers the message-id, under both ids", async () => {
    for (const id of ["vonage", "nexmo"]) {
      receiver.received.length = 0;
      receiver.respond = () => accepted;
      expect((await send(id, sms, credentials())).id).toBe("0A0000000123ABCD1");
      const request = only();
      expect(request.url).toBe("/sms/json");
      expect(request.headers["content-type"]).toBe("application/x-www-form-urlencoded");
      expect(formOf(request.body)).toEqual({ api_key: "vonage-key", api_secret: "vonage-secret", from: "Acme", to: "+15550001111", text: "Your code is 1234" });
    }
  });

  it("sends text outside ASCII as unicode", async () => {
    receiver.respond = () => accepted;
    await send("vonage", { ...sms, content: "Grüße ✓" }, credentials());
    expect(formOf(only().body)).toMatchObject({ text: "Grüße ✓", type: "unicode" });
  });

  it("reads rejections from the 200 answer: throttled is transient, others final with Vonage's text", async () => {
    receiver.respond = () => ({ body: { "message-count": "1", messages: [{ status: "1", "error-text": "Throughput Rate Exceeded" }] } });
    await expect(send("vonage", sms, credentials())).rejects.toMatchObject({ transient: true, message: expect.stringContaining("Throughput Rate Exceeded") });
    receiver.respond = () => ({ body: { "message-count": "1", messages: [{ status: "15", "error-text": "Illegal Sender Address - rejected" }] } });
    const error = await send("vonage", sms, credentials()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ transient: false, message: expect.stringContaining("Illegal Sender Address") });
    expect((error as Error).message).not.toContain("vonage-secret");
  });
});

describe("plivo", () => {
  it("posts JSON to the account's Message endpoint with basic auth and answers the first message_uuid", async () => {
    receiver.respond = () => ({ status: 202, body: { api_id: "a1", message: "message(s) queued", message_uuid: ["db3ce55a-7f1d-11e1-8ea7-1231380bc196"] } });
    const result = await send("plivo", sms, { accountSid: "MAXXXX", token: "plivo-secret", from: "+14155550000", baseUrl: receiver.url });
    expect(result.id).toBe("db3ce55a-7f1d-11e1-8ea7-1231380bc196");
    const request = only();
    expect(request.url).toBe("/v1/Account/MAXXXX/Message/");
    expect(request.headers.authorization).toBe(basic("MAXXXX", "plivo-secret"));
    expect(request.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request.body)).toEqual({ src: "+14155550000", dst: "+15550001111", text: "Your code is 1234" });
  });
});

describe("sns", () => {
  it("publishes to the phone number with a valid SigV4 signature and answers the MessageId", async () => {
    receiver.respond = () => ({
      headers: { "content-type": "text/xml" },
      body: `<PublishResponse xmlns="https://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>567910cd-659e-55d4-8ccb-5aaf14679dc0</MessageId></PublishResult><ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata></PublishResponse>`,
    });
    const result = await send("sns", sms, { apiKey: "AKIDEXAMPLE", secretKey: "sns-secret-access-key", region: "eu-west-1", baseUrl: receiver.url });
    expect(result.id).toBe("567910cd-659e-55d4-8ccb-5aaf14679dc0");
    const request = only();
    expect(request.url).toBe("/");
    expect(formOf(request.body)).toEqual({ Action: "Publish", Version: "2010-03-31", PhoneNumber: "+15550001111", Message: "Your code is 1234" });
    // What AWS does: check the signature over the request as received.
    const signed = verifySigV4(request, "sns-secret-access-key");
    expect(signed).toMatchObject({ accessKeyId: "AKIDEXAMPLE", region: "eu-west-1", service: "sns" });
    expect(signed.signedHeaders).toEqual(expect.arrayContaining(["host", "x-amz-date", "content-type"]));
  });

  it("signs the request with the trigger's provider overrides in it, nested fields in the Query API's form", async () => {
    receiver.respond = () => ({ body: "<PublishResponse><PublishResult><MessageId>m-2</MessageId></PublishResult></PublishResponse>" });
    const provider = providers.get("sms", "sns")!;
    const providerData = {
      messageGroupId: "orders",
      _passthrough: {
        body: { MessageAttributes: { "AWS.SNS.SMS.SMSType": { DataType: "String", StringValue: "Transactional" } } },
        headers: { "x-trace": "t-1" },
        query: { via: "notify" },
      },
    };
    const credentials = { apiKey: "AKIDEXAMPLE", secretKey: "sns-secret-access-key", region: "eu-west-1", baseUrl: receiver.url };
    await provider.send(sms, { ...sendContext(http, credentials), providerData });
    const request = only();
    expect(request.url).toBe("/?via=notify");
    expect(formOf(request.body)).toEqual({
      Action: "Publish",
      Version: "2010-03-31",
      PhoneNumber: "+15550001111",
      Message: "Your code is 1234",
      MessageGroupId: "orders",
      "MessageAttributes.entry.1.Name": "AWS.SNS.SMS.SMSType",
      "MessageAttributes.entry.1.Value.DataType": "String",
      "MessageAttributes.entry.1.Value.StringValue": "Transactional",
    });
    expect(verifySigV4(request, "sns-secret-access-key").signedHeaders).toEqual(expect.arrayContaining(["host", "x-trace"]));
  });
});

describe("telnyx", () => {
  it("posts JSON with the Bearer key and answers data.id", async () => {
    receiver.respond = () => ({ body: { data: { id: "40385f64-5717-4562-b3fc-2c963f66afa6", record_type: "message", received_at: "2026-11-25T16:00:00Z" } } });
    const result = await send("telnyx", sms, { apiKey: "KEY-telnyx-secret", from: "+18445550001", messageProfileId: "profile-1", baseUrl: receiver.url });
    expect(result.id).toBe("40385f64-5717-4562-b3fc-2c963f66afa6");
    const request = only();
    expect(request.url).toBe("/v2/messages");
    expect(request.headers.authorization).toBe("Bearer KEY-telnyx-secret");
    expect(JSON.parse(request.body)).toEqual({ to: "+15550001111", text: "Your code is 1234", from: "+18445550001", messaging_profile_id: "profile-1" });
  });

  it("sends from the messaging profile's pool without a number, and refuses without either", async () => {
    receiver.respond = () => ({ body: { data: { id: "m2" } } });
    await send("telnyx", sms, { apiKey: "KEY-telnyx-secret", messageProfileId: "profile-1", baseUrl: receiver.url });
    expect(JSON.parse(only().body)).toEqual({ to: "+15550001111", text: "Your code is 1234", messaging_profile_id: "profile-1" });
    await expect(send("telnyx", sms, { apiKey: "KEY-telnyx-secret", baseUrl: receiver.url })).rejects.toMatchObject({
      transient: false,
      message: expect.stringContaining("from"),
    });
  });
});

/** A generic-sms integration that first takes a token from the receiver's /auth. */
const tokenAuthenticated = () => ({
  baseUrl: `${receiver.url}/api/sms`,
  apiKeyRequestHeader: "X-Api-Key",
  apiKey: "generic-key",
  authenticateByToken: true,
  domain: `${receiver.url}/auth`,
  authenticationTokenKey: "accessToken",
});

describe("generic-sms", () => {
  it("posts the message with the named key headers and reads the id at idPath", async () => {
    receiver.respond = () => ({ body: { data: { message: { id: 981, date: "2026-11-25" } } } });
    const result = await send(
      "generic-sms",
      { ...sms, from: "Override", messageId: "64b7f0c2a1b2c3d4e5f60718", customData: { route: "otp" } },
      {
        baseUrl: `${receiver.url}/api/sms`,
        apiKeyRequestHeader: "X-Api-Key",
        apiKey: "generic-key",
        secretKeyRequestHeader: "X-Api-Secret",
        secretKey: "generic-secret",
        from: "Acme",
        idPath: "data.message.id",
      },
    );
    expect(result.id).toBe("981");
    const request = only();
    expect(request.url).toBe("/api/sms");
    expect(request.headers["x-api-key"]).toBe("generic-key");
    expect(request.headers["x-api-secret"]).toBe("generic-secret");
    // As Novu posts it: its message id and the trigger's customData along.
    expect(JSON.parse(request.body)).toEqual({
      to: "+15550001111",
      content: "Your code is 1234",
      from: "Override",
      id: "64b7f0c2a1b2c3d4e5f60718",
      customData: { route: "otp" },
      sender: "Override",
    });
  });

  it("first fetches a token from the domain, then sends with only that token", async () => {
    receiver.respond = (request) => (request.url === "/auth" ? { body: { data: { accessToken: "session-token-1" } } } : { body: { id: "g-7" } });
    const result = await send("generic-sms", sms, {
      baseUrl: `${receiver.url}/api/sms`,
      apiKeyRequestHeader: "X-Api-Key",
      apiKey: "generic-key",
      from: "Acme",
      authenticateByToken: true,
      domain: `${receiver.url}/auth`,
      authenticationTokenKey: "accessToken",
    });
    expect(result.id).toBe("g-7");
    const [auth, post] = receiver.received;
    expect(auth).toMatchObject({ method: "POST", url: "/auth" });
    expect(auth?.headers["x-api-key"]).toBe("generic-key");
    expect(post?.url).toBe("/api/sms");
    expect(post?.headers.accesstoken).toBe("session-token-1");
    expect(post?.headers["x-api-key"]).toBeUndefined();
    expect(JSON.parse(post?.body ?? "")).toEqual({ to: "+15550001111", content: "Your code is 1234", from: "Acme", customData: {}, sender: "Acme" });
  });

  it("merges the trigger's provider overrides into the message, never into the token request", async () => {
    receiver.respond = (request) => (request.url === "/auth" ? { body: { data: { accessToken: "session-token-2" } } } : { body: { id: "g-8" } });
    const credentials = tokenAuthenticated();
    const providerData = { campaignId: "spring", _passthrough: { headers: { "x-trace": "t-1" }, query: { route: "fast" } } };
    await providers.get("sms", "generic-sms")!.send(sms, { ...sendContext(http, credentials), providerData });
    const [auth, post] = receiver.received;
    expect([auth?.url, auth?.body, auth?.headers["x-trace"]]).toEqual(["/auth", "", undefined]);
    expect(post?.url).toBe("/api/sms?route=fast");
    expect(post?.headers["x-trace"]).toBe("t-1");
    expect(JSON.parse(post?.body ?? "")).toMatchObject({ to: "+15550001111", campaignId: "spring" });
  });
});

describe("generic-sms token endpoint", () => {
  it("refuses to send when the token endpoint answers no token", async () => {
    receiver.respond = () => ({ body: { data: {} } });
    const credentials = tokenAuthenticated();
    await expect(send("generic-sms", sms, credentials)).rejects.toMatchObject({ transient: false, message: expect.stringContaining("data.accessToken") });
    expect(receiver.received.map((request) => request.url)).toEqual(["/auth"]);
  });
});

/** Each provider, set up to send to the receiver, with the settings it cannot do without. */
const cases: { id: string; credentials: () => ProviderCredentials; required: TextSetting[] }[] = [
  {
    id: "twilio",
    credentials: () => ({ accountSid: "AC1", token: "secret-1", from: "+1555", baseUrl: receiver.url }),
    required: ["accountSid", "token", "from"],
  },
  {
    id: "vonage",
    credentials: () => ({ apiKey: "secret-k", secretKey: "secret-2", from: "Acme", baseUrl: receiver.url }),
    required: ["apiKey", "secretKey", "from"],
  },
  {
    id: "plivo",
    credentials: () => ({ accountSid: "MA1", token: "secret-3", from: "+1555", baseUrl: receiver.url }),
    required: ["accountSid", "token", "from"],
  },
  {
    id: "sns",
    credentials: () => ({ apiKey: "AKID", secretKey: "secret-4", region: "us-east-1", baseUrl: receiver.url }),
    required: ["apiKey", "secretKey", "region"],
  },
  { id: "telnyx", credentials: () => ({ apiKey: "secret-5", from: "+1555", baseUrl: receiver.url }), required: ["apiKey"] },
  {
    id: "generic-sms",
    credentials: () => ({ baseUrl: `${receiver.url}/sms`, apiKeyRequestHeader: "x-key", apiKey: "secret-6", from: "Acme" }),
    required: ["baseUrl", "apiKeyRequestHeader", "apiKey"],
  },
];

const secretsOf = (credentials: ProviderCredentials) =>
  [credentials.token, credentials.secretKey, credentials.apiKey].filter((value): value is string => value !== undefined);

async function failure(id: string, credentials: ProviderCredentials): Promise<ProviderError> {
  const error = await send(id, sms, credentials).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProviderError);
  for (const secret of secretsOf(credentials)) expect((error as Error).message).not.toContain(secret);
  return error as ProviderError;
}

describe.each(cases)("$id answers", ({ id, credentials, required }) => {
  it("429 with Retry-After: transient, after that long", async () => {
    receiver.respond = () => ({ status: 429, headers: { "retry-after": "7" }, body: { message: "Too Many Requests" } });
    expect(await failure(id, credentials())).toMatchObject({ transient: true, status: 429, retryAfterMs: 7000 });
  });

  it("5xx: transient", async () => {
    receiver.respond = () => ({ status: 503, body: "Service Unavailable" });
    expect(await failure(id, credentials())).toMatchObject({ transient: true, status: 503 });
  });

  it("400: final, with the vendor's text", async () => {
    receiver.respond = () => ({ status: 400, body: { code: 21211, message: "The 'To' number +15550001111 is not a valid phone number." } });
    const error = await failure(id, credentials());
    expect(error).toMatchObject({ transient: false, status: 400 });
    expect(error.message).toContain("is not a valid phone number");
  });

  it.each(required)("no %s: final, naming it, nothing sent", async (field) => {
    const error = await failure(id, { ...credentials(), [field]: undefined });
    expect(error.transient).toBe(false);
    expect(error.message).toContain(field);
    expect(receiver.received).toHaveLength(0);
  });
});

describe("the outbound guard", () => {
  it("covers generic-sms's token domain too: nothing reaches a private address", async () => {
    const strict = createOutbound(DEFAULT_OUTBOUND_POLICY);
    const provider = providers.get("sms", "generic-sms");
    const credentials = {
      baseUrl: "https://sms.example.com/send",
      apiKeyRequestHeader: "x-key",
      apiKey: "generic-key",
      authenticateByToken: true,
      domain: `${receiver.url}/auth`,
      authenticationTokenKey: "token",
    };
    const error = await provider?.send(sms, sendContext(strict, credentials)).catch((caught: unknown) => caught);
    await strict.close();
    expect(error).toBeInstanceOf(OutboundRefused);
    expect(receiver.received).toHaveLength(0);
  });
});
