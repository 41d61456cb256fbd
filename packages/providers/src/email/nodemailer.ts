import { createHash } from "node:crypto";
import { isIP } from "node:net";
import type { ConnectionOptions } from "node:tls";
import type { SMTPPoolOptions } from "nodemailer";
import { OutboundRefused, type OutboundHttp } from "../outbound.js";
import type { ProviderFactory } from "../registry.js";
import { missingSetting, ProviderError, type EmailMessage, type Provider, type ProviderCredentials, type SendContext } from "../types.js";
import { mailPartsOf, senderOf } from "./sender.js";
import { createSmtpThread, type SmtpPool, type SmtpThread, type ThreadMail } from "./smtp-pools.js";
import { mergedBody } from "../provider-data.js";

const ID = "nodemailer";

/** Failures without an SMTP reply that say the server could not be reached or talked to: worth another attempt. */
const TRANSIENT_CODES = new Set(["ECONNECTION", "ETIMEDOUT", "ESOCKET", "EDNS", "ETLS", "EPROTOCOL"]);

/** A certificate the TLS check refused: the settings are wrong, and another attempt meets the same certificate. */
const CERTIFICATE_REFUSAL = /CERT|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

interface SmtpFailure {
  message: string;
  code?: unknown;
  originalCode?: unknown;
  responseCode?: unknown;
}

const isSmtpFailure = (error: unknown): error is SmtpFailure => error instanceof Error;

/**
 * An SMTP reply's class decides: 4xx is a temporary refusal, 5xx a permanent one. Without a reply the
 * error code says whether the connection failed (transient) or the message or settings are wrong (final).
 */
export function smtpError(error: unknown): ProviderError {
  if (!isSmtpFailure(error)) return new ProviderError(`${ID}: ${String(error)}`, { transient: true, cause: error });
  const reply = typeof error.responseCode === "number" ? error.responseCode : undefined;
  const certificate = typeof error.originalCode === "string" && CERTIFICATE_REFUSAL.test(error.originalCode);
  const transient = reply !== undefined ? reply >= 400 && reply < 500 : !certificate && typeof error.code === "string" && TRANSIENT_CODES.has(error.code);
  return new ProviderError(`${ID}: ${error.message}`, { transient, status: reply, cause: error });
}

function portOf(credentials: ProviderCredentials): number {
  if (!credentials.port) return credentials.secure ? 465 : 587;
  const port = Number(credentials.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new ProviderError(`${ID}: the integration's port "${credentials.port}" is not a port number`, { transient: false });
  return port;
}

/** Only what the connection depends on: a change of any of these makes a new pool. */
function fingerprintOf(credentials: ProviderCredentials): string {
  const { host, port, secure, requireTls, ignoreTls, tlsOptions, user, password, domain, secretKey, accountSid } = credentials;
  return createHash("sha256")
    .update(JSON.stringify([host, port, secure, requireTls, ignoreTls, tlsOptions, user, password, domain, secretKey, accountSid]))
    .digest("hex");
}

/**
 * The DKIM signing of every mail, as Novu's SMTP integration sets it: its form names `domain` the
 * signing domain, `secretKey` the private key and `accountSid` the key selector; all three, or none.
 */
function dkimOf({ domain, secretKey, accountSid }: ProviderCredentials) {
  return domain && secretKey && accountSid ? { dkim: { domainName: domain, privateKey: secretKey, keySelector: accountSid } } : {};
}

async function makeTransport(credentials: ProviderCredentials, http: OutboundHttp, smtp: SmtpThread): Promise<SmtpPool> {
  const host = credentials.host;
  if (!host) throw missingSetting(ID, "host");
  const port = portOf(credentials);
  // The pool connects to the vetted address only; the certificate is still checked against the name.
  const { address } = await http.resolve(host).catch((error: unknown) => {
    if (error instanceof OutboundRefused) throw error;
    throw new ProviderError(`${ID}: ${host} could not be resolved: ${error instanceof Error ? error.message : String(error)}`, {
      transient: true,
      cause: error,
    });
  });
  const tls: ConnectionOptions = { ...(credentials.tlsOptions ?? {}), ...(isIP(host) ? {} : { servername: host }) };
  const options: SMTPPoolOptions & { pool: true } = {
    pool: true,
    // Greets (EHLO) with the server's own name, as Novu's does: the machine's name is often not a
    // domain in a container, and relays such as Google's refuse the address nodemailer falls back to.
    name: host,
    host: address,
    port,
    secure: credentials.secure ?? false,
    requireTLS: credentials.requireTls ?? false,
    ignoreTLS: credentials.ignoreTls ?? false,
    tls,
    ...(credentials.user && credentials.password ? { auth: { user: credentials.user, pass: credentials.password } } : {}),
    ...dkimOf(credentials),
    connectionTimeout: http.policy.connectTimeoutMs,
    greetingTimeout: http.policy.connectTimeoutMs,
    socketTimeout: http.policy.timeoutMs,
    // A connection lost mid-message may already have delivered it: resending is the worker's decision, recorded as an attempt.
    maxRequeues: 0,
    // Mail content never makes the worker read a file or fetch a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  return smtp.open(options);
}

interface Pool {
  fingerprint: string;
  transport: Promise<SmtpPool>;
  sending: number;
  /** Replaced (newer settings, or a server it could not reach): closed once its last send is done. */
  retired: boolean;
}

function closePool(pool: Pool): Promise<void> {
  return pool.transport.then(
    (transport) => transport.close(),
    () => undefined,
  );
}

/**
 * SMTP through nodemailer: a pool of connections per integration, remade when its settings
 * change. The pools live in a thread of their own (smtp-thread.ts); the host is resolved and
 * vetted here, and the pool connects to that address only.
 */
export function createNodemailer(): Provider<"email"> & { close(): Promise<void> } {
  const pools = new Map<string, Pool>();
  const smtp = createSmtpThread();

  function retire(integrationId: string, pool: Pool) {
    if (pools.get(integrationId) === pool) pools.delete(integrationId);
    pool.retired = true;
    if (pool.sending === 0) void closePool(pool);
  }

  function poolFor(context: SendContext): Pool {
    const fingerprint = fingerprintOf(context.credentials);
    const current = pools.get(context.integrationId);
    if (current && current.fingerprint === fingerprint) return current;
    if (current) retire(context.integrationId, current);
    const pool: Pool = { fingerprint, transport: makeTransport(context.credentials, context.http, smtp), sending: 0, retired: false };
    // A pool that could not be made (refused host, say) is not kept: the next send tries again.
    pool.transport.catch(() => {
      if (pools.get(context.integrationId) === pool) pools.delete(context.integrationId);
    });
    pools.set(context.integrationId, pool);
    return pool;
  }

  async function send(message: EmailMessage, context: SendContext) {
    const from = senderOf(ID, message, context.credentials);
    const pool = poolFor(context);
    pool.sending += 1;
    try {
      const transport = await pool.transport;
      // The trigger's provider overrides reach the mail's options, as Novu merges them into nodemailer's,
      // but for DKIM's: its cache writes files where the options say.
      const { dkim: _dkim, ...mail } = mergedBody(
        { ...mailPartsOf(message, from), ...(message.bcc?.length ? { bcc: message.bcc } : {}) },
        context.providerData,
        "camel",
      ) as ThreadMail & { dkim?: unknown };
      const sent = await transport.sendMail(mail, context.signal).catch((error: unknown) => {
        const failure = smtpError(error);
        // A server that could not be reached may have moved: the next send resolves the host again.
        if (failure.transient && failure.status === undefined) retire(context.integrationId, pool);
        throw failure;
      });
      return { id: sent.messageId ?? sent.response };
    } finally {
      pool.sending -= 1;
      if (pool.retired && pool.sending === 0) void closePool(pool);
    }
  }

  return {
    id: ID,
    channel: "email",
    // SMTP has no idempotency key: a send whose outcome is unknown cannot be repeated safely.
    idempotent: false,
    send,
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map(closePool));
      await smtp.close();
    },
  };
}

export const nodemailer: ProviderFactory = createNodemailer;
