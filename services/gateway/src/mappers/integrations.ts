import { fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { integrationsV1 } from "@notify/proto";
import { CHANNELS } from "@notify/runtime";
import { z } from "zod";
import { HttpError } from "../errors.js";
import { jsonObject, keyString, objectIdString, outboundHost, outboundUrl } from "../validation.js";
import { FILTER_ON, FILTER_TYPES, FILTER_VALUES, freeFormResponse, iso, isoDateResponse, OPERATORS } from "./common.js";

const { ConfigurationsSchema, IntegrationCredentialsSchema, StepFilterSchema } = integrationsV1;

const text = (name: string) => z.string({ error: `${name} must be a string` });
const flag = (name: string) => z.boolean({ error: `${name} must be a boolean value` });

/** The spec's IntegrationCredentials; other keys are dropped. */
const credentials = z.object(
  {
    apiKey: text("apiKey").optional(),
    user: text("user").optional(),
    secretKey: text("secretKey").optional(),
    domain: text("domain").optional(),
    password: text("password").optional(),
    host: outboundHost("host").optional(),
    port: text("port").optional(),
    secure: flag("secure").optional(),
    region: text("region").optional(),
    accountSid: text("accountSid").optional(),
    messageProfileId: text("messageProfileId").optional(),
    token: text("token").optional(),
    from: text("from").optional(),
    senderName: text("senderName").optional(),
    projectName: text("projectName").optional(),
    applicationId: text("applicationId").optional(),
    clientId: text("clientId").optional(),
    requireTls: flag("requireTls").optional(),
    ignoreTls: flag("ignoreTls").optional(),
    tlsOptions: jsonObject.optional(),
    baseUrl: outboundUrl("baseUrl").optional(),
    webhookUrl: outboundUrl("webhookUrl").optional(),
    redirectUrl: text("redirectUrl").optional(),
    hmac: flag("hmac").optional(),
    serviceAccount: text("serviceAccount").optional(),
    ipPoolName: text("ipPoolName").optional(),
    apiKeyRequestHeader: text("apiKeyRequestHeader").optional(),
    secretKeyRequestHeader: text("secretKeyRequestHeader").optional(),
    idPath: text("idPath").optional(),
    datePath: text("datePath").optional(),
    apiToken: text("apiToken").optional(),
    authenticateByToken: flag("authenticateByToken").optional(),
    authenticationTokenKey: text("authenticationTokenKey").optional(),
    instanceId: text("instanceId").optional(),
    alertUid: text("alertUid").optional(),
    title: text("title").optional(),
    imageUrl: text("imageUrl").optional(),
    state: text("state").optional(),
    externalLink: text("externalLink").optional(),
    channelId: text("channelId").optional(),
    phoneNumberIdentification: text("phoneNumberIdentification").optional(),
    accessKey: text("accessKey").optional(),
    appSid: text("appSid").optional(),
    senderId: text("senderId").optional(),
    tenantId: text("tenantId").optional(),
    apiVersion: text("apiVersion").optional(),
  },
  { error: "credentials must be an object" },
);

const configurations = z.object(
  {
    inboundWebhookEnabled: flag("inboundWebhookEnabled").optional(),
    inboundWebhookSigningKey: text("inboundWebhookSigningKey").optional(),
    configurationSetName: text("configurationSetName").optional(),
  },
  { error: "configurations must be an object" },
);

/** An integration's conditions may also read the trigger's tenant, as Novu's do. */
const CONDITION_ON = [...FILTER_ON, "tenant"] as const;

const fieldFilterPart = z.object({
  field: text("field"),
  value: text("value"),
  operator: z.enum(OPERATORS, { error: "operator must be a valid operator" }),
  on: z.enum(CONDITION_ON, { error: "on must be subscriber, payload or tenant" }),
});

const stepFilter = z.object({
  isNegated: flag("isNegated"),
  type: z.enum(FILTER_TYPES, { error: "type must be a valid filter type" }),
  value: z.enum(FILTER_VALUES, { error: "value must be AND or OR" }),
  children: z.array(fieldFilterPart, { error: "children must be an array" }).max(100, "children must contain no more than 100 elements"),
});

const conditions = z.array(stepFilter, { error: "conditions must be an array" }).max(100, "conditions must contain no more than 100 elements");

export const integrationIdParam = z.object({
  integrationId: objectIdString("integrationId"),
});

/** POST /v1/integrations; `check` and `_environmentId` are accepted and ignored (no cross-environment writes). */
export const createIntegrationBody = z.object(
  {
    providerId: keyString("providerId"),
    channel: z.enum(CHANNELS, { error: `channel must be one of the following values: ${CHANNELS.join(", ")}` }),
    name: keyString("name").optional(),
    identifier: keyString("identifier").optional(),
    credentials: credentials.optional(),
    active: flag("active").default(false),
    conditions: conditions.optional(),
    configurations: configurations.optional(),
  },
  { error: "body must be an object" },
);

/** PUT /v1/integrations/{integrationId}: the given fields replace the stored ones. */
export const updateIntegrationBody = z.object(
  {
    name: keyString("name").optional(),
    identifier: keyString("identifier").optional(),
    active: flag("active").optional(),
    credentials: credentials.optional(),
    conditions: conditions.optional(),
    configurations: configurations.optional(),
  },
  { error: "body must be an object" },
);

const credentialsOf = (value: z.infer<typeof credentials>) => fromJson(IntegrationCredentialsSchema, value as JsonObject);
const configurationsOf = (value: z.infer<typeof configurations>) => fromJson(ConfigurationsSchema, value as JsonObject);
const conditionsOf = (value: z.infer<typeof conditions>) => value.map((filter) => fromJson(StepFilterSchema, filter));

export function createRequestOf(body: z.infer<typeof createIntegrationBody>) {
  return {
    providerId: body.providerId,
    channel: body.channel,
    active: body.active,
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.identifier !== undefined ? { identifier: body.identifier } : {}),
    ...(body.credentials ? { credentials: credentialsOf(body.credentials) } : {}),
    ...(body.conditions ? { conditions: conditionsOf(body.conditions) } : {}),
    ...(body.configurations ? { configurations: configurationsOf(body.configurations) } : {}),
  };
}

export function updateRequestOf(id: string, body: z.infer<typeof updateIntegrationBody>) {
  return {
    id,
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.identifier !== undefined ? { identifier: body.identifier } : {}),
    ...(body.active !== undefined ? { active: body.active } : {}),
    ...(body.credentials ? { credentials: credentialsOf(body.credentials) } : {}),
    ...(body.conditions ? { conditions: { filters: conditionsOf(body.conditions) } } : {}),
    ...(body.configurations ? { configurations: configurationsOf(body.configurations) } : {}),
  };
}

/** The public Integration: every field of the spec's table (deletedAt/deletedBy only once set: the SDK refuses null there). */
export function integrationToJson(integration: integrationsV1.Integration) {
  return {
    _id: integration.id,
    _environmentId: integration.environmentId,
    _organizationId: integration.organizationId,
    name: integration.name,
    identifier: integration.identifier,
    providerId: integration.providerId,
    channel: integration.channel,
    credentials: integration.credentials ? toJson(IntegrationCredentialsSchema, integration.credentials) : {},
    configurations: integration.configurations ? toJson(ConfigurationsSchema, integration.configurations) : {},
    active: integration.active,
    deleted: integration.deleted,
    ...(integration.deletedAt ? { deletedAt: iso(integration.deletedAt) } : {}),
    ...(integration.deletedBy !== undefined ? { deletedBy: integration.deletedBy } : {}),
    primary: integration.primary,
    priority: integration.priority,
    conditions: integration.conditions.map((filter) => toJson(StepFilterSchema, filter, { alwaysEmitImplicit: true })),
    createdAt: iso(integration.createdAt),
    updatedAt: iso(integration.updatedAt),
  };
}

export const integrationsToJson = (reply: integrationsV1.ListIntegrationsResponse) => reply.integrations.map(integrationToJson);

/** What integrationToJson answers; credentials and configurations as the provider has them. */
export const integrationResponse = z
  .object({
    _id: z.string(),
    _environmentId: z.string(),
    _organizationId: z.string(),
    name: z.string(),
    identifier: z.string(),
    providerId: z.string(),
    channel: z.enum(CHANNELS),
    credentials: freeFormResponse,
    configurations: freeFormResponse,
    active: z.boolean(),
    deleted: z.boolean(),
    deletedAt: isoDateResponse.optional(),
    deletedBy: z.string().optional(),
    primary: z.boolean(),
    priority: z.int(),
    conditions: z.array(freeFormResponse),
    createdAt: isoDateResponse,
    updatedAt: isoDateResponse,
  })
  .meta({ id: "Integration" });

export const integrationsResponse = z.array(integrationResponse);

/** POST /v1/integrations/{integrationIdentifier}/mobile-link and …/webhook/configure. */
export const integrationIdentifierParam = z.object({ integrationIdentifier: keyString("integrationIdentifier") });

/**
 * The bodies of the chat-connection calls (OAuth URLs, channel endpoint links): what names the
 * integration and the subscriber is checked; the rest only matters to a flow notify does not serve.
 */
export const chatConnectionBody = z.object({
  integrationIdentifier: keyString("integrationIdentifier"),
  subscriberId: keyString("subscriberId").optional(),
});

export const subscriberChatConnectionBody = chatConnectionBody.extend({ subscriberId: keyString("subscriberId") });

/** POST /v1/integrations/{integrationIdentifier}/mobile-link and …/webhook/configure (which sends none). */
export const mobileLinkBody = z.object({ subscriberId: keyString("subscriberId").optional() }).optional();

/** POST /v1/integrations/{integrationId}/auto-configure: whether it worked, why not, and the integration without its credentials. */
export const autoConfigureResponse = z.object({
  success: z.boolean(),
  message: z.string().optional(),
  integration: integrationResponse.optional(),
});

/**
 * Refuses a call the integration's provider does not support here (chat connections, which need a
 * provider app whose callbacks reach the service; auto-configure, for a provider whose API cannot
 * set its webhook up): Novu's answer to a provider it does not support for the call.
 */
export function refuseForProvider(integration: integrationsV1.Integration, what: string): never {
  throw new HttpError(400, `${what} is not supported for provider: ${integration.providerId}`);
}

/** The calls refused for every provider (refuseForProvider) answer no success. */
export const refusedResponse = z.never().describe("Not served: every call answers 400 (unsupported provider) or 404 (unknown integration)");
