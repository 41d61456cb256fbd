import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { type deliveriesV1, integrationsV1, messagesV1, subscribersV1, topicsV1, triggersV1, variablesV1, workflowsV1 } from "@notify/proto";
import { createLogger, objectId, Ordinal, StepType, Weekday, type ServiceRegistry } from "@notify/runtime";
import { inMemoryTransport } from "@notify/testing";
import { describe, expect, it, vi } from "vitest";
import { runTriggerJobs, splitRecipients, type PipelineDeps } from "../src/pipeline.js";
import { decodeTriggerJob } from "../src/trigger-jobs.js";

const organizationId = objectId();
const environmentId = objectId();

type StepInit = MessageInitShape<typeof workflowsV1.StepSchema>;
type RecipientInit = MessageInitShape<typeof triggersV1.RecipientSchema>;

const inApp = (id: string, content = `hello from ${id}`): StepInit => ({ id, template: { type: StepType.IN_APP, content: { case: "text", value: content } } });
const delayStep = (id: string, amount: number): StepInit => ({ id, template: { type: StepType.DELAY }, metadata: { type: "regular", amount, unit: "hours" } });
const to = (...ids: string[]): RecipientInit[] => ids.map((id) => ({ kind: { case: "subscriberId", value: id } }));
const topicKey = (key: string): RecipientInit => ({ kind: { case: "topicKey", value: key } });

/** A trigger job as the triggers service publishes it: the workflow frozen into it. */
function job(options: {
  steps: StepInit[];
  to?: RecipientInit[];
  broadcast?: boolean;
  actor?: string;
  critical?: boolean;
  transactionId?: string;
  environment?: string;
  templateEngine?: workflowsV1.TemplateEngine;
}) {
  const transactionId = options.transactionId ?? `txn-${objectId()}`;
  return create(triggersV1.TriggerJobSchema, {
    triggerId: objectId(),
    organizationId,
    environmentId: options.environment ?? environmentId,
    transactionId,
    workflow: {
      id: objectId(),
      identifier: "wf",
      critical: options.critical ?? false,
      steps: options.steps,
      ...(options.templateEngine ? { templateEngine: options.templateEngine } : {}),
    },
    event: {
      name: "wf",
      to: options.to ?? [],
      transactionId,
      broadcast: options.broadcast ?? false,
      ...(options.actor ? { actor: { kind: { case: "subscriberId", value: options.actor } } } : {}),
    },
  });
}

/**
 * The services the pipeline calls, in memory: subscribers known by external id (internal id
 * `id-<external>`), topics as lists of external ids, no integrations, and every write recorded.
 */
function services(
  options: { subscribers?: string[]; topics?: Record<string, string[]>; inAppOff?: string[]; canceled?: string[]; emailIntegration?: boolean } = {},
) {
  const known = new Map<string, subscribersV1.Subscriber>();
  const calls = {
    ensured: [] as string[][],
    credentials: 0,
    pagedRecipients: 0,
    pagedMembers: [] as topicsV1.PageMembersRequest[],
    preferences: [] as subscribersV1.ResolveChannelPreferencesRequest[],
    written: [] as { stepId: string; transactionId: string; externalSubscriberId: string; content: string; topicKeys: string[] }[],
    scheduled: [] as triggersV1.ScheduledJob[],
    returned: [] as messagesV1.ReturnSnoozedMessageRequest[],
    passedDigests: [] as triggersV1.PassCanceledDigestsRequest[],
    resumedDigests: [] as string[],
    published: [] as deliveriesV1.DeliveryJob[],
    /** Step job changes, one per recipient: "<subscriber> <step> <type> <status>: <detail texts>". */
    stepJobs: [] as string[],
    /** The steps behind each delay or digest job group: "<step> <status>: <step type>, ...". */
    laterSteps: [] as string[],
    /** Transactions whose waiting step jobs were canceled. */
    canceledStepJobs: [] as string[],
    /** Holds and sends handed over, in the order they happened. */
    order: [] as string[],
  };
  const subscriberOf = (externalId: string) => {
    let subscriber = known.get(externalId);
    if (!subscriber) {
      subscriber = create(subscribersV1.SubscriberSchema, {
        id: `id-${externalId}`,
        organizationId,
        environmentId,
        subscriberId: externalId,
        email: `${externalId}@example.test`,
      });
      known.set(externalId, subscriber);
    }
    return subscriber;
  };
  for (const id of options.subscribers ?? []) subscriberOf(id);
  const recipient = (subscriber: subscribersV1.Subscriber) =>
    create(subscribersV1.RecipientSchema, { id: subscriber.id, subscriberId: subscriber.subscriberId, email: `${subscriber.subscriberId}@example.test` });
  const byInternalId = () => [...known.values()].sort((a, b) => a.id.localeCompare(b.id));

  const routes = (router: ServiceRegistry) => {
    router.service(subscribersV1.SubscriberService, {
      ensureSubscribers: (request) => {
        calls.ensured.push(request.subscribers.map((entry) => entry.subscriberId));
        return { subscribers: request.subscribers.map((entry) => subscriberOf(entry.subscriberId)) };
      },
      applyChannelCredentials: (request) => {
        calls.credentials += request.entries.length;
        return { subscribers: request.entries.map((entry) => subscriberOf(entry.subscriberId)) };
      },
      batchGetRecipients: (request) => ({
        recipients: byInternalId()
          .filter((subscriber) => request.ids.includes(subscriber.id))
          .map(recipient),
      }),
      pageRecipients: (request) => {
        calls.pagedRecipients += 1;
        const rest = byInternalId().filter((subscriber) => request.after === undefined || subscriber.id > request.after);
        const page = rest.slice(0, request.limit);
        return { recipients: page.map(recipient), ...(rest.length > request.limit ? { next: page.at(-1)!.id } : {}) };
      },
      resolveChannelPreferences: (request) => {
        calls.preferences.push(request);
        const off = (options.inAppOff ?? []).map((id) => `id-${id}`);
        return {
          critical: request.workflow?.critical ?? false,
          subscribers: request.subscriberIds
            .filter((id) => off.includes(id))
            .map((subscriberId) => ({ subscriberId, channels: { inApp: false }, globalChoices: { inApp: false } })),
          defaults: {},
        };
      },
    });
    router.service(topicsV1.TopicService, {
      getTopic: (request) => {
        if (!options.topics?.[request.key]) throw new ConnectError("no topic", Code.NotFound);
        return { id: `topic-${request.key}`, key: request.key };
      },
      pageMembers: (request) => {
        calls.pagedMembers.push(request);
        const members = [...new Set(request.topicKeys.flatMap((key) => options.topics?.[key] ?? []))]
          .filter((id) => !request.excludeSubscriberIds.includes(id))
          .map((id) => ({ internalSubscriberId: subscriberOf(id).id, externalSubscriberId: id }))
          .sort((a, b) => a.internalSubscriberId.localeCompare(b.internalSubscriberId))
          .filter((member) => request.after === undefined || member.internalSubscriberId > request.after);
        const page = members.slice(0, request.limit);
        return { members: page, ...(members.length > request.limit ? { next: page.at(-1)!.internalSubscriberId } : {}) };
      },
    });
    router.service(triggersV1.TriggerService, {
      getCanceledTriggers: (request) => ({ transactionIds: request.transactionIds.filter((id) => options.canceled?.includes(id)) }),
      passCanceledDigests: (request) => {
        calls.passedDigests.push(request);
        // Each digest passes to the trigger of the next event in it.
        return { passedDigests: request.digestIds.map((id) => ({ transactionId: `txn-next-${id}`, subscriberId: "id-bob", stepId: "digest" })) };
      },
      scheduleJobs: (request) => {
        calls.scheduled.push(...request.jobs);
        calls.order.push(...request.jobs.filter((job) => job.holdKey).map((job) => `hold ${job.holdKey}`));
        return {};
      },
    });
    router.service(integrationsV1.IntegrationService, {
      listIntegrations: () => ({
        integrations: options.emailIntegration
          ? [
              { id: "integration-off", providerId: "sendgrid", channel: "email", active: false },
              { id: "integration-mail", providerId: "nodemailer", channel: "email", active: true },
            ]
          : [],
      }),
      selectIntegration: (request) => {
        if (options.emailIntegration && request.channel === "email") {
          return { integration: { id: "integration-mail", providerId: "nodemailer", channel: "email", active: true } };
        }
        throw new ConnectError("no integration", Code.NotFound);
      },
    });
    router.service(messagesV1.MessageService, {
      createMessages: (request) => {
        for (const group of request.groups) {
          for (const to of group.recipients) {
            const message = group.message!;
            const content = message.content.case === "text" ? message.content.value : "";
            const topicKeys = (message.notification?.topics ?? []).map((topic) => `${topic.topicKey}=${topic.topicId}`);
            calls.written.push({
              stepId: message.stepId,
              transactionId: message.transactionId,
              externalSubscriberId: to.externalSubscriberId,
              content,
              topicKeys,
            });
          }
        }
        for (const message of request.messages) {
          const content = message.content.case === "text" ? message.content.value : "";
          const topicKeys = (message.notification?.topics ?? []).map((topic) => `${topic.topicKey}=${topic.topicId}`);
          calls.written.push({
            stepId: message.stepId,
            transactionId: message.transactionId,
            externalSubscriberId: message.externalSubscriberId,
            content,
            topicKeys,
          });
        }
        return {
          createdCount: request.messages.length + request.groups.reduce((sum, group) => sum + group.recipients.length, 0),
          messages: request.messages.map(() => ({ id: objectId() })),
        };
      },
      cancelStepJobs: (request) => {
        calls.canceledStepJobs.push(request.transactionId);
        return { canceled: 1 };
      },
      resumeDigestJobs: (request) => {
        calls.resumedDigests.push(...request.digests.map((digest) => `${digest.transactionId} ${digest.subscriberId} ${digest.stepId}`));
        return { resumed: request.digests.length };
      },
      recordStepJobs: (request) => {
        for (const group of request.groups) {
          const details = group.details.map((detail) => detail.detail).join(", ");
          for (const to of group.recipients) calls.stepJobs.push(`${to.externalSubscriberId} ${group.stepId} ${group.type} ${group.status}: ${details}`);
          if (group.type === "delay" || group.type === "digest") {
            calls.laterSteps.push(
              `${group.stepId} ${group.status}: ${group.later.map((step) => `${step.stepId} ${step.type}${step.providerId ? ` (${step.providerId})` : ""}`).join(", ")}`,
            );
          }
        }
        return { changed: request.groups.length };
      },
      returnSnoozedMessage: (request) => {
        calls.returned.push(request);
        return { returned: true };
      },
    });
  };
  const transport = inMemoryTransport(routes);
  const deps: PipelineDeps = {
    clients: {
      triggers: createClient(triggersV1.TriggerService, transport),
      subscribers: createClient(subscribersV1.SubscriberService, transport),
      topics: createClient(topicsV1.TopicService, transport),
      integrations: createClient(integrationsV1.IntegrationService, transport),
      variables: createClient(variablesV1.EnvironmentVariableService, transport),
      messages: createClient(messagesV1.MessageService, transport),
    },
    log: createLogger("test", "silent"),
    pageSize: 2,
    pagesInFlight: 2,
    // Only an environment with an email integration sends: nothing else is handed to the delivery stage.
    publishDeliveries: async (pages) => {
      const jobs = pages.flatMap((page) => page.jobs);
      if (jobs.length > 0 && !options.emailIntegration) throw new Error(`unexpected sends: ${jobs.length}`);
      calls.published.push(...jobs);
      calls.order.push(...jobs.map((job) => `send ${job.continuationKey}`));
      return [];
    },
  };
  return { deps, calls };
}

const recipientsOf = (written: { externalSubscriberId: string }[]) => written.map((message) => message.externalSubscriberId).sort();

describe("splitRecipients", () => {
  it("de-duplicates named subscribers (an object's fields win over a bare id), keeps topics apart and collects channel credentials", () => {
    const ada: RecipientInit = {
      kind: {
        case: "subscriber",
        value: {
          subscriberId: "ada",
          fields: { firstName: "Ada" },
          channels: [{ providerId: "slack", credentials: { webhookUrl: "https://hooks.example/ada" } }],
        },
      },
    };
    const split = splitRecipients(
      [...to("ada"), ada, ...to("ada", "bob"), topicKey("news"), topicKey("news")].map((init) => create(triggersV1.RecipientSchema, init)),
    );
    expect(split.direct.map((entry) => entry.subscriberId)).toEqual(["ada", "bob"]);
    expect(split.direct[0]!.fields?.firstName).toBe("Ada");
    expect(split.direct[1]!.fields).toBeUndefined();
    expect(split.topicKeys).toEqual(["news"]);
    expect(split.credentials).toEqual([{ subscriberId: "ada", providerId: "slack", credentials: { webhookUrl: "https://hooks.example/ada" } }]);
  });

  it("lets the last object of a repeated id carry the credentials", () => {
    const object = (url: string): RecipientInit => ({
      kind: { case: "subscriber", value: { subscriberId: "ada", channels: [{ providerId: "slack", credentials: { webhookUrl: url } }] } },
    });
    const split = splitRecipients(
      [object("https://hooks.example/1"), object("https://hooks.example/2")].map((init) => create(triggersV1.RecipientSchema, init)),
    );
    expect(split.credentials.map((entry) => entry.credentials.webhookUrl)).toEqual(["https://hooks.example/2"]);
  });
});

describe("runTriggerJobs", () => {
  it("runs the jobs of one environment together: one upsert of everyone named, one message per recipient and step", async () => {
    const { deps, calls } = services();
    const first = job({ steps: [inApp("s1")], to: to("ada", "bob"), actor: "cy" });
    const second = job({ steps: [inApp("s2")], to: to("bob") });
    const totals = await runTriggerJobs([first, second], deps);

    expect(totals).toEqual({ subscribers: 3, messages: 3 });
    expect(calls.ensured).toEqual([["cy", "ada", "bob"]]);
    expect(calls.written.filter((message) => message.stepId === "s1").map((message) => message.externalSubscriberId)).toEqual(["ada", "bob"]);
    expect(calls.written.filter((message) => message.stepId === "s2").map((message) => message.externalSubscriberId)).toEqual(["bob"]);
  });

  it("renders the step for each subscriber and takes other environments apart", async () => {
    const { deps, calls } = services();
    const elsewhere = objectId();
    const totals = await runTriggerJobs(
      [job({ steps: [inApp("s", "Hi {{subscriber.subscriberId}}")], to: to("ada") }), job({ steps: [inApp("s")], to: to("bob"), environment: elsewhere })],
      deps,
    );
    expect(totals.messages).toBe(2);
    expect(calls.ensured).toHaveLength(2);
    expect(calls.written.find((message) => message.externalSubscriberId === "ada")?.content).toBe("Hi ada");
  });

  it("fails the rest of a job whose template loops without bound once its rendering budget is spent, on every page, and no other job", async () => {
    const subscribers = Array.from({ length: 16 }, (_, index) => `sub-${index}`);
    const { deps, calls } = services({ subscribers });
    const warn = vi.spyOn(deps.log, "warn");
    const looping = "{% for i in (1..5000) %}{% for j in (1..5000) %}{{ i }}{% endfor %}{% endfor %}";
    await runTriggerJobs(
      [
        job({ steps: [inApp("runaway", looping)], broadcast: true, templateEngine: workflowsV1.TemplateEngine.LIQUID }),
        job({ steps: [inApp("fine", "Hi {{ subscriber.subscriberId }}")], to: to("bob"), templateEngine: workflowsV1.TemplateEngine.LIQUID }),
      ],
      deps,
    );
    expect(calls.written.filter((message) => message.stepId === "runaway")).toEqual([]);
    expect(calls.written.find((message) => message.stepId === "fine")?.content).toBe("Hi bob");
    // A few renders ran into their time limit; then the job's budget was spent, which is said once,
    // and the other subscribers' renders failed without running (pages of 2: the budget is the job's).
    const said = warn.mock.calls.map((call) => String(call[1]));
    expect(said.at(-1)).toMatch(/took too long to render: its other renders fail without running/);
    expect(said.slice(0, -1).every((line) => line === "step failed to render")).toBe(true);
    expect(said.length).toBeLessThan(subscribers.length);
  });

  it("charges step conditions to the job's rendering budget: a rule over a huge payload list stops the job's step, not the worker", async () => {
    const subscribers = Array.from({ length: 16 }, (_, index) => `sub-${index}`);
    const { deps, calls } = services({ subscribers });
    const warn = vi.spyOn(deps.log, "warn");
    // Each evaluation adds up the whole list: far more than a subscriber's share of the budget.
    const sumIsPositive = { ">": [{ reduce: [{ var: "payload.list" }, { "+": [{ var: "current" }, { var: "accumulator" }] }, 0] }, 0] };
    const heavy = job({ steps: [{ ...inApp("heavy"), conditions: sumIsPositive }], broadcast: true, templateEngine: workflowsV1.TemplateEngine.LIQUID });
    heavy.event!.payload = { list: Array.from({ length: 500_000 }, (_, index) => index + 1) };
    await runTriggerJobs([heavy, job({ steps: [inApp("fine")], to: to("bob") })], deps);
    // The broadcast reaches the 16 and bob: the first few pass, then the budget is spent.
    expect(calls.written.filter((message) => message.stepId === "heavy").length).toBeLessThan(subscribers.length);
    expect(calls.written.filter((message) => message.stepId === "fine")).toHaveLength(1);
    const said = warn.mock.calls.map((call) => String(call[1]));
    expect(said.filter((line) => /took too long to render/.test(line))).toHaveLength(1);
  });

  it("fails a step whose filter value does not render for each subscriber, not the job or its neighbours", async () => {
    const { deps, calls } = services();
    const warn = vi.spyOn(deps.log, "warn");
    // Stored before filter values were checked at write: rendering it throws.
    const filtered: StepInit = {
      id: "filtered",
      template: { type: StepType.IN_APP, content: { case: "text", value: "filtered" } },
      filters: [{ type: "STATEMENT", value: "AND", children: [{ field: "plan", value: "{{#if x}}", operator: "EQUAL", on: "payload" }] }],
    };
    const totals = await runTriggerJobs(
      [job({ steps: [filtered, inApp("after")], to: to("ada", "bob") }), job({ steps: [inApp("other")], to: to("cy") })],
      deps,
    );
    expect(totals.messages).toBe(3);
    expect(calls.written.map((message) => message.stepId).sort()).toEqual(["after", "after", "other"]);
    expect(warn.mock.calls.filter((call) => call[1] === "step failed to render")).toHaveLength(2);
  });

  it("runs a snooze's end as its message's return, with no step, even for a canceled transaction", async () => {
    const { deps, calls } = services({ canceled: ["txn-snoozed"] });
    const snoozedUntil = timestampFromDate(new Date());
    const ending = create(triggersV1.TriggerJobSchema, {
      triggerId: "6a0000000000000000000001",
      organizationId: objectId(),
      environmentId: objectId(),
      transactionId: "txn-snoozed",
      snoozeReturn: { messageId: "6a0000000000000000000001", snoozedUntil },
    });
    const totals = await runTriggerJobs([ending, job({ steps: [inApp("s")], to: to("ada") })], deps);
    expect(totals).toEqual({ subscribers: 1, messages: 1 });
    expect(calls.returned).toEqual([expect.objectContaining({ messageId: "6a0000000000000000000001", snoozedUntil })]);
  });

  it("drops a trigger canceled after it was published", async () => {
    const { deps, calls } = services({ canceled: ["txn-canceled"] });
    const totals = await runTriggerJobs([job({ steps: [inApp("s")], to: to("ada"), transactionId: "txn-canceled" })], deps);
    expect(totals).toEqual({ subscribers: 0, messages: 0 });
    expect(calls.ensured).toEqual([]);
    expect(calls.written).toEqual([]);
  });

  it("passes on the digests of a canceled trigger's digest run, and runs none of it", async () => {
    const { deps, calls } = services({ canceled: ["txn-digest", "txn-delay"] });
    const digestRun = job({ steps: [inApp("s")], transactionId: "txn-digest" });
    digestRun.resumption = create(triggersV1.ResumptionSchema, { subscriberIds: ["id-ada"], fromStep: 0, digestIds: ["7"], digestRun: true });
    // A later resumption of a digest's run (after a delay) names the digest too, but ran it already.
    const delayRun = job({ steps: [inApp("s")], transactionId: "txn-delay" });
    delayRun.resumption = create(triggersV1.ResumptionSchema, { subscriberIds: ["id-ada"], fromStep: 0, digestIds: ["8"] });
    expect(await runTriggerJobs([digestRun, delayRun], deps)).toEqual({ subscribers: 0, messages: 0 });
    expect(calls.written).toEqual([]);
    expect(calls.passedDigests.map(({ transactionId, digestIds }) => ({ transactionId, digestIds }))).toEqual([
      { transactionId: "txn-digest", digestIds: ["7"] },
    ]);
    // The next event's merged digest job waits again.
    expect(calls.resumedDigests).toEqual(["txn-next-7 id-bob digest"]);
    // Each wait that ends here without going on shows canceled, also when it was recorded after the cancel.
    expect(calls.canceledStepJobs).toEqual(["txn-digest", "txn-delay"]);
  });

  it("leaves out the channels a subscriber turned off, asking once per workflow with the job's snapshot of it", async () => {
    const { deps, calls } = services({ inAppOff: ["bob"] });
    const run = job({ steps: [inApp("s")], to: to("ada", "bob"), critical: true });
    await runTriggerJobs([run], deps);

    expect(recipientsOf(calls.written)).toEqual(["ada"]);
    // Bob's in-app job shows which of his choices turned it off.
    expect(calls.stepJobs).toEqual(["bob s in_app canceled: Step queued, Step filtered by subscriber global preferences"]);
    expect(calls.preferences).toHaveLength(1);
    expect(calls.preferences[0]).toMatchObject({ workflowId: run.workflow!.id, subscriberIds: ["id-ada", "id-bob"], workflow: { critical: true } });
  });

  it("keeps on a delay's job the provider each channel step behind it carries: the environment's oldest active integration of its channel", async () => {
    const { deps, calls } = services({ emailIntegration: true });
    const mail: StepInit = { id: "mail", template: { type: StepType.EMAIL, subject: "Hi", content: { case: "text", value: "Hi" } } };
    const sms: StepInit = { id: "text", template: { type: StepType.SMS, content: { case: "text", value: "Hi" } } };
    await runTriggerJobs([job({ steps: [delayStep("wait", 2), mail, sms, inApp("after")], to: to("ada") })], deps);
    expect(calls.laterSteps).toEqual(["wait delayed: mail email (nodemailer), text sms, after in_app"]);
  });

  it("stops at a delay, schedules the rest for the paused subscribers, and the resumed job runs only the steps after it", async () => {
    const { deps, calls } = services();
    const steps = [inApp("before"), delayStep("wait", 2), inApp("after"), { ...inApp("off"), active: false }];
    const started = Date.now();
    await runTriggerJobs([job({ steps, to: to("ada", "bob") })], deps);

    expect(calls.written.map((message) => message.stepId)).toEqual(["before", "before"]);
    // Each run's delay job waits, as Novu's activity shows it, with the active steps behind it.
    expect(calls.stepJobs).toEqual(["ada wait delay delayed: Step delayed, Step queued", "bob wait delay delayed: Step delayed, Step queued"]);
    expect(calls.laterSteps).toEqual(["wait delayed: after in_app"]);
    expect(calls.scheduled).toHaveLength(1);
    const scheduled = calls.scheduled[0]!;
    expect(scheduled.job?.resumption).toMatchObject({ subscriberIds: ["id-ada", "id-bob"], fromStep: 2, digestIds: [] });
    const runAt = timestampDate(scheduled.runAt!).getTime();
    expect(runAt).toBeGreaterThanOrEqual(started + 2 * 3_600_000);
    expect(runAt).toBeLessThanOrEqual(Date.now() + 2 * 3_600_000);

    calls.written.length = 0;
    calls.stepJobs.length = 0;
    const totals = await runTriggerJobs([scheduled.job!], deps);
    expect(totals).toEqual({ subscribers: 2, messages: 2 });
    expect(calls.written.map((message) => message.stepId)).toEqual(["after", "after"]);
    expect(calls.stepJobs).toEqual(["ada wait delay completed: Delay is finished", "bob wait delay completed: Delay is finished"]);
    expect(calls.scheduled).toHaveLength(1);
  });

  it("holds the rest after a send that stops on failure before handing the sends over, under a key each send carries", async () => {
    const { deps, calls } = services({ emailIntegration: true });
    const mail: StepInit = { id: "mail", shouldStopOnFail: true, template: { type: StepType.EMAIL, subject: "Hi", content: { case: "text", value: "Hi" } } };
    const trigger = job({ steps: [mail, inApp("after")], to: to("ada", "bob") });
    await runTriggerJobs([trigger], deps);

    expect(calls.written.map((message) => message.stepId)).toEqual(["mail", "mail"]);
    const keys = [`${trigger.triggerId}:1:id-ada:`, `${trigger.triggerId}:1:id-bob:`];
    expect(calls.order).toEqual([...keys.map((key) => `hold ${key}`), ...keys.map((key) => `send ${key}`)]);
    expect(calls.scheduled.map((held) => [held.holdKey, held.runAt, held.job?.resumption?.subscriberIds, held.job?.resumption?.fromStep])).toEqual([
      [keys[0], undefined, ["id-ada"], 1],
      [keys[1], undefined, ["id-bob"], 1],
    ]);
    // The sends carry the key only, not the rest of the run.
    expect(calls.published.every((send) => send.continuation === undefined)).toBe(true);
  });

  it("runs a step only when its own filters pass, then sends the first variant whose filters pass, as Novu does", async () => {
    const { deps, calls } = services();
    const on = (field: string, value: string) => [{ type: "STATEMENT", value: "AND", children: [{ field, value, operator: "EQUAL", on: "payload" }] }];
    const step: StepInit = {
      id: "greeting",
      template: { type: StepType.IN_APP, content: { case: "text", value: "Hello" } },
      filters: on("plan", "pro"),
      variants: [{ id: "german", template: { type: StepType.IN_APP, content: { case: "text", value: "Hallo" } }, filters: on("lang", "de") }],
    };
    const contentFor = async (payload: Record<string, string>) => {
      calls.written.length = 0;
      calls.stepJobs.length = 0;
      const trigger = job({ steps: [step], to: to("ada") });
      trigger.event!.payload = payload;
      await runTriggerJobs([trigger], deps);
      return calls.written.map((message) => message.content);
    };
    expect(await contentFor({ plan: "free", lang: "de" })).toEqual([]);
    // Skipped by its filters: its job shows why nothing was sent.
    expect(calls.stepJobs).toEqual(["ada greeting in_app canceled: Step queued, Step was skipped based on steps conditions"]);
    expect(await contentFor({ plan: "pro", lang: "de" })).toEqual(["Hallo"]);
    expect(calls.stepJobs).toEqual([]);
    expect(await contentFor({ plan: "pro", lang: "en" })).toEqual(["Hello"]);
  });

  it("records a v2 step its skip conditions skipped as Novu's bridge says it, and a step its v1 filters skipped as its filters", async () => {
    const { deps, calls } = services();
    const gated: StepInit = { ...inApp("gated"), conditions: { "==": [{ var: "payload.plan" }, "pro"] } };
    const trigger = job({ steps: [gated], to: to("ada"), templateEngine: workflowsV1.TemplateEngine.LIQUID });
    trigger.event!.payload = { plan: "free" };
    await runTriggerJobs([trigger], deps);
    expect(calls.written).toEqual([]);
    expect(calls.stepJobs).toEqual(["ada gated in_app canceled: Step queued, Bridge execution skipped"]);
  });

  it("stops the run at a chat or push step that stops on failure and has nowhere to send, as Novu fails it", async () => {
    const { deps, calls } = services();
    const push = (shouldStopOnFail: boolean): StepInit => ({
      id: `push-${shouldStopOnFail}`,
      shouldStopOnFail,
      template: { type: StepType.PUSH, title: "T", content: { case: "text", value: "P" } },
    });
    await runTriggerJobs([job({ steps: [push(true), inApp("after")], to: to("ada") })], deps);
    expect(calls.written).toEqual([]);
    await runTriggerJobs([job({ steps: [push(false), inApp("after")], to: to("ada") })], deps);
    expect(calls.written.map((message) => message.stepId)).toEqual(["after"]);
  });

  it("runs a job queued before step types, weekdays and ordinals were enums, and schedules its rest in the enums", async () => {
    const { deps, calls } = services();
    // Captured from that build: in-app (with an in-app variant), delay 1 hour, a timed digest on the
    // last weekday of the month (weekDays monday, friday), email; to ada, payload { name: "Ada" }.
    const queuedBefore = Buffer.from(
      "Chg2NWExYjJjM2Q0ZTVmNjA3MTgyOTNhZmYSA09SRxoDRU5WIgd0eG4tb2xkKikKBmxlZ2FjeRIFCgNhZGEaDwoNCgRuYW1lEgUaA0FkYSoHdHhuLW9sZDKWBQoYNjVhMWIyYzNkNGU1ZjYwNzE4MjkzYTAwYt4BChg2NWExYjJjM2Q0ZTVmNjA3MTgyOTNhMDESAnUxIAEyMgoYNjVhMWIyYzNkNGU1ZjYwNzE4MjkzYTAxEgZpbl9hcHAaDkhlbGxvIHt7bmFtZX19WocBChg2NWExYjJjM2Q0ZTVmNjA3MTgyOTNhMDISAnUyIAEyNgoYNjVhMWIyYzNkNGU1ZjYwNzE4MjkzYTAyEgZpbl9hcHAaEkhlbGxvIFZJUCB7e25hbWV9fTotEglTVEFURU1FTlQaA0FORCIbCgN2aXASBHRydWUaBUVRVUFMIgdwYXlsb2FkYngKGDY1YTFiMmMzZDRlNWY2MDcxODI5M2EwNRICdTUgATIhChg2NWExYjJjM2Q0ZTVmNjA3MTgyOTNhMDUSBWRlbGF5Qhg2NWExYjJjM2Q0ZTVmNjA3MTgyOTNhMDFKGQoHcmVndWxhchEAAAAAAADwPxoFaG91cnNipAEKGDY1YTFiMmMzZDRlNWY2MDcxODI5M2EwMxICdTMgATIiChg2NWExYjJjM2Q0ZTVmNjA3MTgyOTNhMDMSBmRpZ2VzdEIYNjVhMWIyYzNkNGU1ZjYwNzE4MjkzYTA1SkQKBXRpbWVkEQAAAAAAAPA/GgZtb250aHNKKgoFMDk6MzASBm1vbmRheRIGZnJpZGF5IgRsYXN0Kgd3ZWVrZGF5MgJvbmJwChg2NWExYjJjM2Q0ZTVmNjA3MTgyOTNhMDQSAnU0IAEyNAoYNjVhMWIyYzNkNGU1ZjYwNzE4MjkzYTA0EgVlbWFpbBoNTWFpbCB7e25hbWV9fTICSGlCGDY1YTFiMmMzZDRlNWY2MDcxODI5M2EwM2oGbGVnYWN5",
      "base64",
    );
    const totals = await runTriggerJobs([decodeTriggerJob(queuedBefore)], deps);

    expect(totals.messages).toBe(1);
    expect(calls.written).toEqual([expect.objectContaining({ stepId: "65a1b2c3d4e5f60718293a01", externalSubscriberId: "ada", content: "Hello Ada" })]);
    const rest = calls.scheduled[0]!.job!;
    expect(rest.resumption).toMatchObject({ subscriberIds: ["id-ada"], fromStep: 2 });
    const steps = rest.workflow!.steps;
    expect(steps.map((step) => step.template?.type)).toEqual([StepType.IN_APP, StepType.DELAY, StepType.DIGEST, StepType.EMAIL]);
    expect(steps[0]!.variants[0]!.template?.type).toBe(StepType.IN_APP);
    expect(steps[2]!.metadata?.timed).toMatchObject({
      weekDays: [Weekday.MONDAY, Weekday.FRIDAY],
      ordinal: Ordinal.LAST,
      ordinalDays: [Weekday.MONDAY, Weekday.TUESDAY, Weekday.WEDNESDAY, Weekday.THURSDAY, Weekday.FRIDAY],
      legacyWeekDays: [],
    });
    expect(steps[2]!.metadata?.timed?.legacyOrdinal).toBeUndefined();
    expect(steps.map((step) => step.template?.legacyType)).toEqual(["", "", "", ""]);
  });

  it("fans a broadcast out page by page to every subscriber of the environment", async () => {
    const { deps, calls } = services({ subscribers: ["a", "b", "c", "d", "e"] });
    const totals = await runTriggerJobs([job({ steps: [inApp("s")], broadcast: true })], deps);

    expect(totals).toEqual({ subscribers: 5, messages: 5 });
    expect(calls.pagedRecipients).toBe(3);
    expect(recipientsOf(calls.written)).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("fans a topic out to its members less the recipients named individually and the actor", async () => {
    const { deps, calls } = services({ topics: { news: ["ada", "bob", "cy", "dee", "eve"] } });
    const totals = await runTriggerJobs([job({ steps: [inApp("s")], to: [topicKey("news"), topicKey("gone"), ...to("ada")], actor: "bob" })], deps);

    expect(recipientsOf(calls.written)).toEqual(["ada", "cy", "dee", "eve"]);
    // Their notifications keep the trigger's topics (those that exist), but the one it named itself.
    expect(Object.fromEntries(calls.written.map((message) => [message.externalSubscriberId, message.topicKeys]))).toEqual({
      ada: [],
      cy: ["news=topic-news"],
      dee: ["news=topic-news"],
      eve: ["news=topic-news"],
    });
    expect(totals).toEqual({ subscribers: 4, messages: 4 });
    expect(calls.pagedMembers.map((request) => request.excludeSubscriberIds)).toEqual([
      ["ada", "bob"],
      ["ada", "bob"],
    ]);
    expect(calls.pagedMembers.every((request) => request.topicKeys.join() === "news,gone" && request.limit === 2)).toBe(true);
  });
});
