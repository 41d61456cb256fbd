import { create } from "@bufbuild/protobuf";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { integrationsV1, subscribersV1, workflowsV1 } from "@notify/proto";
import { createLogger, notFound, objectId, type Announce, type Pool } from "@notify/runtime";
import { openTestDatabase, type DatabaseFixture } from "@notify/testing";
export { callAs, newScope, rpcError } from "@notify/testing";
import { inMemoryTransport } from "@notify/testing";
export { scopeHeaders } from "@notify/runtime";
import { migrations } from "../src/server.js";
import { routes } from "../src/routes.js";

export type Fixture = DatabaseFixture;

export const openDatabase = (): Promise<Fixture> => openTestDatabase([migrations], 4);

/** What the fake integrations and workflow services answer; tests change them as they go. */
export interface Neighbours {
  /** Active integration ids by provider, or by `provider/identifier`. */
  integrations: Map<string, string>;
  /** The active workflows, in creation order. */
  workflows: workflowsV1.ActiveWorkflow[];
  /** Workflows that exist but are not active: found by GetWorkflow, never listed. */
  inactiveWorkflows: workflowsV1.ActiveWorkflow[];
}

export const newNeighbours = (): Neighbours => ({ integrations: new Map(), workflows: [], inactiveWorkflows: [] });

export const activeWorkflow = (init: {
  name: string;
  critical?: boolean;
  channels: string[];
  settings?: { email?: boolean; sms?: boolean; inApp?: boolean; chat?: boolean; push?: boolean };
  tags?: string[];
}) =>
  create(workflowsV1.ActiveWorkflowSchema, {
    id: objectId(),
    identifier: init.name,
    name: init.name,
    slug: `${init.name}_wf_x`,
    critical: init.critical ?? false,
    preferenceSettings: { email: true, sms: true, inApp: true, chat: true, push: true, ...init.settings },
    channels: init.channels,
    tags: init.tags ?? [],
  });

/** In-memory stand-ins for the integrations and workflow services, with only what subscribers call. */
function neighbourClients(neighbours: Neighbours) {
  const transport = createRouterTransport((router) => {
    router.service(integrationsV1.IntegrationService, {
      findActiveIntegration(request) {
        const key = request.identifier === undefined ? request.providerId : `${request.providerId}/${request.identifier}`;
        const id = neighbours.integrations.get(key);
        return id ? { integration: { id, providerId: request.providerId } } : {};
      },
    });
    router.service(workflowsV1.WorkflowService, {
      getWorkflow(request) {
        const key = request.key.value;
        const found = [...neighbours.workflows, ...neighbours.inactiveWorkflows].find((workflow) => workflow.id === key || workflow.identifier === key);
        if (!found) throw notFound(`Workflow with id: ${key} cannot be found`);
        return { id: found.id, name: found.name, identifier: found.identifier, critical: found.critical, preferenceSettings: found.preferenceSettings! };
      },
      listActiveWorkflows(request) {
        const start = request.after === undefined ? 0 : neighbours.workflows.findIndex((workflow) => workflow.id === request.after) + 1;
        const page = neighbours.workflows.slice(start, start + request.limit);
        const more = start + request.limit < neighbours.workflows.length;
        return { workflows: page, ...(more ? { next: page.at(-1)!.id } : {}) };
      },
    });
  });
  return {
    integrations: createClient(integrationsV1.IntegrationService, transport),
    workflows: createClient(workflowsV1.WorkflowService, transport),
  };
}

export type PublishDeleted = (job: subscribersV1.SubscriberDeletedJob) => Promise<void>;

/** The service behind an in-memory transport: the real handlers and interceptors, no network. */
export function inMemoryClient(
  pool: Pool,
  neighbours: Neighbours = newNeighbours(),
  announce: Announce = async () => undefined,
  publishDeleted: PublishDeleted = async () => undefined,
) {
  const log = createLogger("test", "silent");
  const transport = inMemoryTransport(routes({ pool, log, ...neighbourClients(neighbours), announce, publishDeleted }));
  return createClient(subscribersV1.SubscriberService, transport);
}

/** The stored subscriber of that external id, if any, read the way callers read one: in a batch. */
export async function storedSubscriber(
  client: ReturnType<typeof inMemoryClient>,
  subscriberId: string,
  call: { headers: Record<string, string> },
): Promise<subscribersV1.Subscriber | undefined> {
  return (await client.batchGetSubscribers({ subscriberIds: [subscriberId] }, call)).subscribers[0];
}
