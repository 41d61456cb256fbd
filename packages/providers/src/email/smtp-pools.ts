import { Worker } from "node:worker_threads";
import type { SMTPPoolOptions } from "nodemailer";
import type { mailPartsOf } from "./sender.js";

/** What a failed send tells the other side: enough to tell a refusal from a lost connection. */
export interface SmtpFailureShape {
  message: string;
  code?: string;
  originalCode?: string;
  responseCode?: number;
}

/** A mail as nodemailer takes it: its parts and, for the envelope only, Bcc. Attachments cross to the thread as plain bytes. */
export type ThreadMail = ReturnType<typeof mailPartsOf> & { bcc?: string[] };

export type ToSmtpThread =
  | { type: "open"; pool: number; options: SMTPPoolOptions & { pool: true } }
  | { type: "send"; pool: number; request: number; mail: ThreadMail }
  | { type: "abort"; request: number }
  | { type: "close"; pool: number };

type FromSmtpThread = { request: number; sent: SmtpSent } | { request: number; failure: SmtpFailureShape };

export interface SmtpSent {
  messageId?: string | undefined;
  response?: string | undefined;
}

/** One nodemailer pool, living in the SMTP thread. */
export interface SmtpPool {
  /** Rejects with an Error carrying nodemailer's code, originalCode and responseCode. */
  sendMail(mail: ThreadMail, signal?: AbortSignal): Promise<SmtpSent>;
  close(): void;
}

export interface SmtpThread {
  open(options: SMTPPoolOptions & { pool: true }): SmtpPool;
  /** Ends the thread; sends under way fail as a lost connection (transient). */
  close(): Promise<void>;
}

// The thread runs compiled code, also when this module is loaded from its sources (tests): from
// src/email and from dist/email alike, this is dist/email's.
const THREAD_ENTRY = new URL("../../dist/email/smtp-thread.js", import.meta.url);

const lostConnection = (reason: string) => Object.assign(new Error(`the SMTP thread ${reason}`), { code: "ECONNECTION" });

/**
 * The process's SMTP pools, run by one worker thread started on first use. A thread that ended
 * (it should not) fails its sends under way as lost connections, and the next send starts another
 * one with the same pools.
 */
export function createSmtpThread(): SmtpThread {
  let worker: Worker | undefined;
  const pools = new Map<number, SMTPPoolOptions & { pool: true }>();
  const pending = new Map<number, { resolve(sent: SmtpSent): void; reject(error: Error): void }>();
  let lastPool = 0;
  let lastRequest = 0;

  const failPending = (reason: string) => {
    for (const waiting of pending.values()) waiting.reject(lostConnection(reason));
    pending.clear();
  };

  function thread(): Worker {
    if (worker) return worker;
    const started = new Worker(THREAD_ENTRY);
    // The thread keeps the process alive only while a send waits for it.
    started.unref();
    started.on("message", (answer: FromSmtpThread) => {
      const waiting = pending.get(answer.request);
      if (!waiting) return;
      pending.delete(answer.request);
      if (pending.size === 0) started.unref();
      if ("sent" in answer) waiting.resolve(answer.sent);
      else waiting.reject(Object.assign(new Error(answer.failure.message), answer.failure));
    });
    started.on("error", () => undefined);
    started.on("exit", (code) => {
      if (worker === started) worker = undefined;
      failPending(`ended (exit code ${code})`);
    });
    for (const [pool, options] of pools) started.postMessage({ type: "open", pool, options } satisfies ToSmtpThread);
    worker = started;
    return started;
  }

  return {
    open(options) {
      const pool = ++lastPool;
      pools.set(pool, options);
      thread().postMessage({ type: "open", pool, options } satisfies ToSmtpThread);
      return {
        sendMail(mail, signal) {
          if (!pools.has(pool)) return Promise.reject(lostConnection("pool is closed"));
          const request = ++lastRequest;
          const running = thread();
          return new Promise<SmtpSent>((resolve, reject) => {
            if (pending.size === 0) running.ref();
            pending.set(request, { resolve, reject });
            running.postMessage({ type: "send", pool, request, mail } satisfies ToSmtpThread);
            if (!signal) return;
            const abort = () => worker?.postMessage({ type: "abort", request } satisfies ToSmtpThread);
            if (signal.aborted) abort();
            else signal.addEventListener("abort", abort, { once: true });
          });
        },
        close() {
          if (!pools.delete(pool)) return;
          worker?.postMessage({ type: "close", pool } satisfies ToSmtpThread);
        },
      };
    },
    async close() {
      const running = worker;
      worker = undefined;
      pools.clear();
      if (running) await running.terminate();
      failPending("was closed");
    },
  };
}
