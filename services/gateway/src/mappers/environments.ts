import { z } from "zod";
import { ENVIRONMENT_IDENTIFIER, type CreatedEnvironment, type EnvironmentSummary } from "../environments.js";
import { keyString } from "../validation.js";

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

export const environmentIdParam = z.object({ environmentId: keyString("environmentId") });

const environmentName = keyString("name").trim().min(1, "name should not be empty");
const parentId = z.string({ error: "parentId must be a string" }).regex(/^[0-9a-f]{24}$/, "parentId must be a mongodb id");
const color = z.string({ error: "color must be a string" }).max(64, "color must be shorter than or equal to 64 characters");

/**
 * POST /v1/environments. `parentId` and `color` are accepted as Novu accepts them and not kept:
 * Novu's create ignores `parentId` too, every environment's parent is Development, and no answer
 * shows a color.
 */
export const createEnvironmentBody = z.object({ name: environmentName, parentId: parentId.optional(), color });

const unsupported = (field: string) =>
  z.undefined({ error: `${field} is not supported: notify serves no inbound parse domains nor bridge workflows` }).optional();

/** PUT /v1/environments/{environmentId}: `parentId` and `color` as on create. */
export const updateEnvironmentBody = z.object({
  name: environmentName.optional(),
  identifier: z
    .string({ error: "identifier must be a string" })
    .regex(ENVIRONMENT_IDENTIFIER, "identifier must be 1 to 64 letters, digits, underscores or hyphens")
    .optional(),
  parentId: parentId.optional(),
  color: color.optional(),
  dns: unsupported("dns"),
  bridge: unsupported("bridge"),
});

/**
 * The environment just created, with its first API key: shown this once, as Novu shows it. Notify's
 * keys belong to no user, so `_userId` names the key itself (its id in `notify keys list`).
 */
export function createdEnvironmentToJson(environment: CreatedEnvironment, parentId: string | undefined) {
  return { ...environmentToJson(environment, parentId), apiKeys: [{ key: environment.apiKey.key, _userId: environment.apiKey.id }] };
}

/** GET /v2/environments/{environmentId}/tags: `[{name}]`. */
export const tagsToJson = (tags: readonly string[]) => tags.map((name) => ({ name }));
