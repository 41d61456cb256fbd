import { ConfigError } from "@notify/runtime";
import { describe, expect, it } from "vitest";
import { readConfig } from "../src/config.js";

describe("gateway configuration", () => {
  it("reads OUTBOUND_ALLOWED_CIDRS as a list of ranges, none by default", () => {
    expect(readConfig({}).OUTBOUND_ALLOWED_CIDRS).toEqual([]);
    expect(readConfig({ OUTBOUND_ALLOWED_CIDRS: "127.0.0.0/8, 10.20.0.0/16" }).OUTBOUND_ALLOWED_CIDRS).toEqual(["127.0.0.0/8", "10.20.0.0/16"]);
  });

  it("refuses to start on an entry that is not a range, naming the variable", () => {
    expect(() => readConfig({ OUTBOUND_ALLOWED_CIDRS: "127.0.0.0/8,intranet" })).toThrow(ConfigError);
    expect(() => readConfig({ OUTBOUND_ALLOWED_CIDRS: "127.0.0.0/8,intranet" })).toThrow(/OUTBOUND_ALLOWED_CIDRS: "intranet" is not a CIDR range/);
  });

  it("takes an empty BOOTSTRAP_API_KEY as none (a blank line of compose's .env), and refuses a short one", () => {
    expect(readConfig({ BOOTSTRAP_API_KEY: "" }).BOOTSTRAP_API_KEY).toBeUndefined();
    expect(readConfig({ BOOTSTRAP_API_KEY: "0123456789abcdef0123456789abcdef" }).BOOTSTRAP_API_KEY).toBe("0123456789abcdef0123456789abcdef");
    expect(() => readConfig({ BOOTSTRAP_API_KEY: "short" })).toThrow(/BOOTSTRAP_API_KEY/);
  });
});
