import type { ProviderFactory } from "../registry.js";

/** The chat providers, one module each. */
export const chatProviders: ProviderFactory[] = [];
