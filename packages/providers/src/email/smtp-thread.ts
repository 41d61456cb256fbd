/**
 * The SMTP thread: holds the nodemailer pools of one process and sends through them (smtp-pools.ts
 * is its other end). Building a MIME message and feeding it to the socket costs about as much CPU
 * as everything else a send does; here it runs beside the delivery stage instead of in its turn.
 */
import { parentPort } from "node:worker_threads";
import { createTransport, type SendMailOptions, type Transporter } from "nodemailer";
import { bufferOf } from "./sender.js";
import type { SmtpFailureShape, ToSmtpThread } from "./smtp-pools.js";

if (!parentPort) throw new Error("smtp-thread.js runs as a worker thread");
const port = parentPort;

const transports = new Map<number, Transporter>();
const aborts = new Map<number, AbortController>();

/** What the other end needs of a failure to judge it (nodemailer.ts smtpError). */
function failureOf(error: unknown): SmtpFailureShape {
  if (!(error instanceof Error)) return { message: String(error) };
  const { code, originalCode, responseCode } = error as { code?: unknown; originalCode?: unknown; responseCode?: unknown };
  return {
    message: error.message,
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof originalCode === "string" ? { originalCode } : {}),
    ...(typeof responseCode === "number" ? { responseCode } : {}),
  };
}

port.on("message", (command: ToSmtpThread) => {
  switch (command.type) {
    case "open": {
      const transport = createTransport(command.options);
      // Each failure also reaches the send it belongs to; unheard, the event would end the thread.
      transport.on("error", () => undefined);
      transports.set(command.pool, transport);
      return;
    }
    case "send": {
      const transport = transports.get(command.pool);
      if (!transport) {
        port.postMessage({ request: command.request, failure: { message: "the SMTP pool is closed", code: "ECONNECTION" } });
        return;
      }
      const abort = new AbortController();
      aborts.set(command.request, abort);
      const { attachments } = command.mail;
      const mail: SendMailOptions = {
        ...command.mail,
        // Buffers arrive as plain byte arrays; a trigger's overrides may have added attachments of their own.
        attachments: Array.isArray(attachments)
          ? attachments.map((attachment) => (attachment.content instanceof Uint8Array ? { ...attachment, content: bufferOf(attachment.content) } : attachment))
          : attachments,
        signal: abort.signal,
      };
      transport.sendMail(mail).then(
        (info) => {
          aborts.delete(command.request);
          port.postMessage({ request: command.request, sent: { messageId: info.messageId, response: info.response } });
        },
        (error: unknown) => {
          aborts.delete(command.request);
          port.postMessage({ request: command.request, failure: failureOf(error) });
        },
      );
      return;
    }
    case "abort":
      aborts.get(command.request)?.abort();
      return;
    case "close": {
      const transport = transports.get(command.pool);
      transports.delete(command.pool);
      transport?.close();
      return;
    }
  }
});
