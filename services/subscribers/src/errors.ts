import { notFound } from "@notify/runtime";

export const subscriberNotFound = (subscriberId: string) => notFound(`Subscriber '${subscriberId}' was not found`);
