import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir } from "node:fs/promises";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually, selfSignedCertificate } from "@notify/testing";
import { createNodemailer } from "../src/email/nodemailer.js";
import { createOutbound, DEFAULT_OUTBOUND_POLICY, OutboundRefused } from "../src/outbound.js";
import { ProviderError, type EmailMessage, type SendContext } from "../src/types.js";

interface Received {
  from: string;
  to: string[];
  raw: string;
  mail: ParsedMail;
  /** The name the client greeted with (EHLO). */
  greeting: string;
}

interface Sink {
  port: number;
  received: Received[];
  /** Connections the sink accepted, and those still open. */
  connections: number;
  open: number;
  logins: string[];
  stop(): Promise<void>;
}

/** A local SMTP server that records what it receives; `reject` answers RCPT TO of matching addresses with that reply. */
async function startSink(options: Partial<SMTPServerOptions> = {}, reject: Record<string, number> = {}): Promise<Sink> {
  const sink = { received: [] as Received[], connections: 0, open: 0, logins: [] as string[] };
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    ...options,
    onConnect(_session, callback) {
      sink.connections += 1;
      sink.open += 1;
      callback();
    },
    onClose() {
      sink.open -= 1;
    },
    onAuth(auth, _session, callback) {
      if (auth.username === "smtp-user" && auth.password === "smtp-pass") {
        sink.logins.push(auth.username);
        return callback(null, { user: auth.username });
      }
      return callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const code = reject[address.address];
      if (code) return callback(Object.assign(new Error(`Mailbox ${address.address} refused`), { responseCode: code }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      new Promise<Buffer>((resolve, reject) => {
        stream.on("end", () => resolve(Buffer.concat(chunks)));
        stream.on("error", reject);
      }).then(
        async (raw) => {
          const envelope = session.envelope;
          sink.received.push({
            from: envelope.mailFrom ? envelope.mailFrom.address : "",
            to: envelope.rcptTo.map((rcpt) => rcpt.address),
            raw: raw.toString("utf8"),
            mail: await simpleParser(raw),
            greeting: session.hostNameAppearsAs,
          });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(sink, { port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}

const http = createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"] });
afterAll(() => http.close());

const context = (port: number, extra: Partial<SendContext["credentials"]> = {}, integrationId = "int-1"): SendContext => ({
  integrationId,
  credentials: {
    host: "127.0.0.1",
    port: String(port),
    secure: false,
    user: "smtp-user",
    password: "smtp-pass",
    from: "noreply@notify.test",
    senderName: "Notify",
    ...extra,
  },
  http,
  idempotencyKey: "key-1",
});

const message = (extra: Partial<EmailMessage> = {}): EmailMessage => ({
  to: ["ann@example.test"],
  subject: "Your order",
  html: "<p>Hello <b>Ann</b></p>",
  text: "Hello Ann",
  attachments: [],
  ...extra,
});

const providers: ReturnType<typeof createNodemailer>[] = [];
const provider = () => {
  const made = createNodemailer();
  providers.push(made);
  return made;
};
afterEach(async () => {
  await Promise.all(providers.splice(0).map((made) => made.close()));
});

describe("nodemailer (custom SMTP)", () => {
  let sink: Sink;
  beforeAll(async () => {
    sink = await startSink();
  });
  afterAll(() => sink.stop());

  it("delivers envelope, subject, HTML and text parts and attachments after AUTH, and reuses one pooled connection", async () => {
    const smtp = provider();
    expect(smtp.idempotent).toBe(false);
    const before = sink.received.length;
    const connectionsBefore = sink.connections;
    const result = await smtp.send(
      message({
        to: ["ann@example.test", "bob@example.test"],
        cc: ["carl@example.test"],
        bcc: ["dora@example.test"],
        replyTo: "support@notify.test",
        attachments: [{ name: "report.pdf", mime: "application/pdf", content: new Uint8Array([37, 80, 68, 70, 0, 255]) }],
      }),
      context(sink.port),
    );
    expect(result.id).toMatch(/^<.+>$/);
    const got = sink.received[before]!;
    expect(got.from).toBe("noreply@notify.test");
    expect(got.to.sort()).toEqual(["ann@example.test", "bob@example.test", "carl@example.test", "dora@example.test"]);
    expect(got.mail.subject).toBe("Your order");
    expect(got.mail.messageId).toBe(result.id);
    expect(got.mail.from?.value).toEqual([{ address: "noreply@notify.test", name: "Notify" }]);
    expect(got.mail.replyTo?.value[0]?.address).toBe("support@notify.test");
    expect(got.mail.html).toBe("<p>Hello <b>Ann</b></p>");
    expect(got.mail.text?.trim()).toBe("Hello Ann");
    expect(got.mail.headers.get("content-type")).toMatchObject({ value: "multipart/mixed" });
    expect(got.raw).toMatch(/Content-Type: multipart\/alternative/i);
    expect(got.raw).toMatch(/Content-Type: text\/plain/i);
    expect(got.raw).toMatch(/Content-Type: text\/html/i);
    expect(got.mail.attachments).toHaveLength(1);
    expect(got.mail.attachments[0]).toMatchObject({ filename: "report.pdf", contentType: "application/pdf" });
    expect([...got.mail.attachments[0]!.content]).toEqual([37, 80, 68, 70, 0, 255]);
    expect(sink.logins.at(-1)).toBe("smtp-user");

    for (let i = 0; i < 4; i += 1) await smtp.send(message({ to: [`n${i}@example.test`] }), context(sink.port));
    expect(sink.received.length - before).toBe(5);
    expect(sink.connections - connectionsBefore).toBe(1);
  });

  it("merges the trigger's provider overrides into the mail's options, and never reads a file or URL they name", async () => {
    const smtp = provider();
    const before = sink.received.length;
    const dkimCache = await mkdtemp(join(tmpdir(), "dkim-cache-"));
    const providerData = {
      priority: "high",
      attachments: [{ filename: "note.txt", content: "from the trigger" }],
      // DKIM's options are left out: its cache would write the mail where they say.
      dkim: { domainName: "example.test", keySelector: "k", privateKey: "not a key", cacheDir: dkimCache, cacheTreshold: 1 },
    };
    await smtp.send(message(), { ...context(sink.port), providerData });
    const got = sink.received[before]!;
    expect(got.raw).toMatch(/^X-Priority: 1 \(Highest\)\r?$/m);
    expect(got.mail.attachments.map((attachment) => [attachment.filename, attachment.content.toString()])).toEqual([["note.txt", "from the trigger"]]);
    expect(got.mail.headers.has("dkim-signature")).toBe(false);
    expect(await readdir(dkimCache)).toEqual([]);

    for (const reading of [
      { filename: "passwd", path: "/etc/passwd" },
      { filename: "metadata", href: "http://169.254.169.254/latest/meta-data/" },
    ]) {
      const refused = await smtp
        .send(message(), { ...context(sink.port), providerData: { disableFileAccess: false, disableUrlAccess: false, attachments: [reading] } })
        .then(
          () => expect.fail("the mail was sent"),
          (error: unknown) => error as ProviderError,
        );
      expect(refused).toBeInstanceOf(ProviderError);
      expect(refused.transient).toBe(false);
    }
    expect(sink.received.length - before).toBe(1);
  });

  it("bounds concurrent sends of one integration to the pool's connections, and keeps a pool per integration", async () => {
    const smtp = provider();
    const before = sink.received.length;
    const connectionsBefore = sink.connections;
    await Promise.all(Array.from({ length: 20 }, (_, i) => smtp.send(message({ to: [`c${i}@example.test`] }), context(sink.port, {}, "int-a"))));
    expect(sink.received.length - before).toBe(20);
    const poolA = sink.connections - connectionsBefore;
    expect(poolA).toBeGreaterThan(1);
    expect(poolA).toBeLessThanOrEqual(5);
    await smtp.send(message(), context(sink.port, {}, "int-b"));
    expect(sink.connections - connectionsBefore).toBe(poolA + 1);
  });

  it("greets with the server's name and signs with DKIM when the integration has Novu's three DKIM fields", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const dkim = { domain: "notify.test", secretKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), accountSid: "mail" };
    const before = sink.received.length;
    await provider().send(message(), context(sink.port, { host: "localhost", ...dkim }));
    const signed = sink.received[before]!;
    expect(signed.greeting).toBe("localhost");
    expect(signed.raw).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=notify\.test;\s*q=dns\/txt; s=mail;/m);
    // Without all three, mail goes unsigned.
    await provider().send(message(), context(sink.port, { host: "localhost", domain: "notify.test" }));
    expect(sink.received[before + 1]!.raw).not.toMatch(/DKIM-Signature/);
  });

  it("lets the message's from and sender name beat the integration's", async () => {
    const before = sink.received.length;
    await provider().send(message({ from: "orders@shop.test", senderName: "Shop, Inc." }), context(sink.port));
    const got = sink.received[before]!;
    expect(got.from).toBe("orders@shop.test");
    expect(got.mail.from?.value).toEqual([{ address: "orders@shop.test", name: "Shop, Inc." }]);
  });

  it("makes a new pool when the integration's settings change and closes the old one", async () => {
    const smtp = provider();
    const connectionsBefore = sink.connections;
    await smtp.send(message(), context(sink.port, {}, "int-change"));
    const openWithFirst = sink.open;
    await smtp.send(message(), context(sink.port, { senderName: "Renamed" }, "int-change"));
    expect(sink.connections - connectionsBefore).toBe(1);
    await smtp.send(message(), context(sink.port, { requireTls: false, ignoreTls: true }, "int-change"));
    expect(sink.connections - connectionsBefore).toBe(2);
    await expect.poll(() => sink.open).toBe(openWithFirst);
    await smtp.close();
    await expect.poll(() => sink.open).toBe(openWithFirst - 1);
  });

  it("fails a send with wrong credentials as final, without the password in the error", async () => {
    const error = await provider()
      .send(message(), context(sink.port, { password: "wrong-secret" }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).transient).toBe(false);
    expect((error as ProviderError).status).toBe(535);
    expect((error as ProviderError).message).not.toContain("wrong-secret");
  });

  it("names a missing host or sender", async () => {
    await expect(provider().send(message(), context(sink.port, { host: undefined }))).rejects.toMatchObject({
      transient: false,
      message: expect.stringContaining("host"),
    });
    await expect(provider().send(message(), context(sink.port, { from: undefined }))).rejects.toMatchObject({
      transient: false,
      message: expect.stringContaining("from"),
    });
  });

  it("refuses a host the outbound guard refuses, without connecting", async () => {
    const strict = createOutbound(DEFAULT_OUTBOUND_POLICY);
    const connectionsBefore = sink.connections;
    await expect(provider().send(message(), { ...context(sink.port), http: strict })).rejects.toBeInstanceOf(OutboundRefused);
    await expect(provider().send(message(), { ...context(sink.port, { host: "localhost" }), http: strict })).rejects.toBeInstanceOf(OutboundRefused);
    expect(sink.connections).toBe(connectionsBefore);
    await strict.close();
  });
});

describe("nodemailer failures", () => {
  it("maps a 550 reply to a final error and a 451 reply to a transient one", async () => {
    const sink = await startSink({}, { "gone@example.test": 550, "busy@example.test": 451 });
    try {
      const smtp = provider();
      const gone = await smtp.send(message({ to: ["gone@example.test"] }), context(sink.port)).catch((caught: unknown) => caught);
      expect(gone).toBeInstanceOf(ProviderError);
      expect(gone).toMatchObject({ transient: false, status: 550 });
      expect((gone as Error).message).toContain("Mailbox gone@example.test refused");
      const busy = await smtp.send(message({ to: ["busy@example.test"] }), context(sink.port)).catch((caught: unknown) => caught);
      expect(busy).toMatchObject({ transient: true, status: 451 });
      expect(sink.received).toHaveLength(0);
      await smtp.send(message(), context(sink.port));
      expect(sink.received).toHaveLength(1);
      await smtp.close();
    } finally {
      await sink.stop();
    }
  });

  it("maps a refused connection to a transient error", async () => {
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await provider()
      .send(message(), context(port))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).transient).toBe(true);
  });

  it("maps a server that never greets to a transient timeout", async () => {
    const silent = createNetServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as AddressInfo).port;
    const quick = createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"], connectTimeoutMs: 300 });
    try {
      const error = await provider()
        .send(message(), { ...context(port), http: quick })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ transient: true });
    } finally {
      await quick.close();
      silent.close();
    }
  });

  it("fails a send under way when the provider closes (its SMTP thread ends) as transient, and another provider sends again", async () => {
    // Greets, then never answers: the send stays under way.
    let greeted = 0;
    const stalling = createNetServer((socket) => {
      greeted += 1;
      // The ended thread's connection is reset, not closed.
      socket.on("error", () => undefined);
      socket.write("220 stalling ESMTP\r\n");
    });
    await new Promise<void>((resolve) => stalling.listen(0, "127.0.0.1", resolve));
    const sink = await startSink();
    try {
      const smtp = provider();
      const underWay = smtp.send(message(), context((stalling.address() as AddressInfo).port)).catch((caught: unknown) => caught);
      await eventually(async () => (greeted > 0 ? true : undefined));
      await smtp.close();
      expect(await underWay).toMatchObject({ transient: true });
      const next = provider();
      expect(await next.send(message(), context(sink.port))).toMatchObject({ id: expect.any(String) });
      expect(sink.received).toHaveLength(1);
      // Its pooled connection would hold the sink's close.
      await next.close();
    } finally {
      stalling.close();
      await sink.stop();
    }
  });
});

describe("nodemailer over TLS", () => {
  let sink: Sink;
  let ca = "";
  beforeAll(async () => {
    const { certificate, key } = selfSignedCertificate("localhost", "rsa:2048", ["-addext", "subjectAltName=DNS:localhost"]);
    ca = certificate;
    sink = await startSink({ disabledCommands: [], key, cert: ca });
  });
  afterAll(() => sink.stop());

  it("upgrades with STARTTLS and checks the certificate against the configured host name, not the vetted address", async () => {
    const before = sink.received.length;
    await provider().send(message(), context(sink.port, { host: "localhost", requireTls: true, tlsOptions: { ca } }));
    expect(sink.received.length).toBe(before + 1);
    // The same certificate does not name 127.0.0.1: connecting by address fails the check.
    const error = await provider()
      .send(message(), context(sink.port, { host: "127.0.0.1", requireTls: true, tlsOptions: { ca } }, "int-ip"))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ transient: false, message: expect.stringContaining("does not match certificate") });
  });
});
