import { create } from "@bufbuild/protobuf";
import { subscribersV1 } from "@notify/proto";
import { describe, expect, it } from "vitest";
import { MAX_DEVICE_TOKENS, channelWriteErrors, mergeChannel, tokenLimitErrors } from "../src/channels.js";
import type { StoredChannel } from "../src/store.js";

const credentials = (init: Parameters<typeof create<typeof subscribersV1.CredentialsUpdateSchema>>[1]) => create(subscribersV1.CredentialsUpdateSchema, init);
const tokens = (...list: string[]) => ({ deviceTokens: { tokens: list } });

const fcm = (deviceTokens: string[], integrationId = "i1"): StoredChannel => ({ providerId: "fcm", integrationId, credentials: { deviceTokens } });

describe("channel credential rules", () => {
  it("appends tokens as an ordered union without duplicates", () => {
    const { channels } = mergeChannel([fcm(["a", "b"])], { providerId: "fcm", credentials: credentials(tokens("b", "c", "c", "a", "d")) }, "i1", false);
    expect(channels).toEqual([fcm(["a", "b", "c", "d"])]);
  });

  it("clears tokens on an explicit empty list, keeps them when none are given, replaces them in replace mode", () => {
    const stored = [fcm(["a", "b"])];
    expect(mergeChannel(stored, { providerId: "fcm", credentials: credentials(tokens()) }, "i1", false).channels).toEqual([fcm([])]);
    expect(mergeChannel(stored, { providerId: "fcm", credentials: credentials({}) }, "i1", false).channels).toEqual(stored);
    expect(mergeChannel(stored, { providerId: "fcm", credentials: credentials(tokens("c", "c")) }, "i1", true).channels).toEqual([fcm(["c"])]);
  });

  it("replaces webhookUrl, channel and the Grafana fields, keeping the others", () => {
    const stored: StoredChannel[] = [
      { providerId: "grafana-on-call", integrationId: "g", credentials: { webhookUrl: "https://old", title: "Old", state: "ok", deviceTokens: [] } },
    ];
    const { channels } = mergeChannel(
      stored,
      { providerId: "grafana-on-call", credentials: credentials({ webhookUrl: "https://new", title: "New", alertUid: "u1", externalUrl: "https://x" }) },
      "g",
      false,
    );
    expect(channels[0]!.credentials).toEqual({
      webhookUrl: "https://new",
      title: "New",
      state: "ok",
      alertUid: "u1",
      externalUrl: "https://x",
      deviceTokens: [],
    });
  });

  it("keeps a channel per provider and integration, appending new ones and remembering the identifier", () => {
    const first = mergeChannel([], { providerId: "fcm", integrationIdentifier: "fcm-a", credentials: credentials(tokens("a")) }, "i1", false);
    const second = mergeChannel(first.channels, { providerId: "fcm", credentials: credentials(tokens("b")) }, "i2", false);
    expect(second.channels).toEqual([
      { providerId: "fcm", integrationId: "i1", integrationIdentifier: "fcm-a", credentials: { deviceTokens: ["a"] } },
      fcm(["b"], "i2"),
    ]);
    const again = mergeChannel(second.channels, { providerId: "fcm", credentials: credentials(tokens("c")) }, "i1", false);
    expect(again.merged).toEqual({ providerId: "fcm", integrationId: "i1", integrationIdentifier: "fcm-a", credentials: { deviceTokens: ["a", "c"] } });
  });

  it("refuses a merge beyond the token limit", () => {
    const full = fcm(Array.from({ length: MAX_DEVICE_TOKENS }, (_, index) => `t${index}`));
    expect(tokenLimitErrors(full)).toEqual({});
    const { merged } = mergeChannel([full], { providerId: "fcm", credentials: credentials(tokens("one-more")) }, "i1", false);
    expect(Object.keys(tokenLimitErrors(merged))).toEqual(["credentials.deviceTokens"]);
  });

  it.each([
    ["an unknown provider", { providerId: "sendgrid" }, "providerId"],
    ["a blank identifier", { providerId: "slack", integrationIdentifier: " " }, "integrationIdentifier"],
    ["a relative webhook URL", { providerId: "slack", credentials: credentials({ webhookUrl: "/hooks/1" }) }, "credentials.webhookUrl"],
    ["a non-http webhook URL", { providerId: "slack", credentials: credentials({ webhookUrl: "ftp://example.com/x" }) }, "credentials.webhookUrl"],
    ["101 tokens", { providerId: "fcm", credentials: credentials(tokens(...Array.from({ length: 101 }, (_, i) => `t${i}`))) }, "credentials.deviceTokens"],
    ["an empty token", { providerId: "fcm", credentials: credentials(tokens("")) }, "credentials.deviceTokens"],
    ["a token over 4096 characters", { providerId: "fcm", credentials: credentials(tokens("x".repeat(4097))) }, "credentials.deviceTokens"],
  ])("rejects %s", (_, write, field) => {
    expect(Object.keys(channelWriteErrors(write))).toEqual([field]);
  });

  it("accepts every provider of the list, novu-slack included, and tokens at the limits", () => {
    for (const providerId of ["slack", "novu-slack", "pusher-beams", "grafana-on-call", "apns"]) {
      expect(channelWriteErrors({ providerId, credentials: credentials({ webhookUrl: "http://hooks.example.com/1" }) })).toEqual({});
    }
    const limits = credentials(tokens(...Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(4096, "x"))));
    expect(channelWriteErrors({ providerId: "fcm", credentials: limits })).toEqual({});
  });
});
