// notify.common.v1 spans files: the method options and the shared vocabulary.
export * from "./gen/notify/common/v1/options_pb.js";
export * from "./gen/notify/common/v1/vocabulary_pb.js";
