import type { ProviderFactory } from "../registry.js";

/** The push providers, one module each. */
export const pushProviders: ProviderFactory[] = [];
