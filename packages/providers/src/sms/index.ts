import type { ProviderFactory } from "../registry.js";
import { genericSms } from "./generic-sms.js";
import { plivo } from "./plivo.js";
import { sns } from "./sns.js";
import { telnyx } from "./telnyx.js";
import { twilio } from "./twilio.js";
import { nexmo, vonage } from "./vonage.js";

/** The sms providers, one module each. */
export const smsProviders: ProviderFactory[] = [twilio, vonage, nexmo, plivo, sns, telnyx, genericSms];
