import { lookup } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { Agent, request } from "undici";

/**
 * The one way out of the system for anything a user can point at (webhook URLs, provider base
 * URLs and hosts): names are resolved once, every address is vetted, and the connection goes to
 * the vetted address, so a name cannot resolve to something else between the check and the call.
 */
export interface OutboundPolicy {
  /** Ranges an operator allows on top of the public internet (OUTBOUND_ALLOWED_CIDRS). */
  allowedCidrs: readonly string[];
  connectTimeoutMs: number;
  /** The whole call, from connect to the last byte of the answer. */
  timeoutMs: number;
  maxResponseBytes: number;
}

export const DEFAULT_OUTBOUND_POLICY: OutboundPolicy = {
  allowedCidrs: [],
  connectTimeoutMs: 5_000,
  timeoutMs: 15_000,
  maxResponseBytes: 1024 * 1024,
};

/** A destination the guard does not let the system reach: final, never retried. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutboundRefused";
  }
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/**
 * Link-local ranges (cloud metadata lives there) stay refused under a broad allowed range: only an
 * allowed range that lies inside one of these opens it.
 */
const EXPLICIT_ONLY: readonly Range[] = [
  ipaddr.parseCIDR("169.254.0.0/16"),
  ipaddr.parseCIDR("fe80::/10"),
  ipaddr.parseCIDR("fd00:ec2::254/128"),
  ipaddr.parseCIDR("100.100.100.200/32"),
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

/** IPv4 hidden in an IPv6 form (mapped, compatible, NAT64) is judged as the IPv4 address. */
function canonical(address: Address): Address {
  if (address.kind() === "ipv6") {
    const v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
    const parts = v6.parts;
    const embedsV4 = parts.slice(0, 6).every((part) => part === 0) || (parts[0] === 0x64 && parts[1] === 0xff9b && parts.slice(2, 6).every((part) => part === 0));
    if (embedsV4 && (parts[6] !== 0 || (parts[7] ?? 0) > 1)) {
      return ipaddr.fromByteArray(v6.toByteArray().slice(12)) as ipaddr.IPv4;
    }
  }
  return address;
}

const within = (address: Address, [network, bits]: Range) => address.kind() === network.kind() && address.match(network, bits);
const rangeInside = ([network, bits]: Range, [outer, outerBits]: Range) => network.kind() === outer.kind() && bits >= outerBits && network.match(outer, outerBits);

/** Why an address may not be reached, or undefined when it may. */
export function refusalOf(text: string, policy: Pick<OutboundPolicy, "allowedCidrs">): string | undefined {
  if (!ipaddr.isValid(text)) return `"${text}" is not an IP address`;
  const address = canonical(ipaddr.parse(text));
  const allowed = policy.allowedCidrs.map((cidr) => ipaddr.parseCIDR(cidr) as Range);
  const explicitOnly = EXPLICIT_ONLY.find((range) => within(address, range));
  if (explicitOnly) {
    const opened = allowed.some((range) => within(address, range) && rangeInside(range, explicitOnly));
    return opened ? undefined : `${address.toString()} is a link-local or metadata address`;
  }
  if (allowed.some((range) => within(address, range))) return undefined;
  const kind = address.range();
  return kind === "unicast" ? undefined : `${address.toString()} is a ${kind} address`;
}

/** A URL's host as the resolver and the vetting see it (IPv6 literals without brackets). */
function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks what can be checked of a URL without the network: scheme, and the address when the host
 * is an IP literal (the URL parser has already turned decimal, hex and octal IPv4 forms into dotted
 * ones). Answers why it is refused, or undefined.
 */
export function urlRefusal(text: string, policy: Pick<OutboundPolicy, "allowedCidrs">): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be a valid URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http or https URL";
  if (url.username || url.password) return "must not carry credentials";
  const host = hostOf(url);
  return isIP(host) ? refusalOf(host, policy) : undefined;
}

/** Resolves a name and vets every address it has; answers the first, to connect to. */
export function resolveVetted(host: string, policy: Pick<OutboundPolicy, "allowedCidrs">): Promise<{ address: string; family: number }> {
  if (isIP(host)) {
    const refusal = refusalOf(host, policy);
    return refusal ? Promise.reject(new OutboundRefused(refusal)) : Promise.resolve({ address: host, family: isIP(host) });
  }
  return new Promise((resolve, reject) => {
    lookup(host, { all: true, verbatim: true }, (error, addresses) => {
      if (error) return reject(error);
      const refused = addresses.map((entry) => refusalOf(entry.address, policy)).find((reason) => reason !== undefined);
      if (refused) return reject(new OutboundRefused(`${host} resolves to a refused address: ${refused}`));
      const first = addresses[0];
      if (!first) return reject(new OutboundRefused(`${host} has no address`));
      resolve(first);
    });
  });
}

/** A `lookup` for net/tls connections that only ever hands out vetted addresses. */
export function vettedLookup(policy: Pick<OutboundPolicy, "allowedCidrs">): LookupFunction {
  return (hostname, options, callback) => {
    resolveVetted(hostname, policy).then(
      ({ address, family }) => {
        if (options.all) (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address, family }]);
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
  resolve(host: string): Promise<{ address: string; family: number }>;
  close(): Promise<void>;
}

/** A URL as an error may show it: scheme and host, since webhook paths, queries and user info carry secrets. */
function shownUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.host}`;
  } catch {
    return "the URL";
  }
}

export function createOutbound(policy: OutboundPolicy = DEFAULT_OUTBOUND_POLICY): OutboundHttp {
  const dispatcher = new Agent({
    connect: { lookup: vettedLookup(policy), timeout: policy.connectTimeoutMs },
    headersTimeout: policy.timeoutMs,
    bodyTimeout: policy.timeoutMs,
  });
  return {
    policy,
    async request(url, init = {}) {
      const refusal = urlRefusal(url, policy);
      if (refusal) throw new OutboundRefused(`${shownUrl(url)}: ${refusal}`);
      const signal = AbortSignal.timeout(policy.timeoutMs);
      const response = await request(url, {
        dispatcher,
        method: (init.method ?? "GET") as "GET",
        ...(init.headers ? { headers: init.headers } : {}),
        ...(init.body !== undefined ? { body: init.body } : {}),
        signal,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > policy.maxResponseBytes) {
          response.body.destroy();
          throw new OutboundRefused(`${new URL(url).host} answered more than ${policy.maxResponseBytes} bytes`);
        }
        chunks.push(chunk);
      }
      return { status: response.statusCode, headers: response.headers, text: Buffer.concat(chunks).toString("utf8") };
    },
    resolve: (host) => resolveVetted(host, policy),
    close: () => dispatcher.close(),
  };
}
