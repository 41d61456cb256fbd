import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createOutbound,
  DEFAULT_OUTBOUND_POLICY,
  hostRefusal,
  OutboundRefused,
  OutboundTimeout,
  parseCidrs,
  refusalOf,
  systemResolver,
  urlRefusal,
  writtenHostRefusal,
  writtenUrlRefusal,
  type OutboundHttp,
  type OutboundPolicy,
  type Resolver,
} from "../src/outbound.js";

let server: Server;
/** Connections the receiver accepted: a refusal must happen before any. */
let connections = 0;
let port = 0;

/** Names the tests make resolve where they want; anything else goes to the system (localhost). */
const NAMES: Record<string, string[]> = {
  "metadata.test": ["169.254.169.254"],
  "private.test": ["10.1.2.3"],
  "mapped.test": ["::ffff:127.0.0.1"],
  "ula.test": ["fd12:3456::1"],
  // One forbidden address among public ones refuses the name: a client may pick any of them.
  "mixed.test": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "127.0.0.1"],
  "public.test": ["93.184.215.14"],
  "receiver.test": ["127.0.0.1"],
};
const fakeResolver: Resolver = async (host) => {
  const addresses = NAMES[host];
  if (!addresses) return systemResolver(host);
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

const guards: OutboundHttp[] = [];
function guard(overrides: Partial<OutboundPolicy> = {}): OutboundHttp {
  const made = createOutbound({ ...DEFAULT_OUTBOUND_POLICY, lookup: fakeResolver, ...overrides });
  guards.push(made);
  return made;
}

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === "/redirect") response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    else if (request.url === "/hang")
      return; // never answers
    else if (request.url === "/big") response.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(4096));
    else if (request.url === "/big-chunked") {
      // No Content-Length: the cap must hold while reading, not only on what the answer announces.
      response.writeHead(200, { "content-type": "text/plain" });
      for (let index = 0; index < 8; index += 1) response.write("x".repeat(512));
      response.end();
    } else response.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  server.on("connection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
beforeEach(() => {
  connections = 0;
});
afterAll(async () => {
  await Promise.all(guards.map((made) => made.close()));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/**
 * Every forbidden form, as a URL host; each would reach the local receiver (or another machine)
 * if the guard let it through, and `reason` is what the refusal must say.
 */
const FORBIDDEN: [host: string, reason: RegExp][] = [
  ["127.0.0.1", /127\.0\.0\.1 is a loopback address/],
  ["127.9.9.9", /loopback/],
  ["localhost", /localhost resolves to a refused address: 127\.0\.0\.1 is a loopback address/],
  ["[::1]", /::1 is a loopback address/],
  ["2130706433", /127\.0\.0\.1 is a loopback address/], // decimal
  ["0x7f000001", /127\.0\.0\.1 is a loopback address/], // hex
  ["0177.0.0.1", /127\.0\.0\.1 is a loopback address/], // octal
  ["0x7f.1", /127\.0\.0\.1 is a loopback address/], // mixed, shortened
  ["127.1", /127\.0\.0\.1 is a loopback address/], // shortened
  ["127.0.0.1.", /127\.0\.0\.1 is a loopback address/], // trailing dot
  ["10.0.0.1", /private/],
  ["172.16.0.1", /private/],
  ["192.168.1.1", /private/],
  ["169.254.169.254", /169\.254\.169\.254 is a link-local or metadata address/],
  ["2852039166", /169\.254\.169\.254 is a link-local or metadata address/], // decimal metadata
  ["[fe80::1]", /link-local/],
  ["100.64.0.1", /carrierGradeNat/],
  ["100.100.100.200", /metadata/], // Alibaba Cloud's metadata service, inside CGNAT
  ["[fc00::1]", /uniqueLocal/],
  ["[fd00:ec2::254]", /metadata/], // AWS's IPv6 metadata service
  ["168.63.129.16", /metadata/], // Azure's platform endpoint, a public address otherwise
  ["224.0.0.1", /multicast/],
  ["[ff02::1]", /multicast/],
  ["0.0.0.0", /unspecified/],
  ["0", /unspecified/],
  ["[::]", /unspecified/],
  ["255.255.255.255", /broadcast/],
  ["240.0.0.1", /reserved/],
  ["192.0.2.1", /reserved/],
  ["[::ffff:127.0.0.1]", /leads to 127\.0\.0\.1 is a loopback address/], // IPv4-mapped
  ["[::ffff:7f00:1]", /loopback/], // IPv4-mapped, hex
  ["[::ffff:169.254.169.254]", /link-local or metadata/],
  ["[::127.0.0.1]", /loopback/], // IPv4-compatible
  ["[::ffff:0:7f00:1]", /loopback/], // IPv4-translated
  ["[64:ff9b::127.0.0.1]", /loopback/], // NAT64
  ["[64:ff9b:1::a9fe:a9fe]", /link-local or metadata/], // local-use NAT64
  ["[2002:7f00:1::]", /6to4/], // 6to4 of 127.0.0.1
  ["[2001:0:4136:e378:8000:63bf:80ff:fffe]", /teredo/], // Teredo, client 127.0.0.1
  ["metadata.test", /metadata\.test resolves to a refused address: 169\.254\.169\.254/],
  ["private.test", /private/],
  ["mapped.test", /loopback/],
  ["ula.test", /uniqueLocal/],
  ["mixed.test", /mixed\.test resolves to a refused address: 127\.0\.0\.1 is a loopback address/],
];

describe("outbound guard: forbidden destinations", () => {
  const strict = () => guard();

  it.each(FORBIDDEN)("refuses %s before connecting", async (host, reason) => {
    const call = strict().request(`http://${host}:${port}/x`, { method: "POST", body: "{}" });
    await expect(call).rejects.toBeInstanceOf(OutboundRefused);
    await expect(call).rejects.toThrow(reason);
    expect(connections).toBe(0);
  });

  it.each(FORBIDDEN)("refuses %s as a host for clients of their own (SMTP, HTTP/2)", async (host, reason) => {
    await expect(strict().resolve(host.replace(/^\[|\]$/g, ""))).rejects.toThrow(reason);
  });

  it.each([
    ["file:///etc/passwd", /must be an http or https URL/],
    ["gopher://127.0.0.1:70/", /must be an http or https URL/],
    [`http://user:secret@public.test:${port}/`, /must not carry credentials/],
    ["not a url", /must be a valid URL/],
  ])("refuses %s", async (url, reason) => {
    const call = strict().request(url);
    await expect(call).rejects.toBeInstanceOf(OutboundRefused);
    await expect(call).rejects.toThrow(reason);
    await expect(call).rejects.not.toThrow(/secret/);
  });

  it("names only the host when refusing, never the path (it may be a secret)", async () => {
    await expect(strict().request(`http://127.0.0.1:${port}/bot123:SECRET/send`)).rejects.toThrow(/^refused to call 127\.0\.0\.1:\d+: /);
    await expect(strict().request(`http://127.0.0.1:${port}/bot123:SECRET/send`)).rejects.not.toThrow(/SECRET/);
  });

  it("refuses host fields that are not hosts", () => {
    expect(hostRefusal("smtp.example.com", { allowedCidrs: [] })).toBeUndefined();
    expect(hostRefusal("evil.com@127.0.0.1", { allowedCidrs: [] })).toMatch(/must be a host name/);
    expect(hostRefusal("127.0.0.1/x", { allowedCidrs: [] })).toMatch(/must be a host name/);
    expect(hostRefusal("2130706433", { allowedCidrs: [] })).toMatch(/loopback/);
  });
});

describe("outbound guard: allowed ranges (OUTBOUND_ALLOWED_CIDRS)", () => {
  it("reaches a receiver inside an allowed range, by address and by name", async () => {
    const allowed = guard({ allowedCidrs: ["127.0.0.0/8"] });
    expect((await allowed.request(`http://127.0.0.1:${port}/x`)).text).toBe("ok");
    expect((await allowed.request(`http://localhost:${port}/x`)).text).toBe("ok");
    expect((await allowed.request(`http://receiver.test:${port}/x`)).text).toBe("ok");
    expect(connections).toBeGreaterThan(0);
  });

  it("keeps the link-local and metadata addresses refused under the broadest range", async () => {
    const broad = guard({ allowedCidrs: ["0.0.0.0/0", "::/0"], connectTimeoutMs: 200 });
    for (const host of ["169.254.169.254", "[::ffff:169.254.169.254]", "[fe80::1]", "metadata.test", "[2002:a9fe:a9fe::]", "[fd00:ec2::254]"]) {
      await expect(broad.request(`http://${host}/latest/meta-data/`)).rejects.toThrow(/link-local or metadata/);
    }
    // Everything else is open under it, the receiver included.
    expect((await broad.request(`http://127.0.0.1:${port}/x`)).text).toBe("ok");
  });

  it("opens a metadata address listed explicitly", async () => {
    const policy = { allowedCidrs: ["169.254.169.254/32"] };
    expect(refusalOf("169.254.169.254", policy)).toBeUndefined();
    expect(refusalOf("169.254.169.253", policy)).toMatch(/link-local/);
    const explicit = guard({ ...policy, connectTimeoutMs: 200, timeoutMs: 500 });
    await expect(explicit.resolve("metadata.test")).resolves.toEqual({ address: "169.254.169.254", family: 4 });
    // The call is attempted: whatever answers there (or fails to), it is not refused.
    const outcome = await explicit.request("http://169.254.169.254/").then(
      () => "attempted",
      (error: unknown) => error,
    );
    expect(outcome).not.toBeInstanceOf(OutboundRefused);
  });

  it("reads the variable, refusing entries that are not ranges", () => {
    expect(parseCidrs("")).toEqual([]);
    expect(parseCidrs(" 127.0.0.0/8 , ::1/128 ")).toEqual(["127.0.0.0/8", "::1/128"]);
    expect(() => parseCidrs("127.0.0.0/8,localhost")).toThrow(/"localhost" is not a CIDR range/);
    expect(() => parseCidrs("127.0.0.1")).toThrow(/not a CIDR range/);
  });
});

describe("outbound guard: calls", () => {
  const local = (overrides: Partial<OutboundPolicy> = {}) => guard({ allowedCidrs: ["127.0.0.0/8"], ...overrides });

  it("answers a redirect as it is, without following it", async () => {
    const response = await local().request(`http://127.0.0.1:${port}/redirect`);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe("http://169.254.169.254/latest/meta-data/");
    expect(connections).toBe(1);
  });

  it("gives up on a receiver that never answers", async () => {
    const started = Date.now();
    const call = local({ timeoutMs: 300 }).request(`http://127.0.0.1:${port}/hang`);
    await expect(call).rejects.toBeInstanceOf(OutboundTimeout);
    await expect(call).rejects.toThrow(/127\.0\.0\.1:\d+ did not answer within 300 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("ends a call when the caller's signal does", async () => {
    const abort = new AbortController();
    const call = local().request(`http://127.0.0.1:${port}/hang`, { signal: abort.signal });
    setTimeout(() => abort.abort(), 50);
    await expect(call).rejects.toThrow();
  });

  it("refuses answers over the size cap, announced or not", async () => {
    const capped = local({ maxResponseBytes: 1024 });
    await expect(capped.request(`http://127.0.0.1:${port}/big`)).rejects.toThrow(/answered more than 1024 bytes/);
    await expect(capped.request(`http://127.0.0.1:${port}/big-chunked`)).rejects.toThrow(/answered more than 1024 bytes/);
    expect((await capped.request(`http://127.0.0.1:${port}/x`)).text).toBe("ok");
  });
});

describe("checks when a URL is written", () => {
  const policy = { allowedCidrs: [], lookup: fakeResolver };

  it("refuses literal addresses at once and names resolving to forbidden ones", async () => {
    expect(urlRefusal("http://2130706433/", policy)).toMatch(/^must reach a public address: 127\.0\.0\.1 is a loopback address$/);
    expect(await writtenUrlRefusal("http://metadata.test/hook", policy, 1_000)).toMatch(/metadata\.test resolves to a refused address/);
    expect(await writtenUrlRefusal("http://localhost/", policy, 1_000)).toMatch(/loopback/);
    expect(await writtenHostRefusal("private.test", policy, 1_000)).toMatch(/private/);
  });

  it("accepts public names and names that do not resolve (the call is vetted again)", async () => {
    expect(await writtenUrlRefusal("https://public.test/services/x", policy, 1_000)).toBeUndefined();
    expect(await writtenUrlRefusal("https://no-such-name.invalid/x", policy, 1_000)).toBeUndefined();
    const hanging: Resolver = () => new Promise(() => undefined);
    expect(await writtenUrlRefusal("https://slow.test/x", { allowedCidrs: [], lookup: hanging }, 50)).toBeUndefined();
  });
});
