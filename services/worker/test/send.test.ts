import { create } from "@bufbuild/protobuf";
import { integrationsV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { credentialsOf, durationText } from "../src/send.js";

describe("durationText", () => {
  it("names a length of time in the largest unit it holds one of", () => {
    expect(durationText(30 * 86_400_000)).toBe("30 days");
    expect(durationText(3_600_000)).toBe("1 hour");
    expect(durationText(5_400_000)).toBe("1.5 hours");
    expect(durationText(120_000)).toBe("2 minutes");
    expect(durationText(3_000)).toBe("3 seconds");
    expect(durationText(2_001)).toBe("2 seconds");
  });

  it("names less than a second in seconds", () => {
    expect(durationText(500)).toBe("0.5 seconds");
  });
});

describe("credentialsOf", () => {
  it("leaves out the fields left blank, so providers take their defaults", () => {
    const integration = create(integrationsV1.IntegrationSchema, {
      credentials: { accountSid: "AC1", token: "secret", from: "+15550100", baseUrl: "", senderName: "" },
    });
    expect(credentialsOf(integration)).toEqual({ accountSid: "AC1", token: "secret", from: "+15550100" });
  });
});
