import { createServer, type IncomingHttpHeaders } from "node:http";
import { createServer as createHttp2Server, type IncomingHttpHeaders as Http2Headers, type ServerHttp2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";

/** One request as a receiver saw it. */
export interface Received {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  body: string;
  /** The exact body bytes (multipart bodies may carry binary attachments). */
  raw: Buffer;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON. */
  body?: string | object;
}

/** A local stand-in for a vendor's API: records every request and answers what `respond` says (a promise that never settles: no answer). */
export interface Receiver {
  url: string;
  received: Received[];
  respond: (request: Received) => Answer | Promise<Answer>;
  close(): Promise<void>;
}

export async function startReceiver(respond: Receiver["respond"] = () => ({})): Promise<Receiver> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const raw = Buffer.concat(chunks);
      const seen: Received = { method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: raw.toString("utf8"), raw };
      receiver.received.push(seen);
      void Promise.resolve(receiver.respond(seen)).then((answer) => {
        response.writeHead(answer.status ?? 200, answerHeaders(answer));
        response.end(answerBody(answer));
      });
    });
  });
  const receiver: Receiver = {
    url: "",
    received: [],
    respond,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

const answerHeaders = (answer: Answer) => ({ "content-type": typeof answer.body === "object" ? "application/json" : "text/plain", ...answer.headers });
const answerBody = (answer: Answer) => (typeof answer.body === "object" ? JSON.stringify(answer.body) : (answer.body ?? ""));

/**
 * The same over cleartext HTTP/2 (h2c), for vendors that speak only HTTP/2 (APNs). Pseudo-headers
 * are left out of `headers`; `url` is the `:path`.
 */
export async function startHttp2Receiver(respond: Receiver["respond"] = () => ({})): Promise<Receiver> {
  const server = createHttp2Server();
  server.on("stream", (stream, headers: Http2Headers) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      const raw = Buffer.concat(chunks);
      const plain = Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith(":")));
      const seen: Received = { method: String(headers[":method"] ?? ""), url: String(headers[":path"] ?? ""), headers: plain, body: raw.toString("utf8"), raw };
      receiver.received.push(seen);
      void Promise.resolve(receiver.respond(seen)).then((answer) => {
        if (stream.closed) return;
        stream.respond({ ":status": answer.status ?? 200, ...answerHeaders(answer) });
        stream.end(answerBody(answer));
      });
    });
  });
  // Sessions the client keeps open would hold close() up: they are ended with the server.
  const sessions = new Set<ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  const receiver: Receiver = {
    url: "",
    received: [],
    respond,
    close: () =>
      new Promise((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** Parses a whole MIME message (a raw mail an API received, as SES takes it). */
export const parseMail = (raw: string | Buffer): Promise<ParsedMail> => simpleParser(raw);

export interface ReceivedMail {
  /** MAIL FROM and RCPT TO. */
  envelope: { from: string; to: string[] };
  mail: ParsedMail;
  raw: string;
}

export interface SmtpSink {
  port: number;
  /** Every mail whose data arrived whole, also one whose reply the client never read. */
  received: ReceivedMail[];
  /** Mails received and not yet answered (only ever above 0 with `replyDelayMs`). */
  readonly unanswered: number;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /**
   * How long the sink holds its reply to a whole mail. A client that dies in that window has
   * handed the mail over without learning so: the case a fault test needs to catch in the act.
   */
  replyDelayMs?: number;
}

/** A local SMTP server (no TLS, no auth required) that keeps every mail it accepts. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  let unanswered = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    // The client is always local: a reverse lookup only waits on this machine's DNS (seconds when it is busy).
    disableReverseLookup: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        simpleParser(raw).then(
          (mail) => {
            const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
            received.push({ envelope: { from, to: session.envelope.rcptTo.map((rcpt) => rcpt.address) }, mail, raw });
            if (!options.replyDelayMs) return callback();
            unanswered += 1;
            setTimeout(() => {
              unanswered -= 1;
              callback();
            }, options.replyDelayMs);
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  // A client killed mid-session (the fault tests SIGKILL a worker) resets its connection:
  // smtp-server reports that on the server, and the sink goes on serving the others.
  server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    get unanswered() {
      return unanswered;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
