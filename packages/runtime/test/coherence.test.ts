import type { DescService } from "@bufbuild/protobuf";
import * as proto from "@notify/proto";
import { describe, expect, it } from "vitest";
import { announcingWrites, ChangeKind, coherenceOf, declaredAnnouncements, EVERY_KEY } from "../src/index.js";

const { commonV1, messagesV1, subscribersV1 } = proto;
// Every package the proto module exports: a new one is checked without being named here.
const packages = (Object.values(proto) as unknown[]).filter((value): value is Record<string, unknown> => typeof value === "object" && value !== null);
const services = packages.flatMap((exports) => Object.values(exports).filter((value): value is DescService => (value as DescService)?.kind === "service"));
const methods = services.flatMap((service) => service.methods.map((method) => [`${service.typeName}.${method.name}`, method] as const));

describe("the coherence every RPC declares", () => {
  it("finds every service", () => {
    expect(services.map((service) => service.name).sort()).toEqual([
      "ChannelConnectionService",
      "ContextService",
      "EnvironmentVariableService",
      "IntegrationService",
      "LayoutService",
      "LegacyLayoutService",
      "MessageService",
      "SubscriberService",
      "TenantService",
      "TopicService",
      "TriggerService",
      "WorkflowOverrideService",
      "WorkflowService",
    ]);
  });

  it.each(methods)("%s declares what it announces, or why nothing", (_, method) => {
    const coherence = coherenceOf(method);
    expect(coherence, "a method without the notify.common.v1.coherence option").toBeDefined();
    const announces = coherence!.announces.length > 0;
    const silent = coherence!.silent !== commonV1.Silence.UNSPECIFIED;
    expect(announces !== silent, "exactly one of announces and silent").toBe(true);
    // Each announcement names a kind and keys that can be read from the request.
    expect(() => declaredAnnouncements(method)).not.toThrow();
  });

  it("announces the feeds of new messages before the messages: live Inbox events rely on the order", () => {
    for (const [name, method] of methods) {
      const kinds = declaredAnnouncements(method).map((announcement) => announcement.kind);
      if (kinds.includes(ChangeKind.RECEIVED)) expect(kinds.indexOf(ChangeKind.FEEDS), name).toBe(kinds.indexOf(ChangeKind.RECEIVED) - 1);
    }
  });

  it("reads keys from the request paths declared", () => {
    const [ensure] = declaredAnnouncements(subscribersV1.SubscriberService.method.ensureSubscribers);
    expect(ensure!.keysOf({ subscribers: [{ subscriberId: "ada" }, { subscriberId: "bob" }] }, new Map())).toEqual(["ada", "bob"]);
    const [remove] = declaredAnnouncements(proto.layoutsV1.LayoutService.method.deleteLayout);
    expect(remove!.keysOf({ layoutId: "l" }, new Map())).toBe(EVERY_KEY);
    // Keys a handler names as it writes.
    const [deleted] = declaredAnnouncements(messagesV1.MessageService.method.deleteMessage);
    expect(deleted!.keysOf({ messageId: "m" }, new Map([[ChangeKind.FEEDS, ["ada"]]]))).toEqual(["ada"]);
  });

  it("refuses to serve a service whose declared announcements have no announcer", () => {
    expect(() => announcingWrites(messagesV1.MessageService, {} as never, {})).toThrow(/announces FEEDS changes/);
    expect(() => announcingWrites(messagesV1.MessageService, {} as never, { [ChangeKind.FEEDS]: async () => {} })).toThrow(/announces RECEIVED changes/);
    expect(() =>
      announcingWrites(messagesV1.MessageService, {} as never, { [ChangeKind.FEEDS]: async () => {}, [ChangeKind.RECEIVED]: async () => {} }),
    ).not.toThrow();
  });
});
