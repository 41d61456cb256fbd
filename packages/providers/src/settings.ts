import { missingSetting, type ProviderCredentials } from "./types.js";

/** The credential fields that hold text. */
export type TextSetting = {
  [K in keyof ProviderCredentials]-?: NonNullable<ProviderCredentials[K]> extends string ? K : never;
}[keyof ProviderCredentials];

/** A setting the provider cannot send without: a final error naming the field when it is unset or blank. */
export function requireSetting(providerId: string, credentials: ProviderCredentials, field: TextSetting): string {
  const value = credentials[field];
  if (value === undefined || value.trim() === "") throw missingSetting(providerId, field);
  return value;
}
