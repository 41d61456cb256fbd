import { postJson } from "../http.js";
import type { ProviderFactory } from "../registry.js";
import type { Provider } from "../types.js";
import { channelSetting } from "./subscriber.js";
import { withProviderData } from "../provider-data.js";

const ID = "grafana-on-call";

/**
 * A Grafana OnCall "formatted webhook" integration: the alert's fields come from the integration's
 * settings (alertUid groups alerts, state "ok" resolves them), the message is the step's content.
 */
export const grafanaOnCall: ProviderFactory = (): Provider<"chat"> => ({
  id: ID,
  channel: "chat",
  // The formatted webhook groups by alert_uid but does not deduplicate posts.
  idempotent: false,
  async send(message, { credentials, http, providerData }) {
    const { url, body, headers } = withProviderData(
      {
        url: channelSetting(ID, message, "webhookUrl"),
        body: {
          alert_uid: credentials.alertUid,
          title: credentials.title ?? message.title,
          image_url: credentials.imageUrl,
          state: credentials.state,
          link_to_upstream_details: credentials.externalLink,
          message: message.content,
        },
        headers: {},
      },
      providerData,
      "snake",
    );
    await postJson(ID, http, url, body, headers);
    // OnCall answers "Ok." and no id.
    return {};
  },
});
