import { eventually, startReceiver, startSmtpSink, type Receiver, type SmtpSink } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createIntegration,
  createWorkflow,
  delivered,
  executionDetails,
  type Message,
  messagesOf,
  settledMessage,
  sinkCredentials,
} from "./delivery-helpers.js";
import { startStack, type Data, type Stack } from "./stack.js";

let stack: Stack;
let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
  // Local receivers stand in for providers; a short budget ends a send to a silent receiver within the test.
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8", workerEnv: { DELIVERY_BUDGET_MS: "4000", OUTBOUND_TIMEOUT_MS: "1000" } });
});
afterAll(async () => {
  await stack?.stop();
  await sink?.close();
});

describe("email through SMTP", () => {
  let workflow: string;
  beforeAll(async () => {
    await createIntegration(stack, {
      providerId: "nodemailer",
      channel: "email",
      identifier: "smtp-sink",
      credentials: sinkCredentials(sink, { senderName: "Notify" }),
    });
    workflow = await createWorkflow(stack, "Receipt", [
      {
        template: {
          type: "email",
          subject: "Receipt for {{subscriber.firstName}}",
          content: [
            { type: "text", content: "Hello <b>{{subscriber.firstName}}</b>, you paid {{amount}}." },
            { type: "button", content: "See it", url: "https://example.com/r/{{id}}" },
          ],
        },
      },
    ]);
    await stack.request("POST", "/v1/subscribers", { subscriberId: "ada", firstName: "Ada", email: "ada@example.com" });
    await stack.request("POST", "/v1/subscribers", { subscriberId: "no-address" });
  });

  /** A receipt to Ada, processed. */
  async function receipt(transactionId: string, payload: Record<string, unknown>, more: Record<string, unknown> = {}) {
    const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "ada", payload, transactionId, ...more });
    expect(reply.body.data.status).toBe("processed");
  }

  it("sends the rendered mail once: sent, deliveredAt, one execution detail", async () => {
    await receipt("t-mail-1", { amount: "12 €", id: "r1" });
    const message = await settledMessage(stack, "t-mail-1", "email", delivered);
    expect(message).toMatchObject({ status: "sent", email: "ada@example.com" });
    const mails = sink.received.filter((mail) => mail.envelope.to.includes("ada@example.com"));
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail!.envelope.from).toBe("notify@example.com");
    expect(mail!.mail.subject).toBe("Receipt for Ada");
    expect(mail!.mail.from?.text).toContain("Notify");
    expect(mail!.mail.html).toContain("Hello <b>Ada</b>, you paid 12 €.");
    expect(mail!.mail.html).toContain("https://example.com/r/r1");
    expect(mail!.mail.text).toContain("Hello Ada, you paid 12 €.");
    const details = await executionDetails(stack, message, "ada");
    expect(details).toEqual([expect.objectContaining({ _messageId: message._id, status: "Success", providerId: "nodemailer", isRetry: false })]);
  });

  it("takes the trigger's email overrides as Novu does: more recipients, subject, body, the provider's own over them", async () => {
    await receipt(
      "t-mail-overrides",
      { amount: "3 €", id: "r3" },
      {
        overrides: {
          email: {
            to: ["audit@example.com"],
            subject: "Overridden",
            text: "plain override",
            cc: ["cc@example.com"],
            // Added to the mail, except a field of the mail's own and a value that would start a header of its own.
            headers: { "X-Campaign": "spring", Bcc: "spy@example.com", "X-Injected": "x\r\nBcc: spy@example.com" },
          },
          nodemailer: { html: "<p>For <i>SMTP</i> only</p>" },
        },
      },
    );
    await settledMessage(stack, "t-mail-overrides", "email", delivered);
    const [mail, ...others] = sink.received.filter((candidate) => candidate.mail.subject === "Overridden");
    expect(others).toEqual([]);
    expect([...mail!.envelope.to].sort()).toEqual(["ada@example.com", "audit@example.com", "cc@example.com"]);
    expect(mail!.mail.html).toContain("<p>For <i>SMTP</i> only</p>");
    expect(mail!.mail.html).not.toContain("you paid");
    expect(mail!.mail.headers.get("x-campaign")).toBe("spring");
    expect(mail!.mail.headers.has("x-injected")).toBe(false);
    expect(mail!.envelope.to).not.toContain("spy@example.com");
  });

  it("sends large mails to many at once, and ends a mail larger than the stream carries as an error", async () => {
    // Sixty bodies of thirty kilobytes are more than a stream message carries: the sends travel on smaller pages.
    const to = Array.from({ length: 60 }, (_, index) => ({ subscriberId: `bulk-${index}`, firstName: "Bulk", email: `bulk-${index}@example.com` }));
    const filler = "lorem ipsum ".repeat(2_500);
    const reply = await stack.request("POST", "/v1/events/trigger", {
      name: workflow,
      to,
      payload: { amount: filler, id: "r2" },
      transactionId: "t-mail-bulk",
    });
    expect(reply.body.data.status).toBe("processed");
    const sent = await eventually(async () => {
      const messages = await messagesOf(stack, "t-mail-bulk", "email");
      return messages.length === to.length && messages.every(delivered) ? messages : undefined;
    }, 30_000);
    expect(sent.every((message) => message.status === "sent")).toBe(true);
    expect(new Set(sink.received.flatMap((mail) => mail.envelope.to).filter((address) => address.startsWith("bulk-"))).size).toBe(to.length);

    // A body that prints a large payload value three times is more than any stream message carries.
    const tripled = await createWorkflow(stack, "Tripled", [{ template: { type: "email", subject: "Thrice", content: "<p>{{big}}</p>".repeat(3) } }]);
    const triggered = await stack.request("POST", "/v1/events/trigger", {
      name: tripled,
      to: "ada",
      payload: { big: "x".repeat(400_000) },
      transactionId: "t-mail-huge",
    });
    expect(triggered.body.data.status).toBe("processed");
    const refused = await settledMessage(stack, "t-mail-huge", "email", (message) => message.status === "error");
    expect(refused.errorId).toBe("mail_unexpected_error");
    expect(refused.errorText).toMatch(/^The message is \d+ bytes to send: more than the message stream carries, so it is not sent$/);
  });

  it("records a subscriber without an email address as a warning and sends nothing", async () => {
    const before = sink.received.length;
    await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "no-address", transactionId: "t-mail-2" });
    const message = await settledMessage(stack, "t-mail-2", "email", (candidate) => candidate.status === "warning");
    expect(message).toMatchObject({ errorId: "mail_unexpected_error", errorText: "Subscriber does not have an email address", deliveredAt: [] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sink.received.length).toBe(before);
  });
});

describe("chat webhooks: retries, refusals and the budget", () => {
  let receiver: Receiver;
  let workflow: string;
  let answers: Map<string, number[]>;
  beforeAll(async () => {
    answers = new Map();
    receiver = await startReceiver(async (request) => {
      const hook = request.url.split("?")[0]!;
      if (hook === "/hang") return new Promise(() => undefined);
      const queue = answers.get(hook) ?? [];
      const status = queue.shift() ?? 200;
      return status === 200 ? { body: "ok" } : { status, body: `refused with ${status}` };
    });
    await createIntegration(stack, { providerId: "slack", channel: "chat", identifier: "slack" });
    workflow = await createWorkflow(stack, "Chat note", [{ template: { type: "chat", content: "Deploy {{version}} done" } }]);
  });
  afterAll(async () => {
    await receiver?.close();
  });

  const triggerTo = async (subscriberId: string, hook: string, transactionId: string) => {
    const to = { subscriberId, channels: [{ providerId: "slack", credentials: { webhookUrl: `${receiver.url}${hook}` } }] };
    const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to, payload: { version: "1.2" }, transactionId });
    expect(reply.body.data.status).toBe("processed");
  };

  it("sends a message to each of the subscriber's chat channels", async () => {
    await createIntegration(stack, { providerId: "discord", channel: "chat", identifier: "discord" });
    const channels = [
      { providerId: "slack", credentials: { webhookUrl: `${receiver.url}/both-slack` } },
      { providerId: "discord", credentials: { webhookUrl: `${receiver.url}/both-discord` } },
    ];
    const reply = await stack.request("POST", "/v1/events/trigger", {
      name: workflow,
      to: { subscriberId: "two-channels", channels },
      payload: { version: "2.0" },
      transactionId: "t-chat-both",
    });
    expect(reply.body.data.status).toBe("processed");
    const messages = await eventually(async () => {
      const found = await messagesOf(stack, "t-chat-both", "chat");
      return found.length === 2 && found.every(delivered) ? found : undefined;
    }, 15_000);
    expect(messages.map((message) => message.providerId).sort()).toEqual(["discord", "slack"]);
    for (const hook of ["/both-slack", "/both-discord"]) expect(receiver.received.filter((request) => request.url.startsWith(hook))).toHaveLength(1);
  });

  it("posts to a payload's webhookUrl before the channel's, with the trigger's chat overrides in the message, as Novu does", async () => {
    const reply = await stack.request("POST", "/v1/events/trigger", {
      name: workflow,
      to: { subscriberId: "chat-overrides", channels: [{ providerId: "slack", credentials: { webhookUrl: `${receiver.url}/channel-hook` } }] },
      payload: { version: "3.0", webhookUrl: `${receiver.url}/payload-hook` },
      overrides: { chat: { username: "Deploy bot" }, slack: { icon_emoji: ":rocket:" } },
      transactionId: "t-chat-overrides",
    });
    expect(reply.body.data.status).toBe("processed");
    await settledMessage(stack, "t-chat-overrides", "chat", delivered);
    expect(receiver.received.filter((request) => request.url.startsWith("/channel-hook"))).toEqual([]);
    const [posted, ...others] = receiver.received.filter((request) => request.url.startsWith("/payload-hook"));
    expect(others).toEqual([]);
    expect(JSON.parse(posted!.body)).toEqual({ text: "Deploy 3.0 done", username: "Deploy bot", icon_emoji: ":rocket:" });
  });

  it("merges the trigger's provider overrides into the request, a step's over the workflow-wide ones, as Novu does", async () => {
    const workflowReply = await stack.request<Data<{ steps: { stepId: string }[] }>>("GET", `/v2/workflows/${workflow}`);
    const [{ stepId }] = workflowReply.body.data.steps as [{ stepId: string }];
    const reply = await stack.request("POST", "/v1/events/trigger", {
      name: workflow,
      to: { subscriberId: "provider-overrides", channels: [{ providerId: "slack", credentials: { webhookUrl: `${receiver.url}/provider-hook` } }] },
      payload: { version: "4.0" },
      overrides: {
        providers: {
          slack: {
            iconEmoji: ":gear:",
            unfurlLinks: false,
            _passthrough: { body: { blocks: [{ type: "divider" }] }, headers: { "X-Trace": "t-42" }, query: { via: "notify" } },
          },
          // Another provider's overrides stay with it.
          discord: { username: "not for slack" },
        },
        steps: { [stepId]: { providers: { slack: { iconEmoji: ":rocket:" } } } },
      },
      transactionId: "t-chat-provider-overrides",
    });
    expect(reply.status).toBe(201);
    const message = await settledMessage(stack, "t-chat-provider-overrides", "chat", delivered);
    const [posted, ...others] = receiver.received.filter((request) => request.url.startsWith("/provider-hook"));
    expect(others).toEqual([]);
    expect(posted!.url).toBe("/provider-hook?via=notify");
    expect(posted!.headers["x-trace"]).toBe("t-42");
    expect(JSON.parse(posted!.body)).toEqual({ text: "Deploy 4.0 done", icon_emoji: ":rocket:", unfurl_links: false, blocks: [{ type: "divider" }] });
    expect(await executionDetails(stack, message, "provider-overrides")).toEqual([expect.objectContaining({ status: "Success", providerId: "slack" })]);
  });

  it("retries a 500 and ends sent, with two attempts recorded", async () => {
    answers.set("/flaky", [500]);
    await triggerTo("flaky-user", "/flaky", "t-chat-flaky");
    const message = await settledMessage(stack, "t-chat-flaky", "chat", delivered);
    expect(message.status).toBe("sent");
    expect(message.errorId).toBeUndefined();
    const hits = receiver.received.filter((request) => request.url.startsWith("/flaky"));
    expect(hits).toHaveLength(2);
    expect(JSON.parse(hits[1]!.body)).toMatchObject({ text: "Deploy 1.2 done" });
    const details = await executionDetails(stack, message, "flaky-user");
    expect(details.map((detail) => [detail.status, detail.isRetry])).toEqual([
      ["Failed", false],
      ["Success", true],
    ]);
    expect(details[0]!.detail).toContain("500");
  });

  it("ends a 400 as an error at once with the provider's text", async () => {
    answers.set("/bad", [400]);
    await triggerTo("bad-user", "/bad", "t-chat-bad");
    const message = await settledMessage(stack, "t-chat-bad", "chat", (candidate) => candidate.status === "error");
    expect(message).toMatchObject({ errorId: "unexpected_chat_error", deliveredAt: [] });
    expect(message.errorText).toContain("refused with 400");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received.filter((request) => request.url.startsWith("/bad"))).toHaveLength(1);
    expect(await executionDetails(stack, message, "bad-user")).toHaveLength(1);
  });

  it("ends a receiver that never answers as an error once the budget is spent", async () => {
    await triggerTo("hang-user", "/hang", "t-chat-hang");
    const message = await settledMessage(stack, "t-chat-hang", "chat", (candidate) => candidate.status === "error");
    expect(message.errorId).toBe("unexpected_chat_error");
    // Attempts go on until the budget is spent, and then stop.
    await eventually(async () => {
      const details = await executionDetails(stack, message, "hang-user");
      const last = details.at(-1);
      return last && JSON.parse(last.raw).attempt >= 2 ? true : undefined;
    }, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const settled = (await executionDetails(stack, message, "hang-user")).length;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await executionDetails(stack, message, "hang-user")).length).toBe(settled);
    expect((await messagesOf(stack, "t-chat-hang", "chat"))[0]).toMatchObject({ status: "error", deliveredAt: [] });
  }, 40_000);

  it("runs the steps after a shouldStopOnFail send once it succeeded, and never after it failed", async () => {
    const stopping = await createWorkflow(stack, "Chat then inbox", [
      { template: { type: "chat", content: "first" }, shouldStopOnFail: true },
      { template: { type: "in_app", content: "after the chat" } },
    ]);
    answers.set("/refuses", [400]);
    const send = async (subscriberId: string, hook: string, transactionId: string) => {
      const to = { subscriberId, channels: [{ providerId: "slack", credentials: { webhookUrl: `${receiver.url}${hook}` } }] };
      await stack.request("POST", "/v1/events/trigger", { name: stopping, to, transactionId });
    };
    await send("goes-on", "/accepts", "t-stop-ok");
    await send("stops", "/refuses", "t-stop-bad");
    await settledMessage(stack, "t-stop-ok", "in_app", () => true);
    expect((await messagesOf(stack, "t-stop-ok", "chat"))[0]?.status).toBe("sent");
    await settledMessage(stack, "t-stop-bad", "chat", (candidate) => candidate.status === "error");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await messagesOf(stack, "t-stop-bad", "in_app")).toEqual([]);
  });

  it("refuses a webhook on a link-local address when it is written, even with loopback allowed", async () => {
    const to = { subscriberId: "metadata-user", channels: [{ providerId: "slack", credentials: { webhookUrl: "http://169.254.169.254/latest/meta-data" } }] };
    const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to, transactionId: "t-chat-metadata" });
    expect(reply.status).toBe(422);
    expect(Object.keys(reply.body.errors)).toEqual(["to.channels[0].credentials.webhookUrl"]);
    expect(await messagesOf(stack, "t-chat-metadata", "chat")).toEqual([]);
  });
});

/** Devices Expo answers "too many requests, try again in a second" until a test takes them out. */
const gatedTokens = new Set<string>();

describe("integration choice and push tokens", () => {
  let tenantSink: SmtpSink;
  let expo: Receiver;
  beforeAll(async () => {
    tenantSink = await startSmtpSink();
    expo = await startReceiver((request) => {
      const tokens = (JSON.parse(request.body) as { to: string }[]).map((message) => message.to);
      if (tokens.some((token) => gatedTokens.has(token)))
        return { status: 429, headers: { "retry-after": "1" }, body: { errors: [{ code: "TOO_MANY_REQUESTS" }] } };
      // Expo answers one ticket per message: the stale token is no longer registered.
      return {
        body: {
          data: tokens.map((token, index) =>
            token === "stale-token"
              ? { status: "error", message: "not registered", details: { error: "DeviceNotRegistered" } }
              : { status: "ok", id: `ticket-${index}` },
          ),
        },
      };
    });
  });
  afterAll(async () => {
    await tenantSink?.close();
    await expo?.close();
  });

  it("sends a tenant's email through the integration whose conditions match it, others through the primary", async () => {
    await createIntegration(stack, {
      providerId: "nodemailer",
      channel: "email",
      identifier: "acme-smtp",
      credentials: { host: "localhost", port: String(tenantSink.port), secure: false, ignoreTls: true, from: "acme@example.com" },
      conditions: [{ isNegated: false, type: "GROUP", value: "AND", children: [{ field: "identifier", value: "acme", operator: "EQUAL", on: "tenant" }] }],
    });
    const workflow = await createWorkflow(stack, "Tenant mail", [{ template: { type: "email", subject: "Hi", content: "<p>Hi</p>" } }]);
    await stack.request("POST", "/v1/subscribers", { subscriberId: "tenant-user", email: "tenant-user@example.com" });
    await stack.request("POST", "/v1/events/trigger", {
      name: workflow,
      to: "tenant-user",
      tenant: { identifier: "acme", name: "Acme" },
      transactionId: "t-tenant-acme",
    });
    await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "tenant-user", transactionId: "t-tenant-none" });
    await settledMessage(stack, "t-tenant-acme", "email", delivered);
    await settledMessage(stack, "t-tenant-none", "email", delivered);
    expect(tenantSink.received.map((mail) => mail.envelope.from)).toEqual(["acme@example.com"]);
    expect(sink.received.filter((mail) => mail.envelope.to.includes("tenant-user@example.com"))).toHaveLength(1);
  });

  it("sends an SMS to overrides.sms.to with overrides.sms.content, as Novu does, the message keeping the subscriber's phone", async () => {
    const twilio = await startReceiver(() => ({ status: 201, body: { sid: "SM-override", status: "queued" } }));
    try {
      await createIntegration(stack, {
        providerId: "twilio",
        channel: "sms",
        identifier: "twilio-overrides",
        credentials: { accountSid: "AC0001", token: "twilio-token", from: "+15550000", baseUrl: twilio.url },
      });
      const workflow = await createWorkflow(stack, "Code", [{ template: { type: "sms", content: "Your code is {{code}}" } }]);
      await stack.request("POST", "/v1/subscribers", { subscriberId: "sms-user", phone: "+15550001" });
      await stack.request("POST", "/v1/events/trigger", {
        name: workflow,
        to: "sms-user",
        payload: { code: "1234" },
        overrides: { sms: { integrationIdentifier: "twilio-overrides", to: "+15550002", content: "Overridden" }, twilio: { from: "+15550003" } },
        transactionId: "t-sms-overrides",
      });
      const message = await settledMessage(stack, "t-sms-overrides", "sms", delivered);
      expect(message).toMatchObject({ status: "sent", phone: "+15550001" });
      expect(Object.fromEntries(new URLSearchParams(twilio.received[0]!.body))).toEqual({ To: "+15550002", From: "+15550003", Body: "Overridden" });
    } finally {
      await twilio.close();
    }
  });

  it("removes the push tokens the provider reports as no longer registered", async () => {
    await createIntegration(stack, { providerId: "expo", channel: "push", identifier: "expo", credentials: { baseUrl: expo.url } });
    const workflow = await createWorkflow(stack, "Push note", [{ template: { type: "push", title: "Hello", content: "New {{thing}}" } }]);
    await stack.request("POST", "/v1/subscribers", { subscriberId: "phone-user" });
    const credentials = await stack.request("PUT", "/v1/subscribers/phone-user/credentials", {
      providerId: "expo",
      credentials: { deviceTokens: ["good-token", "stale-token"] },
    });
    expect(credentials.status, JSON.stringify(credentials.body)).toBe(200);
    await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "phone-user", payload: { thing: "order" }, transactionId: "t-push" });
    // As Novu sends push: a message per device, each listing the channel's devices, each with its own outcome.
    const messages = await eventually(async () => {
      const found = await messagesOf(stack, "t-push", "push");
      return found.length === 2 && found.every((message) => message.status !== "sent" || delivered(message)) && found.some(delivered) ? found : undefined;
    });
    const sentTo = (message: Message) =>
      (JSON.parse(expo.received.find((request) => request.body.includes(`"${message._id}"`))!.body) as { to: string }[]).map((ticket) => ticket.to);
    expect(messages.map((message) => [message.status, message.deviceTokens, sentTo(message)]).sort()).toEqual([
      ["error", ["good-token", "stale-token"], ["stale-token"]],
      ["sent", ["good-token", "stale-token"], ["good-token"]],
    ]);
    const sent = expo.received.flatMap((request) => JSON.parse(request.body) as { title: string; body: string }[]);
    expect(sent.map((item) => [item.title, item.body])).toEqual([
      ["Hello", "New order"],
      ["Hello", "New order"],
    ]);
    const channels = await eventually(async () => {
      const subscriber = (await stack.request<Data<{ channels: { credentials: { deviceTokens: string[] } }[] }>>("GET", "/v1/subscribers/phone-user")).body
        .data;
      const tokens = subscriber.channels[0].credentials.deviceTokens;
      return tokens.length === 1 ? subscriber.channels : undefined;
    });
    expect(channels[0].credentials.deviceTokens).toEqual(["good-token"]);
  });

  it("runs the steps after a shouldStopOnFail push once any device got it, once, and never when none did", async () => {
    await createIntegration(stack, { providerId: "expo", channel: "push", identifier: "expo-stop", credentials: { baseUrl: expo.url } });
    const workflow = await createWorkflow(stack, "Push then inbox", [
      { template: { type: "push", title: "Hello", content: "first" }, shouldStopOnFail: true },
      { template: { type: "in_app", content: "after the push" } },
    ]);
    const trigger = async (subscriberId: string, deviceTokens: string[], transactionId: string) => {
      await stack.request("POST", "/v1/subscribers", { subscriberId });
      const credentials = await stack.request("PUT", `/v1/subscribers/${subscriberId}/credentials`, {
        providerId: "expo",
        integrationIdentifier: "expo-stop",
        credentials: { deviceTokens },
      });
      expect(credentials.status, JSON.stringify(credentials.body)).toBe(200);
      await stack.request("POST", "/v1/events/trigger", { name: workflow, to: subscriberId, transactionId });
    };
    // The first device's token is stale: the second device got the push, so the run goes on.
    await trigger("second-device", ["stale-token", "good-token"], "t-push-stop-ok");
    await trigger("stale-only", ["stale-token"], "t-push-stop-bad");
    await settledMessage(stack, "t-push-stop-ok", "in_app", () => true);
    const pushes = await eventually(async () => {
      const found = await messagesOf(stack, "t-push-stop-ok", "push");
      return found.length === 2 && found.every((message) => message.status !== "sent" || delivered(message)) ? found : undefined;
    });
    expect(pushes.map((message) => message.status).sort()).toEqual(["error", "sent"]);
    await settledMessage(stack, "t-push-stop-bad", "push", (candidate) => candidate.status === "error");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await messagesOf(stack, "t-push-stop-ok", "in_app")).toHaveLength(1);
    expect(await messagesOf(stack, "t-push-stop-bad", "in_app")).toEqual([]);

    // The rest runs once: a device that gets the push after the run went on (retried until the
    // in-app message is deleted) does not run it again, so the deleted message stays deleted.
    gatedTokens.add("gated-token");
    await trigger("fast-and-gated", ["good-token", "gated-token"], "t-push-stop-once");
    const after = await settledMessage(stack, "t-push-stop-once", "in_app", () => true);
    expect((await stack.request("DELETE", `/v1/messages/${after._id}`)).status).toBe(200);
    gatedTokens.delete("gated-token");
    const delivery = async (transactionId: string) =>
      eventually(async () => {
        const found = await messagesOf(stack, transactionId, "push");
        return found.length > 0 && found.every(delivered) ? found : undefined;
      });
    expect(await delivery("t-push-stop-once")).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await messagesOf(stack, "t-push-stop-once", "in_app")).toEqual([]);

    // Canceled while its push is still being retried, the trigger's rest never runs, even once the push gets through.
    gatedTokens.add("canceled-token");
    await trigger("canceled-in-between", ["canceled-token"], "t-push-stop-canceled");
    await eventually(async () => ((await messagesOf(stack, "t-push-stop-canceled", "push")).length > 0 ? true : undefined));
    expect((await stack.request("DELETE", "/v1/events/trigger/t-push-stop-canceled")).status).toBe(200);
    gatedTokens.delete("canceled-token");
    await delivery("t-push-stop-canceled");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await messagesOf(stack, "t-push-stop-canceled", "in_app")).toEqual([]);
  });
});
