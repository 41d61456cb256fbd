import { z } from "zod";
import type { EnvironmentSummary } from "../environments.js";

const DEVELOPMENT = "Development";

/** What Novu names as the parent of every environment but Development: Development. */
export const parentIdOf = (environments: readonly EnvironmentSummary[]) => environments.find((candidate) => candidate.name === DEVELOPMENT)?.id;

/**
 * The public Environment (@novu/api's EnvironmentResponseDto) without `apiKeys`: keys are shown
 * once, when created, and never answered again.
 */
export function environmentToJson(environment: EnvironmentSummary, parentId: string | undefined) {
  return {
    _id: environment.id,
    name: environment.name,
    _organizationId: environment.organizationId,
    identifier: environment.identifier,
    type: environment.name === "Production" ? "prod" : "dev",
    ...(parentId !== undefined && parentId !== environment.id ? { _parentId: parentId } : {}),
  };
}

/** What environmentToJson answers. */
export const environmentResponse = z
  .object({
    _id: z.string(),
    name: z.string(),
    _organizationId: z.string(),
    identifier: z.string(),
    type: z.enum(["prod", "dev"]),
    _parentId: z.string().optional(),
  })
  .meta({ id: "Environment" });
