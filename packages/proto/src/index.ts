export * from "./gen/grpc/health/v1/health_pb.js";
export * as integrationsV1 from "./gen/notify/integrations/v1/integrations_pb.js";
export * as messagesV1 from "./gen/notify/messages/v1/messages_pb.js";
export * as subscribersV1 from "./gen/notify/subscribers/v1/subscribers_pb.js";
export * as tenantsV1 from "./gen/notify/tenants/v1/tenants_pb.js";
export * as topicsV1 from "./gen/notify/topics/v1/topics_pb.js";
export * as triggersV1 from "./gen/notify/triggers/v1/triggers_pb.js";
export * as workflowsV1 from "./gen/notify/workflows/v1/workflows_pb.js";
export * as commonV1 from "./common.js";
