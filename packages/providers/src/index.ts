export * from "./types.js";
export * from "./outbound.js";
export * from "./http.js";
export * from "./provider-data.js";
export * from "./registry.js";
export * from "./email/body.js";
export { fcmSendsToTopic } from "./push/fcm.js";
