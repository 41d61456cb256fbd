import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Context } from "koa";
import { stringify } from "yaml";
import { openApiDocument } from "./openapi.js";
import type { Route } from "./route.js";

const require = createRequire(import.meta.url);
const { version } = require("../package.json") as { version: string };

/** Swagger UI's files, from its npm package: the reference page loads nothing from elsewhere. */
const SWAGGER_UI = dirname(require.resolve("swagger-ui-dist/package.json"));
const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

// validatorUrl: null, or Swagger UI sends the document to validator.swagger.io for a badge.
const START = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#docs", deepLinking: true, validatorUrl: null });\n`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>notify API reference</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" />
  </head>
  <body>
    <div id="docs"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/start.js"></script>
  </body>
</html>
`;

type Serve = (ctx: Context) => Promise<void> | void;

function text(type: string, body: string): Serve {
  return (ctx) => {
    ctx.type = type;
    ctx.body = body;
  };
}

/** A file of Swagger UI's package, read on first use and kept (they change only with the package). */
function asset(name: string, type: string): Serve {
  let content: Promise<Buffer> | undefined;
  return async (ctx) => {
    content ??= readFile(join(SWAGGER_UI, name));
    ctx.body = await content;
    ctx.type = type;
    ctx.set("Cache-Control", "public, max-age=86400");
  };
}

/**
 * The GET paths that describe the API: the OpenAPI document of `routes` as JSON and YAML (made
 * once, when the app is), and a reference page rendering it, at /docs.
 */
export function apiDescription(routes: readonly Route[]): [string, Serve][] {
  const document = openApiDocument(routes, version);
  return [
    ["/openapi.json", text("application/json", JSON.stringify(document))],
    ["/openapi.yaml", text("application/yaml", stringify(document, { aliasDuplicateObjects: false }))],
    ["/docs", text("text/html; charset=utf-8", PAGE)],
    ["/docs/start.js", text("text/javascript; charset=utf-8", START)],
    ...Object.entries(ASSETS).map(([name, type]): [string, Serve] => [`/docs/${name}`, asset(name, type)]),
  ];
}
