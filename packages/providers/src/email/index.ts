import type { ProviderFactory } from "../registry.js";

/** The email providers, one module each. */
export const emailProviders: ProviderFactory[] = [];
