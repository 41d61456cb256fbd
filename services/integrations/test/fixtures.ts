import { createClient } from "@connectrpc/connect";
import { connectionsV1, integrationsV1, variablesV1 } from "@notify/proto";
import { createLogger, type Pool } from "@notify/runtime";
import { openTestDatabase, type DatabaseFixture } from "@notify/testing";
export { callAs, newScope, rpcError } from "@notify/testing";
import { inMemoryTransport } from "@notify/testing";
export { scopeHeaders } from "@notify/runtime";
import type { Scope } from "@notify/runtime";
import { createSecretBox, type SecretBox } from "../src/secrets.js";
import { migrations } from "../src/server.js";
import { routes } from "../src/routes.js";

export const TEST_KEY = Buffer.alloc(32, 7);

export type Fixture = DatabaseFixture;

export const openDatabase = (): Promise<Fixture> => openTestDatabase([migrations], 10);

export type TestScope = Scope;

/**
 * The service behind an in-memory transport: the real handlers and interceptors, no network.
 * Each call makes a new service instance, as another replica of the process would be.
 */
export function inMemoryClient(pool: Pool, secrets: SecretBox = createSecretBox(TEST_KEY)) {
  return createClient(integrationsV1.IntegrationService, inMemoryTransportOf(pool, secrets));
}

/** The environment variables' service of the same process, behind an in-memory transport. */
export function inMemoryVariablesClient(pool: Pool, secrets: SecretBox = createSecretBox(TEST_KEY)) {
  return createClient(variablesV1.EnvironmentVariableService, inMemoryTransportOf(pool, secrets));
}

/** The channel connections' service of the same process, behind an in-memory transport. */
export function inMemoryConnectionsClient(pool: Pool, secrets: SecretBox = createSecretBox(TEST_KEY)) {
  return createClient(connectionsV1.ChannelConnectionService, inMemoryTransportOf(pool, secrets));
}

function inMemoryTransportOf(pool: Pool, secrets: SecretBox) {
  return inMemoryTransport(routes({ pool, log: createLogger("test", "silent"), secrets }));
}
