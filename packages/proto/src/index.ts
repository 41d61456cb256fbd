export * from "./gen/grpc/health/v1/health_pb.js";
export * as subscribersV1 from "./gen/notify/subscribers/v1/subscribers_pb.js";
