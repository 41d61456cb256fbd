export { emailHtml, v1StepRender } from "./email.js";
export { legacyLayoutKeys, objectAt, stepLayoutId } from "./layouts.js";
export type { MailyNode } from "./maily.js";
export * from "./message.js";
export * from "./payload.js";
export * from "./render.js";
export * from "./variables.js";
