import type { ProviderFactory } from "../registry.js";
import { chatWebhook } from "./chat-webhook.js";
import { discord } from "./discord.js";
import { getstream } from "./getstream.js";
import { grafanaOnCall } from "./grafana-on-call.js";
import { mattermost } from "./mattermost.js";
import { msteams } from "./msteams.js";
import { rocketChat } from "./rocket-chat.js";
import { ryver } from "./ryver.js";
import { slack } from "./slack.js";
import { whatsappBusiness } from "./whatsapp-business.js";
import { zulip } from "./zulip.js";

/** The chat providers, one module each. */
export const chatProviders: ProviderFactory[] = [
  slack,
  discord,
  msteams,
  mattermost,
  rocketChat,
  zulip,
  grafanaOnCall,
  ryver,
  getstream,
  whatsappBusiness,
  chatWebhook,
];
