import { fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { triggersV1, workflowsV1 } from "@notify/proto";
import { StepType } from "@notify/runtime";
import { inMemoryTransport } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callAs, inMemoryClients, newScope, openDatabase, serviceRoutes, type Fixture } from "./fixtures.js";

let fixture: Fixture;
let triggers: ReturnType<typeof createClient<typeof triggersV1.TriggerService>>;
let clients: ReturnType<typeof inMemoryClients>;
beforeAll(async () => {
  fixture = await openDatabase();
  triggers = createClient(triggersV1.TriggerService, inMemoryTransport(serviceRoutes(fixture.pool)));
  clients = inMemoryClients(fixture.pool);
});
afterAll(() => fixture?.close());

describe("TriggerBatch", () => {
  it("writes one outbox job per accepted event, each carrying its event and the workflow as it runs", async () => {
    const call = callAs(newScope());
    const orders = await clients.workflows.createWorkflow(
      { name: "Orders", active: true, tags: ["shop"], steps: [{ template: { type: StepType.IN_APP, content: { case: "text", value: "Order {{n}}" } } }] },
      call,
    );
    const news = await clients.workflows.createWorkflow(
      { name: "News", active: true, steps: [{ template: { type: StepType.EMAIL, content: { case: "text", value: "Hi" }, subject: "News" } }] },
      call,
    );
    const to = [{ kind: { case: "subscriberId" as const, value: "ada" } }];
    const reply = await triggers.triggerBatch(
      {
        events: [
          { name: orders.identifier, to, payload: { n: 1 } },
          { name: news.identifier, to, payload: { n: 2 } },
          { name: orders.identifier, to, payload: { n: 3 } },
        ],
      },
      call,
    );
    const transactionIds = reply.outcomes.map((outcome) => (outcome.outcome.case === "result" ? outcome.outcome.value.transactionId : undefined));
    const { rows } = await fixture.pool.query<{ job: Buffer }>("SELECT job FROM triggers.outbox ORDER BY id");
    const jobs = rows.map((row) => fromBinary(triggersV1.TriggerJobSchema, row.job)).filter((job) => transactionIds.includes(job.transactionId));
    expect(jobs.map((job) => [job.event!.payload, job.workflow!.id])).toEqual([
      [{ n: 1 }, orders.id],
      [{ n: 2 }, news.id],
      [{ n: 3 }, orders.id],
    ]);
    expect(jobs[2]!.workflow).toEqual(jobs[0]!.workflow);
    expect(jobs[1]!.workflow!.steps[0]!.template).toMatchObject({ type: StepType.EMAIL, subject: "News" });
    // What runs read, and nothing of the catalogue's descriptive fields.
    expect(jobs[0]!.workflow).toMatchObject({
      id: orders.id,
      identifier: orders.identifier,
      critical: false,
      preferenceSettings: orders.preferenceSettings,
      steps: orders.steps,
      tags: ["shop"],
    });
    expect(jobs[0]!.workflow).toMatchObject({ name: "", slug: "", organizationId: "", variables: [] });
    expect(jobs[0]!.workflow!.createdAt).toBeUndefined();
  });

  it("notifies recipients whose id breaks Novu's rule, as Novu's dry run does, and drops them when the rule is enforced", async () => {
    const call = callAs(newScope());
    const workflow = await clients.workflows.createWorkflow(
      { name: "Ids", active: true, steps: [{ template: { type: StepType.IN_APP, content: { case: "text", value: "Hi" } } }] },
      call,
    );
    const to = ["auth0|5f7c8e", "ok-one", " "].map((value) => ({ kind: { case: "subscriberId" as const, value } }));
    const resultOf = async (client: typeof triggers) => {
      const [outcome] = (await client.triggerBatch({ events: [{ name: workflow.identifier, to }] }, call)).outcomes;
      if (outcome!.outcome.case !== "result") throw new Error("the trigger was refused");
      const { rows } = await fixture.pool.query<{ job: Buffer }>(
        "SELECT o.job FROM triggers.outbox o JOIN triggers.trigger_records r ON r.id = o.trigger_id WHERE r.transaction_id = $1",
        [outcome!.outcome.value.transactionId],
      );
      const recipients = rows.flatMap((row) => fromBinary(triggersV1.TriggerJobSchema, row.job).event!.to.map((recipient) => recipient.kind.value));
      return { status: outcome!.outcome.value.status, error: outcome!.outcome.value.error, recipients };
    };
    // An empty id names no subscriber in either mode.
    expect(await resultOf(triggers)).toEqual({ status: "processed", error: ["Invalid recipient:  "], recipients: ["auth0|5f7c8e", "ok-one"] });
    const enforcing = createClient(triggersV1.TriggerService, inMemoryTransport(serviceRoutes(fixture.pool, { enforceRecipientIds: true })));
    expect(await resultOf(enforcing)).toEqual({
      status: "processed",
      error: ["Invalid recipient: auth0|5f7c8e", "Invalid recipient:  "],
      recipients: ["ok-one"],
    });
  });

  it("sees a workflow's status, rename and deletion at once, though an earlier trigger kept it", async () => {
    const transport = inMemoryTransport(serviceRoutes(fixture.pool));
    const workflows = createClient(workflowsV1.WorkflowService, transport);
    const process = createClient(triggersV1.TriggerService, transport);
    const call = callAs(newScope());
    const workflow = await workflows.createWorkflow(
      { name: "Kept", active: true, steps: [{ template: { type: StepType.IN_APP, content: { case: "text", value: "Hi" } } }] },
      call,
    );
    const outcomeOf = async (name: string) => {
      const [outcome] = (await process.triggerBatch({ events: [{ name, to: [{ kind: { case: "subscriberId", value: "ada" } }] }] }, call)).outcomes;
      return outcome!.outcome.case === "result" ? outcome!.outcome.value.status : outcome!.outcome.value?.message;
    };
    expect(await outcomeOf(workflow.identifier)).toBe("processed");
    await workflows.setWorkflowStatus({ workflowId: workflow.id, active: false }, call);
    expect(await outcomeOf(workflow.identifier)).toBe("trigger_not_active");
    await workflows.setWorkflowStatus({ workflowId: workflow.id, active: true }, call);
    expect(await outcomeOf(workflow.identifier)).toBe("processed");
    await workflows.updateWorkflow({ workflowId: workflow.id, identifier: "renamed" }, call);
    expect(await outcomeOf(workflow.identifier)).toBe("workflow_not_found");
    expect(await outcomeOf("renamed")).toBe("processed");
    await workflows.deleteWorkflow({ workflowId: "renamed" }, call);
    expect(await outcomeOf("renamed")).toBe("workflow_not_found");
  });
});

describe("TriggerBatch marks workflows triggered", () => {
  it("once every few minutes, not for a trigger Novu's dashboard sent, never changing updatedAt", async () => {
    const call = callAs(newScope());
    const step = { template: { type: StepType.IN_APP, content: { case: "text" as const, value: "Hi" } } };
    const marked = await clients.workflows.createWorkflow({ name: "Marked", active: true, steps: [step] }, call);
    const fromDashboard = await clients.workflows.createWorkflow({ name: "From the dashboard", active: true, steps: [step] }, call);
    expect(marked.lastTriggeredAt).toBeUndefined();
    const to = [{ kind: { case: "subscriberId" as const, value: "ada" } }];
    const trigger = (name: string, payload: Record<string, string> = {}) => triggers.triggerBatch({ events: [{ name, to, payload }] }, call);
    const lastTriggeredOf = async (identifier: string) =>
      (await clients.workflows.getWorkflow({ key: { case: "identifier", value: identifier } }, call)).lastTriggeredAt;

    await trigger(marked.identifier);
    const first = await lastTriggeredOf(marked.identifier);
    expect(first).toBeDefined();
    await trigger(marked.identifier);
    expect(await lastTriggeredOf(marked.identifier)).toEqual(first);
    const after = await clients.workflows.getWorkflow({ key: { case: "identifier", value: marked.identifier } }, call);
    expect(after.updatedAt).toEqual(marked.updatedAt);

    await trigger(fromDashboard.identifier, { __source: "dashboard" });
    expect(await lastTriggeredOf(fromDashboard.identifier)).toBeUndefined();
  });
});

describe("GetCanceledTriggers", () => {
  it("answers only the canceled ones among the given transactions, in the caller's environment", async () => {
    const scope = newScope();
    const call = callAs(scope);
    const workflow = await clients.workflows.createWorkflow(
      { name: "Cancelable", active: true, steps: [{ template: { type: StepType.IN_APP, content: { case: "text", value: "Hi" } } }] },
      call,
    );
    const to = [{ kind: { case: "subscriberId" as const, value: "ada" } }];
    await triggers.triggerBatch({ events: ["keep", "drop", "drop-too"].map((transactionId) => ({ name: workflow.identifier, to, transactionId })) }, call);
    await triggers.cancelTrigger({ transactionId: "drop" }, call);
    await triggers.cancelTrigger({ transactionId: "drop-too" }, call);
    const asked = ["keep", "drop", "drop-too", "never-triggered"];
    expect((await triggers.getCanceledTriggers({ transactionIds: asked }, call)).transactionIds.sort()).toEqual(["drop", "drop-too"]);
    // Another environment's cancelations are not this one's.
    expect((await triggers.getCanceledTriggers({ transactionIds: asked }, callAs(newScope()))).transactionIds).toEqual([]);
  });
});
