// The processes `pnpm start` runs, in start order. Each downstream service gets a port; the
// gateway is told where each one is through <NAME>_URL.
export const services = [
  { name: "subscribers", port: 50051 },
  { name: "integrations", port: 50052 },
  { name: "topics", port: 50053 },
  { name: "messages", port: 50055 },
  { name: "triggers", port: 50054 },
  // the worker serves only its health endpoint
  { name: "worker", port: 50060 },
];

export const gateway = { name: "gateway", port: 3000 };

export const serviceEnv = (env = process.env) =>
  Object.fromEntries(
    services.flatMap(({ name, port }) => {
      const key = name.toUpperCase();
      const chosen = env[`${key}_PORT`] ?? String(port);
      return [
        [`${key}_PORT`, chosen],
        [`${key}_URL`, env[`${key}_URL`] ?? `http://127.0.0.1:${chosen}`],
      ];
    }),
  );

export const entryOf = (name) => new URL(`../services/${name}/dist/server.js`, import.meta.url);
