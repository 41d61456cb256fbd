import { cacheLookups, isUniqueViolation, keptLoads, type Logger, type Pool } from "@notify/runtime";
import { HttpError } from "./errors.js";
import * as store from "./store.js";

/** Novu's organization branding: what the Notification Center is drawn with. */
export interface Branding {
  color?: string | undefined;
  logo?: string | undefined;
  fontColor?: string | undefined;
  contentBackground?: string | undefined;
  fontFamily?: string | undefined;
}

export interface Organization {
  id: string;
  name: string;
  branding: Branding | undefined;
  createdAt: Date;
  updatedAt: Date;
}

/** The caller's organization, as Novu's /v1/organizations routes read and change it (its members are Novu's users: notify has none). */
export interface Organizations {
  byId(organizationId: string): Promise<Organization | undefined>;
  /** 400 when another organization has the name: the CLI names organizations by it. */
  rename(organizationId: string, name: string): Promise<void>;
  /** Replaces the branding, as Novu does (what is left out is gone). */
  setBranding(organizationId: string, branding: Branding): Promise<void>;
  /**
   * What templates read of the branding (its logo and colour), for each trigger: read again at
   * most every few seconds, at once after this process changed it.
   */
  templateBranding(organizationId: string): Promise<Pick<Branding, "logo" | "color">>;
}

/** How long a process uses an organization's branding before reading it again: what another gateway's change waits to reach triggers. */
const TEMPLATE_BRANDING_TTL_MS = 5_000;

const nameTaken = (name: string) => new HttpError(400, `An organization named ${name} exists already`);

export function createOrganizations(pool: Pool, log: Logger): Organizations {
  const templateBrandings = keptLoads<Pick<Branding, "logo" | "color">>({
    max: 10_000,
    ttlMs: TEMPLATE_BRANDING_TTL_MS,
    lookups: cacheLookups("gateway_template_branding"),
  });
  return {
    async byId(organizationId) {
      const row = await store.selectOrganization(pool, organizationId);
      if (!row) return undefined;
      return { id: row.id, name: row.name, branding: row.branding ?? undefined, createdAt: row.created_at, updatedAt: row.updated_at };
    },
    async rename(organizationId, name) {
      try {
        if (!(await store.renameOrganization(pool, organizationId, name))) throw nameTaken(name);
      } catch (error) {
        // Taken by a rename that committed meanwhile.
        if (isUniqueViolation(error)) throw nameTaken(name);
        throw error;
      }
    },
    async setBranding(organizationId, branding) {
      const set = Object.fromEntries(Object.entries(branding).filter((entry): entry is [string, string] => entry[1] !== undefined));
      await store.updateOrganizationBranding(pool, organizationId, set);
      templateBrandings.forget(organizationId);
    },
    templateBranding(organizationId) {
      const load = templateBrandings(organizationId, async () => {
        const branding = (await store.selectOrganization(pool, organizationId))?.branding;
        return { ...(branding?.["logo"] ? { logo: branding["logo"] } : {}), ...(branding?.["color"] ? { color: branding["color"] } : {}) };
      });
      // A trigger is worth more than its look: accepted without branding (Novu's colour) rather than refused.
      return load.catch((error: unknown) => {
        log.warn({ err: error, organizationId }, "organization branding not read; the trigger goes without it");
        return {};
      });
    },
  };
}
