import { z } from "zod";
import { nonBlankText } from "./workflows.js";

export { notificationGroupResponse, notificationGroupToJson } from "./workflows.js";

/** POST /v1/notification-groups, PATCH /v1/notification-groups/{id}. */
export const createNotificationGroupBody = z.object({ name: nonBlankText("name") });

export const notificationGroupIdParam = z.object({ id: z.string().min(1) });
