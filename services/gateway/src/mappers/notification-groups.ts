import { z } from "zod";
import { nonBlankText } from "./workflows.js";

export { notificationGroupToJson } from "./workflows.js";

/** POST /v1/notification-groups. */
export const createNotificationGroupBody = z.object({ name: nonBlankText("name") });
