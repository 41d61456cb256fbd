import type { ProviderFactory } from "../registry.js";
import { nodemailer } from "./nodemailer.js";

/** The email providers, one module each. */
export const emailProviders: ProviderFactory[] = [nodemailer];
