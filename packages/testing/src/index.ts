export * from "./database.js";
export * from "./wait.js";
export * from "./rpc.js";
export * from "./explain.js";
export * from "./receivers.js";
export * from "./signatures.js";
export * from "./processes.js";
export * from "./certificates.js";
