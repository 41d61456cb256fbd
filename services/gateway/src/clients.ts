import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import {
  connectionsV1,
  contextsV1,
  Health,
  layoutsV1,
  integrationsV1,
  messagesV1,
  subscribersV1,
  tenantsV1,
  topicsV1,
  triggersV1,
  variablesV1,
  workflowsV1,
} from "@notify/proto";
import type { SnsEndpoints } from "@notify/providers/events";
import { createRpcTransport, type NatsConnection } from "@notify/runtime";
import type { GatewayConfig } from "./config.js";
import { forgettingWrites } from "./forgetting.js";
import { countUnseenBatched, feedPageBatched, inboxPageBatched, type CountUnseen, type FeedPage, type FeedPages, type InboxPage } from "./messages-client.js";
import { snsEndpointsOver } from "./sns-client.js";
import { webhookSetupsOver, type WebhookSetups } from "./webhook-setup-client.js";
import { getSubscriberBatched, type GetSubscriber } from "./subscribers-client.js";
import { acceptTriggerBatched, type AcceptTrigger } from "./triggers-client.js";

/**
 * The hot calls, which travel batched with their concurrent peers of the same environment
 * (DESIGN §5): each names the batch RPC it sends.
 */
export interface BatchedCalls {
  /** BatchCountMessages */
  countUnseen: CountUnseen;
  /** BatchGetFeed, or no hop for a page kept since nothing changed it */
  feedPage: FeedPage;
  /** BatchListInboxMessages */
  inboxPage: InboxPage;
  /** BatchGetSubscribers */
  getSubscriber: GetSubscriber;
  /** TriggerBatch */
  acceptTrigger: AcceptTrigger;
}

/** One client per downstream service, and the batched calls; every route reaches services only through these. */
export interface Clients {
  subscribers: Client<typeof subscribersV1.SubscriberService>;
  integrations: Client<typeof integrationsV1.IntegrationService>;
  /** Served by the integrations process, which seals them as it seals credentials. */
  variables: Client<typeof variablesV1.EnvironmentVariableService>;
  /** Served by the integrations process, which seals their tokens as it seals credentials. */
  channelConnections: Client<typeof connectionsV1.ChannelConnectionService>;
  topics: Client<typeof topicsV1.TopicService>;
  messages: Client<typeof messagesV1.MessageService>;
  /** Served by the triggers process, as are tenants, contexts and layouts. */
  workflows: Client<typeof workflowsV1.WorkflowService>;
  workflowOverrides: Client<typeof workflowsV1.WorkflowOverrideService>;
  tenants: Client<typeof tenantsV1.TenantService>;
  contexts: Client<typeof contextsV1.ContextService>;
  layouts: Client<typeof layoutsV1.LayoutService>;
  legacyLayouts: Client<typeof layoutsV1.LegacyLayoutService>;
  triggers: Client<typeof triggersV1.TriggerService>;
  /** Calls to Amazon SNS for SES webhooks, made by a worker over NATS: the only process that reaches the internet. */
  sns: SnsEndpoints;
  /** Providers' event webhooks set up by a worker over NATS (Novu's auto-configure), for the same reason. */
  webhookSetups: WebhookSetups;
  batched: BatchedCalls;
}

/** The downstream processes; the triggers process serves workflows, tenants and triggers. */
export type ProcessName = "subscribers" | "integrations" | "topics" | "messages" | "triggers";

export interface ConnectedClients {
  clients: Clients;
  /** The gRPC health service of each downstream process (probed once each), for readiness. */
  health: Record<ProcessName, Client<typeof Health>>;
  close(): void;
}

export function connectClients(
  config: Pick<
    GatewayConfig,
    | "SUBSCRIBERS_URL"
    | "MESSAGES_URL"
    | "TRIGGERS_URL"
    | "INTEGRATIONS_URL"
    | "TOPICS_URL"
    | "RPC_TIMEOUT_MS"
    | "INTERNAL_RPC_TOKEN"
    | "SNS_REQUESTS_SUBJECT"
    | "WEBHOOK_SETUP_SUBJECT"
    | "GATEWAY_PUBLIC_URL"
  >,
  feedPages?: FeedPages,
  nats: () => NatsConnection | undefined = () => undefined,
): ConnectedClients {
  const subscribers = createRpcTransport(config.SUBSCRIBERS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const integrations = createRpcTransport(config.INTEGRATIONS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const topics = createRpcTransport(config.TOPICS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const messages = createRpcTransport(config.MESSAGES_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  const triggers = createRpcTransport(config.TRIGGERS_URL, config.RPC_TIMEOUT_MS, { internalToken: config.INTERNAL_RPC_TOKEN });
  /** A client of `service` whose writes drop the feed pages they change, as its contract declares. */
  const clientOf = <S extends DescService>(service: S, transport: Transport) => forgettingWrites(service, createClient(service, transport), feedPages);
  const subscribersClient = clientOf(subscribersV1.SubscriberService, subscribers.transport);
  const messagesClient = clientOf(messagesV1.MessageService, messages.transport);
  const triggersClient = clientOf(triggersV1.TriggerService, triggers.transport);
  return {
    clients: {
      subscribers: subscribersClient,
      integrations: clientOf(integrationsV1.IntegrationService, integrations.transport),
      variables: clientOf(variablesV1.EnvironmentVariableService, integrations.transport),
      channelConnections: clientOf(connectionsV1.ChannelConnectionService, integrations.transport),
      topics: clientOf(topicsV1.TopicService, topics.transport),
      messages: messagesClient,
      workflows: clientOf(workflowsV1.WorkflowService, triggers.transport),
      workflowOverrides: clientOf(workflowsV1.WorkflowOverrideService, triggers.transport),
      tenants: clientOf(tenantsV1.TenantService, triggers.transport),
      contexts: clientOf(contextsV1.ContextService, triggers.transport),
      layouts: clientOf(layoutsV1.LayoutService, triggers.transport),
      legacyLayouts: clientOf(layoutsV1.LegacyLayoutService, triggers.transport),
      triggers: triggersClient,
      sns: snsEndpointsOver(nats, config.SNS_REQUESTS_SUBJECT),
      webhookSetups: webhookSetupsOver(nats, config.WEBHOOK_SETUP_SUBJECT, config.GATEWAY_PUBLIC_URL),
      batched: {
        countUnseen: countUnseenBatched(messagesClient),
        feedPage: feedPageBatched(messagesClient, feedPages),
        inboxPage: inboxPageBatched(messagesClient),
        getSubscriber: getSubscriberBatched(subscribersClient),
        acceptTrigger: acceptTriggerBatched(triggersClient),
      },
    },
    health: {
      subscribers: createClient(Health, subscribers.transport),
      integrations: createClient(Health, integrations.transport),
      topics: createClient(Health, topics.transport),
      messages: createClient(Health, messages.transport),
      triggers: createClient(Health, triggers.transport),
    },
    close() {
      subscribers.close();
      integrations.close();
      topics.close();
      messages.close();
      triggers.close();
    },
  };
}
