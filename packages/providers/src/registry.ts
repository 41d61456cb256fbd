import { chatProviders } from "./chat/index.js";
import { emailProviders } from "./email/index.js";
import { pushProviders } from "./push/index.js";
import { smsProviders } from "./sms/index.js";
import type { DeliveryChannel, Provider } from "./types.js";

/** Makes a provider; each registry makes its own, so pooled connections belong to one process's registry. */
export type ProviderFactory = () => Provider;

export interface Providers {
  /** The provider of this id for this channel, or undefined when notify has no sender for it. */
  get<C extends DeliveryChannel>(channel: C, providerId: string): Provider<C> | undefined;
  close(): Promise<void>;
}

const factories: readonly ProviderFactory[] = [...emailProviders, ...smsProviders, ...chatProviders, ...pushProviders];

/**
 * Every provider notify sends through, by channel and id (end-to-end tests hold a case for each),
 * and whether it can set up its own event webhook (Novu's auto-configure).
 */
export function registeredProviders(): { channel: DeliveryChannel; id: string; configuresEventsWebhook: boolean }[] {
  return factories.map((factory) => {
    const { channel, id, configureEventsWebhook } = factory();
    return { channel, id, configuresEventsWebhook: configureEventsWebhook !== undefined };
  });
}

export function createProviders(): Providers {
  const byKey = new Map<string, Provider>();
  for (const factory of factories) {
    const provider = factory();
    byKey.set(`${provider.channel}/${provider.id}`, provider);
  }
  return {
    get<C extends DeliveryChannel>(channel: C, providerId: string) {
      return byKey.get(`${channel}/${providerId}`) as Provider<C> | undefined;
    },
    async close() {
      await Promise.all([...byKey.values()].map((provider) => provider.close?.()));
    },
  };
}
