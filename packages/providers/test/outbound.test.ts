import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOutbound, DEFAULT_OUTBOUND_POLICY, OutboundRefused, refusalOf, urlRefusal } from "../src/outbound.js";

let server: Server;
let hits = 0;
let port = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    hits += 1;
    if (request.url === "/redirect") response.writeHead(302, { location: "http://169.254.169.254/" }).end();
    else response.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("outbound guard", () => {
  it("reaches an allowed local receiver and refuses it without the allowance", async () => {
    const allowed = createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"] });
    expect((await allowed.request(`http://localhost:${port}/x`)).text).toBe("ok");
    const strict = createOutbound(DEFAULT_OUTBOUND_POLICY);
    const before = hits;
    await expect(strict.request(`http://localhost:${port}/x`)).rejects.toBeInstanceOf(OutboundRefused);
    await expect(strict.request(`http://127.0.0.1:${port}/x`)).rejects.toBeInstanceOf(OutboundRefused);
    expect(hits).toBe(before);
    await allowed.close();
    await strict.close();
  });

  it("does not follow a redirect", async () => {
    const allowed = createOutbound({ ...DEFAULT_OUTBOUND_POLICY, allowedCidrs: ["127.0.0.0/8"] });
    expect((await allowed.request(`http://127.0.0.1:${port}/redirect`)).status).toBe(302);
    await allowed.close();
  });

  it("keeps metadata addresses refused under a broad allowance and sees through IPv4 disguises", () => {
    const broad = { allowedCidrs: ["0.0.0.0/0", "::/0"] };
    expect(refusalOf("169.254.169.254", broad)).toBeDefined();
    expect(refusalOf("::ffff:169.254.169.254", broad)).toBeDefined();
    expect(refusalOf("169.254.169.254", { allowedCidrs: ["169.254.169.254/32"] })).toBeUndefined();
    expect(urlRefusal("http://2130706433/", { allowedCidrs: [] })).toMatch(/loopback/);
    expect(urlRefusal("http://0x7f.1/", { allowedCidrs: [] })).toMatch(/loopback/);
    expect(urlRefusal("http://[::ffff:7f00:1]/", { allowedCidrs: [] })).toMatch(/loopback/);
    expect(refusalOf("8.8.8.8", { allowedCidrs: [] })).toBeUndefined();
  });
});
