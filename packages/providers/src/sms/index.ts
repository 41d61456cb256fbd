import type { ProviderFactory } from "../registry.js";

/** The sms providers, one module each. */
export const smsProviders: ProviderFactory[] = [];
