// notify.common.v1 spans files: the method options, the shared vocabulary and template variables.
export * from "./gen/notify/common/v1/options_pb.js";
export * from "./gen/notify/common/v1/vocabulary_pb.js";
export * from "./gen/notify/common/v1/templates_pb.js";
