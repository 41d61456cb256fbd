import { z } from "zod";
import { contextBody } from "./context-inputs.js";
import { schedule, scheduleRequestOf } from "./preferences.js";
import { profileShape } from "./subscribers.js";

/**
 * POST /v1/inbox/session as @novu/js sends it (inbox-protocol §2.1): older clients send a
 * top-level `subscriberId` or the subscriber as a string. `defaultSchedule` is the app's schedule
 * for subscribers who have none yet; `context` scopes the session to the messages of triggers
 * with exactly that context, signed by `contextHash` where subscribers must be.
 */
export const sessionBody = z.object({
  applicationIdentifier: z.string({ error: "applicationIdentifier must be a string" }).optional(),
  subscriberHash: z.string({ error: "subscriberHash must be a string" }).optional(),
  subscriberId: z.string({ error: "subscriberId must be a string" }).optional(),
  subscriber: z
    .union([z.string(), z.object({ subscriberId: z.string({ error: "subscriber.subscriberId must be a string" }).optional(), ...profileShape })], {
      error: "subscriber must be a string or an object",
    })
    .optional(),
  defaultSchedule: schedule.partial({ isEnabled: true }).optional(),
  context: contextBody.optional(),
  contextHash: z.string({ error: "contextHash must be a string" }).optional(),
});

export type SessionBody = z.infer<typeof sessionBody>;

/** The subscriberId a session names, wherever the client put it. */
export function sessionSubscriberId(body: SessionBody): string {
  if (typeof body.subscriber === "string") return body.subscriber;
  return body.subscriber?.subscriberId || body.subscriberId || "";
}

/** The session's default schedule as SetDefaultSchedule takes it: given, it is meant to be in force unless it says otherwise. */
export function defaultScheduleRequestOf(subscriberId: string, given: NonNullable<SessionBody["defaultSchedule"]>) {
  return { subscriberId, schedule: scheduleRequestOf({ ...given, isEnabled: given.isEnabled ?? true }) };
}

/** The subscriber's profile fields a session carries. */
export function sessionProfile(body: SessionBody) {
  if (typeof body.subscriber !== "object") return {};
  const { subscriberId: _, ...profile } = body.subscriber;
  return profile;
}

export interface SessionCounts {
  total: number;
  severity: { high: number; medium: number; low: number; none: number };
}

export interface SessionAnswer {
  token: string;
  counts: SessionCounts;
  isDevelopmentMode: boolean;
  maxSnoozeDurationHours: number;
  applicationIdentifier: string;
  contextKeys: string[];
}

/** The Session @novu/js and its <Inbox /> read (inbox-protocol §2.2). */
export function sessionToJson(answer: SessionAnswer) {
  return {
    token: answer.token,
    totalUnreadCount: answer.counts.total,
    unreadCount: answer.counts,
    removeNovuBranding: false,
    isDevelopmentMode: answer.isDevelopmentMode,
    maxSnoozeDurationHours: answer.maxSnoozeDurationHours,
    applicationIdentifier: answer.applicationIdentifier,
    contextKeys: answer.contextKeys,
  };
}

/** What sessionToJson answers. */
export const sessionResponse = z.object({
  token: z.string(),
  totalUnreadCount: z.int().min(0),
  unreadCount: z.object({
    total: z.int().min(0),
    severity: z.object({ high: z.int().min(0), medium: z.int().min(0), low: z.int().min(0), none: z.int().min(0) }),
  }),
  removeNovuBranding: z.literal(false),
  isDevelopmentMode: z.boolean(),
  maxSnoozeDurationHours: z.number(),
  applicationIdentifier: z.string(),
  contextKeys: z.array(z.string()),
});
