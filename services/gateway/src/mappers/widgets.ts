import { z } from "zod";
import { jsonObject, keyString, objectIdString, queryBool, queryInt } from "../validation.js";
import { stringList } from "./messages.js";
import { brandingResponse } from "./organizations.js";
import { globalPreferenceV1Body, workflowPreferenceV1Body } from "./preferences-v1.js";
import { profileShape } from "./subscribers.js";

/**
 * The Notification Center's API (/v1/widgets/…): what @novu/notification-center and
 * @novu/headless send, through @novu/client. Its feed, marks, actions and preferences are the v1
 * subscriber routes' own, for the session's subscriber.
 */

/** POST /v1/widgets/session/initialize: the subscriber is made if new; its profile is written only with a valid hmacHash. */
export const widgetSessionBody = z.object({
  applicationIdentifier: z.string({ error: "applicationIdentifier must be a string" }),
  subscriberId: keyString("subscriberId"),
  firstName: profileShape.firstName,
  lastName: profileShape.lastName,
  email: profileShape.email,
  phone: profileShape.phone,
  hmacHash: z.string({ error: "hmacHash must be a string" }).nullable().optional(),
});

export type WidgetSessionBody = z.output<typeof widgetSessionBody>;

export const widgetSessionResponse = z.object({
  token: z.string(),
  profile: z.object({ _id: z.string(), firstName: z.string().optional(), lastName: z.string().optional(), phone: z.string().optional() }),
});

/** The Notification Center's counts stop at 100, as Novu's. */
const countLimit = queryInt(100, 1, 100);

/** GET /v1/widgets/notifications/unseen: unseen unless `seen` says otherwise. */
export const unseenCountQuery = z.object({ feedIdentifier: stringList("feedIdentifier").optional(), seen: queryBool.default(false), limit: countLimit });

/** GET /v1/widgets/notifications/unread: unread unless `read` says otherwise. */
export const unreadCountQuery = z.object({ feedIdentifier: stringList("feedIdentifier").optional(), read: queryBool.default(false), limit: countLimit });

/** GET /v1/widgets/notifications/count: by seen and read as given (neither: unseen). */
export const feedCountQuery = z.object({
  feedIdentifier: stringList("feedIdentifier").optional(),
  seen: queryBool.optional(),
  read: queryBool.optional(),
  limit: countLimit,
});

export const countResponse = z.object({ count: z.int().min(0) });

/** DELETE /v1/widgets/messages: every in-app message of the subscriber, or of one feed (its _id). */
export const removeAllMessagesQuery = z.object({ feedId: objectIdString("feedId").optional() });

/** POST /v1/widgets/messages/bulk/delete */
export const removeMessagesBody = z.object({
  messageIds: z
    .array(objectIdString("messageIds"), { error: "messageIds must be an array" })
    .min(1, "messageIds should not be empty")
    .max(100, "messageIds must contain no more than 100 elements"),
});

/** POST /v1/widgets/messages/read and …/seen: of the feeds named (identifiers), or of all. */
export const markAllWidgetBody = z.object({ feedId: stringList("feedId").optional() });

export const widgetMessageParams = z.object({ messageId: z.string().min(1) });

/**
 * GET /v1/widgets/preferences/{parameter}, the level, and PATCH …/{parameter}, the workflow: one
 * name for both, as the v1 subscriber routes have it.
 */
export const widgetPreferenceLevelParams = z.object({ parameter: z.enum(["global", "template"], { error: "the level must be global or template" }) });

export const widgetWorkflowParams = z.object({ parameter: z.string().min(1) });

/** A whole preference's `enabled` is read and ignored, as Novu's widget routes do (the API's refuse `false`: there is no such switch). */
const ignoredEnabled = { enabled: z.boolean({ error: "enabled must be a boolean value" }).optional() };

/** PATCH /v1/widgets/preferences */
export const widgetGlobalPreferenceBody = globalPreferenceV1Body.extend(ignoredEnabled);

/** PATCH /v1/widgets/preferences/{parameter} */
export const widgetWorkflowPreferenceBody = workflowPreferenceV1Body.extend(ignoredEnabled);

/** POST /v1/widgets/usage/log: Novu forwards it to its analytics; nothing is kept here. */
export const usageLogBody = z.object({ name: z.string({ error: "name must be a string" }), payload: jsonObject.optional() });

export const usageLogResponse = z.object({ success: z.literal(true) });

/** GET /v1/widgets/organization: what the Notification Center shows of the organization. */
export const widgetOrganizationResponse = z.object({ _id: z.string(), name: z.string(), branding: brandingResponse.optional() });
