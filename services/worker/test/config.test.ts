import { ConfigError } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { readConfig } from "../src/config.js";

describe("worker configuration", () => {
  it("keeps sends of messages for 30 days by default", () => {
    expect(readConfig({}).DELIVERY_MAX_AGE_MS).toBe(30 * 24 * 3_600_000);
  });

  it("refuses a max age that a send retried within its budget could outlive", () => {
    const short = { DELIVERY_BUDGET_MS: "60000", WORKER_ACK_WAIT_MS: "30000" };
    expect(() => readConfig({ ...short, DELIVERY_MAX_AGE_MS: "90000" })).toThrow(ConfigError);
    expect(() => readConfig({ ...short, DELIVERY_MAX_AGE_MS: "90000" })).toThrow(/DELIVERY_MAX_AGE_MS: must exceed DELIVERY_BUDGET_MS \+ WORKER_ACK_WAIT_MS/);
    expect(readConfig({ ...short, DELIVERY_MAX_AGE_MS: "90001" }).DELIVERY_MAX_AGE_MS).toBe(90_001);
  });
});
