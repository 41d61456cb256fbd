import { Code, ConnectError, createRouterTransport, type Transport } from "@connectrpc/connect";
import { createLogger, objectId, scopeHeaders, serverInterceptors, type Scope, type ServiceRegistry } from "@notify/runtime";

export { Code };

/** A fresh tenancy: nothing another test made is visible in it. */
export const newScope = (organizationId: string = objectId()): Scope => ({ organizationId, environmentId: objectId() });

/** Call options of a caller in `scope`, as the gateway sets them. */
export const callAs = (scope: Scope) => ({ headers: scopeHeaders(scope) });

/** A service's real handlers and interceptors behind an in-memory transport: no network. */
export function inMemoryTransport(routes: (registry: ServiceRegistry) => void): Transport {
  return createRouterTransport(routes, { router: { interceptors: serverInterceptors(createLogger("test", "silent")) } });
}

/** The error a call fails with; fails the test when the call succeeds. */
export async function rpcError(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}
