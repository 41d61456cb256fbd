import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { openApiDocument } from "../src/openapi.js";
import { routes } from "../src/routes.js";
import { startStack, type Stack } from "./stack.js";

// The gateway serves its API description, and a reference page whose every file comes from the
// gateway itself, rendered in Debian's Chromium.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  stack = await startStack({ worker: false });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The element id Swagger UI gives each operation of the document: `operations-<tag>-<operationId>`. */
function documentedOperations(): string[] {
  const document = openApiDocument(routes, "0.0.0");
  return Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => `operations-${operation.tags[0]}-${operation.operationId}`));
}

/**
 * The operations the page renders from top to bottom. Swagger UI renders a list of tags and
 * operations this long virtualized (only the rows in view are in the DOM), so the page is
 * scrolled to its end and every operation must have been rendered on the way.
 */
async function renderedOperations(page: Page): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let atEnd = false; !atEnd; ) {
    for (const id of await page.locator(".opblock").evaluateAll((blocks) => blocks.map((block) => block.id))) seen.add(id);
    // Run in the page (a string: this package is compiled without the DOM's types).
    atEnd = (await page.evaluate("(() => { const before = scrollY; scrollBy(0, innerHeight / 2); return scrollY === before; })()")) === true;
    // The virtualizer renders the rows now in view on the next frames.
    await page.waitForTimeout(100);
  }
  return seen;
}

describe("the API description", () => {
  it("serves the route table's OpenAPI document as JSON and as YAML, without credentials", async () => {
    const expected = JSON.parse(JSON.stringify(openApiDocument(routes, "0.0.0")));
    const json = await fetch(`${stack.url}/openapi.json`);
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toContain("application/json");
    expect(await json.json()).toEqual(expected);
    const yaml = await fetch(`${stack.url}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get("content-type")).toContain("application/yaml");
    const text = await yaml.text();
    expect(parse(text)).toEqual(expected);
    // Written out in full: no anchors and aliases for the parts operations share.
    expect(text).not.toMatch(/[&*]a\d+\b/);
  });

  it("renders the reference page at /docs with every operation, requesting nothing but the gateway", async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    const failed: string[] = [];
    page.on("requestfailed", (request) => failed.push(request.url()));
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    try {
      const response = await page.goto(`${stack.url}/docs`, { waitUntil: "networkidle" });
      expect(response?.status()).toBe(200);
      await page.locator(".opblock").first().waitFor({ timeout: 30_000 });
      await expect(page.locator(".info .title").textContent()).resolves.toContain("notify");
      // Opening an operation shows its parameters, from the route's zod schemas. Swagger UI fills
      // the opened body after it appears, so its text is awaited, not read once.
      const operation = page.locator("#operations-subscribers-postV1Subscribers");
      await operation.locator(".opblock-summary").click();
      await operation.locator(".opblock-body").getByText("subscriberId").first().waitFor({ timeout: 10_000 });
      expect(await renderedOperations(page)).toEqual(new Set(documentedOperations()));
    } finally {
      await page.close();
    }
    expect(errors).toEqual([]);
    expect(failed).toEqual([]);
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => new URL(url).origin !== stack.url)).toEqual([]);
    expect(requested).toContain(`${stack.url}/openapi.json`);
  }, 60_000);
});
