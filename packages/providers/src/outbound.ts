import { lookup as dnsLookup } from "node:dns/promises";
import { setMaxListeners } from "node:events";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { Agent, request } from "undici";

/** An address a name resolves to, as node:dns answers it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address of a name (tests pass their own to make names resolve where they want). */
export type Resolver = (host: string) => Promise<readonly ResolvedAddress[]>;

/** The system resolver, in the order it answers (as a connection would try them). */
export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * The one way out of the system for anything a user can point at (webhook URLs, provider base
 * URLs and hosts): names are resolved once, every address is vetted, and the connection goes to
 * the vetted address, so a name cannot resolve to something else between the check and the call.
 */
export interface OutboundPolicy {
  /** Ranges an operator allows on top of the public internet (OUTBOUND_ALLOWED_CIDRS). */
  allowedCidrs: readonly string[];
  connectTimeoutMs: number;
  /** The whole call, from resolving the name to the last byte of the answer. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** The resolver names go through; the system's when absent. */
  lookup?: Resolver | undefined;
}

export const DEFAULT_OUTBOUND_POLICY: OutboundPolicy = {
  allowedCidrs: [],
  connectTimeoutMs: 5_000,
  timeoutMs: 15_000,
  maxResponseBytes: 1024 * 1024,
};

/** What vetting an address needs of a policy. */
export type AddressPolicy = Pick<OutboundPolicy, "allowedCidrs">;
/** What vetting a name needs of a policy. */
export type NamePolicy = Pick<OutboundPolicy, "allowedCidrs" | "lookup">;

/** A destination the guard does not let the system reach (or an answer it does not take): final, never retried. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutboundRefused";
  }
}

/** A call that did not complete in the policy's time: its outcome is unknown. */
export class OutboundTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutboundTimeout";
  }
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

const cidr = (text: string) => ipaddr.parseCIDR(text) as Range;

/**
 * Link-local ranges (cloud metadata lives there) and the metadata addresses outside them (AWS's
 * IPv6 one, Alibaba's, Azure's platform endpoint, which is otherwise a public address) stay
 * refused under a broad allowed range: only an allowed range that lies inside one of these opens it.
 */
const EXPLICIT_ONLY: readonly Range[] = [
  cidr("169.254.0.0/16"),
  cidr("fe80::/10"),
  cidr("fd00:ec2::254/128"),
  cidr("100.100.100.200/32"),
  cidr("168.63.129.16/32"),
];

/** Parses OUTBOUND_ALLOWED_CIDRS (comma-separated); throws naming the entry that is not a range. */
export function parseCidrs(text: string): string[] {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  for (const entry of entries) {
    if (!ipaddr.isValidCIDR(entry)) throw new Error(`"${entry}" is not a CIDR range`);
  }
  return entries;
}

const v4At = (bytes: number[], offset: number) => ipaddr.fromByteArray(bytes.slice(offset, offset + 4)) as ipaddr.IPv4;

/** IPv6 forms that carry an IPv4 address in their last 32 bits, and reach it. */
const CARRIES_V4: readonly Range[] = [
  cidr("::ffff:0:0/96"), // IPv4-mapped
  cidr("::/96"), // IPv4-compatible (deprecated, still routed by some stacks)
  cidr("::ffff:0:0:0/96"), // IPv4-translated (SIIT)
  cidr("64:ff9b::/96"), // NAT64, well-known prefix
  cidr("64:ff9b:1::/48"), // NAT64, local-use prefix
];
const SIX_TO_FOUR = cidr("2002::/16");
const TEREDO = cidr("2001::/32");

const within = (address: Address, [network, bits]: Range) => address.kind() === network.kind() && address.match(network, bits);
const rangeInside = ([network, bits]: Range, [outer, outerBits]: Range) =>
  network.kind() === outer.kind() && bits >= outerBits && network.match(outer, outerBits);

/**
 * The addresses a connection to `address` may end at, each of which must be allowed: an IPv4
 * address hidden in an IPv6 form is judged as itself (so ::ffff:127.0.0.1 is loopback, and
 * 64:ff9b::808:808 is as public as 8.8.8.8); 6to4 and Teredo are judged both as themselves and
 * as the IPv4 addresses they tunnel to (Teredo's client address is stored inverted).
 */
function destinations(address: Address): Address[] {
  if (address.kind() === "ipv4") return [address];
  const v6 = address as ipaddr.IPv6;
  const bytes = v6.toByteArray();
  // :: and ::1 are the IPv6 unspecified and loopback addresses, not IPv4-compatible ones.
  if (v6.range() === "unspecified" || v6.range() === "loopback") return [v6];
  if (CARRIES_V4.some((range) => within(v6, range))) return [v4At(bytes, 12)];
  if (within(v6, SIX_TO_FOUR)) return [v6, v4At(bytes, 2)];
  if (within(v6, TEREDO))
    return [
      v6,
      v4At(bytes, 4),
      v4At(
        bytes.map((byte) => byte ^ 0xff),
        12,
      ),
    ];
  return [v6];
}

function refusalOfOne(address: Address, allowed: readonly Range[]): string | undefined {
  const explicitOnly = EXPLICIT_ONLY.find((range) => within(address, range));
  if (explicitOnly) {
    const opened = allowed.some((range) => within(address, range) && rangeInside(range, explicitOnly));
    return opened ? undefined : `${address.toString()} is a link-local or metadata address`;
  }
  if (allowed.some((range) => within(address, range))) return undefined;
  const kind = address.range();
  return kind === "unicast" ? undefined : `${address.toString()} is a ${kind} address`;
}

/** Allowed ranges parsed once per list: calls to IP literals vet their address on every request. */
const parsedAllowed = new WeakMap<readonly string[], readonly Range[]>();
function allowedRanges(cidrs: readonly string[]): readonly Range[] {
  let ranges = parsedAllowed.get(cidrs);
  if (!ranges) {
    ranges = cidrs.map(cidr);
    parsedAllowed.set(cidrs, ranges);
  }
  return ranges;
}

/** Why an address (an IP literal in standard notation) may not be reached, or undefined when it may. */
export function refusalOf(text: string, policy: AddressPolicy): string | undefined {
  if (!ipaddr.isValid(text)) return `"${text}" is not an IP address`;
  const address = ipaddr.parse(text);
  const allowed = allowedRanges(policy.allowedCidrs);
  for (const destination of destinations(address)) {
    const refusal = refusalOfOne(destination, allowed);
    if (refusal) return destination === address ? refusal : `${text} leads to ${refusal}`;
  }
  return undefined;
}

/** A URL's host as the resolver and the vetting see it (IPv6 literals without brackets). */
function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** Letters, digits, underscores, dots and hyphens (a name), or an IPv6 literal, possibly bracketed. */
const HOST = /^(?:[\w.-]+|\[?[0-9a-f:.]+\]?)$/i;

/**
 * A host as a connection would see it: the URL parser's canonical form, which turns the decimal,
 * hex, octal and shortened IPv4 forms (2130706433, 0x7f.1, 0177.0.0.1, 127.1) into dotted ones
 * as the system resolver would; undefined when it is not a host at all.
 */
function canonicalHost(text: string): string | undefined {
  if (!HOST.test(text)) return undefined;
  const bracketed = isIP(text) === 6 ? `[${text}]` : text;
  try {
    return hostOf(new URL(`http://${bracketed}/`));
  } catch {
    return undefined;
  }
}

/**
 * Checks what can be checked of a host without the network: the address when it is an IP
 * literal, in any notation. Answers why it is refused, or undefined.
 */
export function hostRefusal(text: string, policy: AddressPolicy): string | undefined {
  const host = canonicalHost(text);
  if (host === undefined) return "must be a host name or an IP address";
  return addressRefusal(host, policy);
}

/**
 * Checks what can be checked of a URL without the network: scheme, and the address when the host
 * is an IP literal (the URL parser has already turned decimal, hex and octal IPv4 forms into dotted
 * ones). Answers why it is refused, or undefined.
 */
export function urlRefusal(text: string, policy: AddressPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be a valid URL";
  }
  return parsedUrlRefusal(url, policy);
}

/** The same for a URL already parsed. */
function parsedUrlRefusal(url: URL, policy: AddressPolicy): string | undefined {
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http or https URL";
  if (url.username || url.password) return "must not carry credentials";
  return addressRefusal(hostOf(url), policy);
}

/** The refusal of a canonical host that is an IP literal, worded to follow a field's name. */
function addressRefusal(host: string, policy: AddressPolicy): string | undefined {
  const refusal = isIP(host) ? refusalOf(host, policy) : undefined;
  return refusal && `must reach a public address: ${refusal}`;
}

/**
 * Resolves a name and vets every address it has (one forbidden address refuses the name: which
 * one a client would use is not ours to know); answers the first, to connect to.
 */
export async function resolveVetted(text: string, policy: NamePolicy): Promise<ResolvedAddress> {
  const host = canonicalHost(text);
  if (host === undefined) throw new OutboundRefused(`"${text}" is not a host name or an IP address`);
  if (isIP(host)) {
    const refusal = refusalOf(host, policy);
    if (refusal) throw new OutboundRefused(refusal);
    return { address: host, family: isIP(host) };
  }
  const addresses = await (policy.lookup ?? systemResolver)(host);
  for (const { address } of addresses) {
    const refusal = refusalOf(address, policy);
    if (refusal) throw new OutboundRefused(`${host} resolves to a refused address: ${refusal}`);
  }
  const first = addresses[0];
  if (!first) throw new OutboundRefused(`${host} has no address`);
  return { address: first.address, family: first.family };
}

/**
 * Why a URL a user sets would be refused when called, checked as it is written: the static check,
 * then the name resolved within `timeoutMs`. A name that does not resolve (now) passes: the call
 * is vetted again when made.
 */
export async function writtenUrlRefusal(text: string, policy: NamePolicy, timeoutMs: number): Promise<string | undefined> {
  const refusal = urlRefusal(text, policy);
  if (refusal) return refusal;
  return resolvedRefusal(hostOf(new URL(text)), policy, timeoutMs);
}

/** The same for a host field (an SMTP host, say). */
export async function writtenHostRefusal(text: string, policy: NamePolicy, timeoutMs: number): Promise<string | undefined> {
  const refusal = hostRefusal(text, policy);
  if (refusal) return refusal;
  return resolvedRefusal(text, policy, timeoutMs);
}

async function resolvedRefusal(host: string, policy: NamePolicy, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  const vetted = resolveVetted(host, policy).then(
    () => undefined,
    (error: unknown) => (error instanceof OutboundRefused ? `must reach a public address: ${error.message}` : undefined),
  );
  try {
    return await Promise.race([vetted, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** A `lookup` for net/tls connections that only ever hands out vetted addresses. */
export function vettedLookup(policy: NamePolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveVetted(hostname, policy).then(
      ({ address, family }) => {
        if (options.all) (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, [{ address, family }]);
        else callback(null, address, family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}

export interface OutboundRequest {
  method?: string | undefined;
  headers?: Record<string, string> | undefined;
  body?: string | Uint8Array | undefined;
  /** Ends the call early (the send's own signal); the policy's timeout applies regardless. */
  signal?: AbortSignal | undefined;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as text, at most the policy's size (longer answers are refused). */
  text: string;
}

export interface OutboundHttp {
  readonly policy: OutboundPolicy;
  /** One call, vetted; redirects come back as answers and are not followed. */
  request(url: string, init?: OutboundRequest): Promise<OutboundResponse>;
  /** Resolves and vets a host for clients that open their own connections (SMTP, HTTP/2). */
  resolve(host: string): Promise<ResolvedAddress>;
  close(): Promise<void>;
}

/** The refusal or timeout behind an error undici raised, if that is what it was. */
function guardError(error: unknown, deadline: AbortSignal, host: string, policy: OutboundPolicy): unknown {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof OutboundRefused) return cause;
  }
  if (deadline.aborted) return new OutboundTimeout(`${host} did not answer within ${policy.timeoutMs} ms`);
  const code = error instanceof Error && "code" in error ? error.code : undefined;
  if (code === "UND_ERR_CONNECT_TIMEOUT") return new OutboundTimeout(`${host} did not accept a connection within ${policy.connectTimeoutMs} ms`);
  if (code === "UND_ERR_RES_EXCEEDED_MAX_SIZE") return new OutboundRefused(`${host} answered more than ${policy.maxResponseBytes} bytes`);
  return error;
}

/**
 * The deadline of a call starting now. Calls that start within the same slice of the budget share
 * one signal, aborted a slice after the budget of the first of them: each call gets its whole
 * budget and at most a tenth more. A signal and a timer of its own per call were most of what
 * the guard added to a webhook send.
 */
function deadlines(timeoutMs: number): () => AbortSignal {
  const slice = Math.max(10, Math.min(1_000, Math.floor(timeoutMs / 10)));
  let current: { until: number; signal: AbortSignal } | undefined;
  return () => {
    const now = performance.now();
    if (!current || now >= current.until) {
      const signal = AbortSignal.timeout(timeoutMs + slice);
      // Every call under way in the slice listens to it.
      setMaxListeners(0, signal);
      current = { until: now + slice, signal };
    }
    return current.signal;
  };
}

export function createOutbound(policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY): OutboundHttp {
  const dispatcher = new Agent({
    connect: { lookup: vettedLookup(policy), timeout: policy.connectTimeoutMs },
    headersTimeout: policy.timeoutMs,
    bodyTimeout: policy.timeoutMs,
    maxResponseSize: policy.maxResponseBytes,
  });
  const deadline = deadlines(policy.timeoutMs);
  return {
    policy,
    async request(url, init = {}) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new OutboundRefused("refused to call a URL: must be a valid URL");
      }
      // Messages name the host only: a URL may carry a secret (a webhook path, a bot token).
      const { host } = parsed;
      const refusal = parsedUrlRefusal(parsed, policy);
      if (refusal) throw new OutboundRefused(`refused to call ${host}: ${refusal}`);
      const timeout = deadline();
      const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
      try {
        const response = await request(parsed, {
          dispatcher,
          method: (init.method ?? "GET") as "GET",
          ...(init.headers ? { headers: init.headers } : {}),
          ...(init.body !== undefined ? { body: init.body } : {}),
          signal,
        });
        return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
      } catch (error) {
        throw guardError(error, timeout, host, policy);
      }
    },
    resolve: (host) => resolveVetted(host, policy),
    close: () => dispatcher.close(),
  };
}
