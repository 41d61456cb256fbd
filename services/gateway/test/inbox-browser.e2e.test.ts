import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { build, type Rolldown } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkflow } from "./delivery-helpers.js";
import { environmentIdentifier } from "./inbox-helpers.js";
import { startStack, type Stack } from "./stack.js";

// A customer's app (test/inbox-app: @novu/js bundled as an app's build bundles it, served locally,
// no CDN) on a page of another origin opens an Inbox session against the gateway and waits for
// live notifications, in Debian's Chromium.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

interface Observed {
  sessionReady: boolean;
  socketReady: boolean;
  received: { id: string; body: string; isRead: boolean }[];
  unread: number[];
}

let stack: Stack;
let page: Server;
let pageOrigin: string;
let browser: Browser;

async function bundleApp(): Promise<string> {
  const root = fileURLToPath(new URL("./inbox-app", import.meta.url));
  const built = (await build({
    root,
    configFile: false,
    logLevel: "warn",
    build: { write: false, minify: false, lib: { entry: "app.ts", formats: ["iife"], name: "app", fileName: "app" } },
  })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
  const [output] = Array.isArray(built) ? built : [built];
  const chunk = output?.output.find((file) => file.type === "chunk");
  if (chunk?.type !== "chunk") throw new Error("the app did not bundle");
  return chunk.code;
}

beforeAll(async () => {
  stack = await startStack();
  const script = await bundleApp();
  const settings = JSON.stringify({ apiUrl: stack.url, applicationIdentifier: await environmentIdentifier(stack), subscriberId: "browser-ada" });
  const html = `<!doctype html><html><head><meta charset="utf-8"></head><body>
<script id="settings" type="application/json">${settings}</script><script src="/app.js"></script></body></html>`;
  page = createServer((request, response) => {
    if (request.url === "/app.js") response.writeHead(200, { "content-type": "text/javascript" }).end(script);
    else response.writeHead(200, { "content-type": "text/html" }).end(html);
  });
  await new Promise<void>((resolve) => page.listen(0, "localhost", resolve));
  // localhost and 127.0.0.1 on different ports: the gateway is another origin for the page.
  pageOrigin = `http://localhost:${(page.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => page?.close(resolve));
  await stack?.stop();
});

describe("the Inbox in a browser", () => {
  it("opens a session from another origin and sees a triggered notification arrive live", async () => {
    await createWorkflow(stack, "browser-welcome", [{ template: { type: "in_app", content: "Hello {{payload.name}} from the API" } }]);
    const tab = await browser.newPage();
    const failures: string[] = [];
    tab.on("pageerror", (error) => failures.push(error.message));
    await tab.goto(pageOrigin);
    const observed = () => tab.evaluate(() => (globalThis as unknown as { observed: Observed }).observed);
    await tab.waitForFunction(() => (globalThis as unknown as { observed?: Observed }).observed?.sessionReady, undefined, { timeout: 20_000 });
    await tab.waitForFunction(() => (globalThis as unknown as { observed: Observed }).observed.socketReady, undefined, { timeout: 20_000 });

    const triggered = await stack.request("POST", "/v1/events/trigger", { name: "browser-welcome", to: "browser-ada", payload: { name: "Ada" } });
    expect(triggered.status).toBe(201);

    await tab.waitForFunction(() => (globalThis as unknown as { observed: Observed }).observed.unread.includes(1), undefined, { timeout: 20_000 });
    expect((await observed()).received).toEqual([expect.objectContaining({ body: "Hello Ada from the API", isRead: false })]);
    expect(failures).toEqual([]);
  }, 90_000);
});
