import type { ProviderFactory } from "../registry.js";
import { apns } from "./apns.js";
import { expo } from "./expo.js";
import { fcm } from "./fcm.js";
import { oneSignal } from "./one-signal.js";
import { pushWebhook } from "./push-webhook.js";
import { pusherBeams } from "./pusher-beams.js";
import { pushpad } from "./pushpad.js";

/** The push providers, one module each. */
export const pushProviders: ProviderFactory[] = [fcm, apns, expo, oneSignal, pushpad, pusherBeams, pushWebhook];
