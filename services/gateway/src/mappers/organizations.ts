import { z } from "zod";
import type { Branding, Organization } from "../organizations.js";
import { isoDateResponse } from "./common.js";
import { text } from "./workflows.js";

/** PATCH /v1/organizations (@novu/node organizations.rename). Novu takes an empty name; the CLI names organizations by theirs. */
export const renameOrganizationBody = z.object({ name: text("name", 255).refine((name) => name.trim().length > 0, "name should not be empty") });

const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
const hexColor = (name: string) => z.string({ error: `${name} must be a hexadecimal color` }).regex(HEX_COLOR, `${name} must be a hexadecimal color`);
const LOGO_MESSAGE = "Logo must be a valid image URL with one of the following extensions: jpg, jpeg, png, gif, svg";

/** PUT /v1/organizations/branding, as Novu's UpdateBrandingDetailsDto checks it: it replaces the branding whole. */
export const brandingBody = z.object({
  logo: z
    .string({ error: LOGO_MESSAGE })
    .max(2048, "logo must be at most 2048 characters")
    .refine((logo) => {
      try {
        const url = new URL(logo);
        return (url.protocol === "https:" || url.protocol === "http:") && /\.(jpe?g|png|gif|svg)$/i.test(url.pathname);
      } catch {
        return false;
      }
    }, LOGO_MESSAGE)
    .optional(),
  color: hexColor("color").optional(),
  fontColor: hexColor("fontColor").optional(),
  contentBackground: hexColor("contentBackground").optional(),
  fontFamily: text("fontFamily", 255).optional(),
});

/** An organization as Novu's /v1/organizations/me answers it. */
export function organizationToJson(organization: Organization) {
  return {
    _id: organization.id,
    name: organization.name,
    ...(organization.branding ? { branding: brandingToJson(organization.branding) } : {}),
    createdAt: organization.createdAt.toISOString(),
    updatedAt: organization.updatedAt.toISOString(),
  };
}

export const brandingToJson = (branding: Branding) => Object.fromEntries(Object.entries(branding).filter(([, value]) => value !== undefined));

export const brandingResponse = z.object({
  logo: z.string().optional(),
  color: z.string().optional(),
  fontColor: z.string().optional(),
  contentBackground: z.string().optional(),
  fontFamily: z.string().optional(),
});

export const organizationResponse = z
  .object({ _id: z.string(), name: z.string(), branding: brandingResponse.optional(), createdAt: isoDateResponse, updatedAt: isoDateResponse })
  .meta({ id: "Organization" });
