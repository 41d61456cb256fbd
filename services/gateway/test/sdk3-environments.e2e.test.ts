import { Novu } from "@novu/api";
import * as errors from "@novu/api/models/errors/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, once } from "./sdk3-helpers.js";
import { startStack, type Stack } from "./stack.js";

let stack: Stack;
let novu: Novu;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  novu = new Novu({ secretKey: stack.key, serverURL: stack.url });
});
afterAll(() => stack?.stop());

const developmentOf = async (sdk: Novu) => (await sdk.environments.list()).result.find((environment) => environment.name === "Development")!;

describe("@novu/api 3.19.1 against the gateway: environments", () => {
  it("environments.create makes an environment of the caller's organization with a key that works there", async () => {
    const development = await developmentOf(novu);
    const created = await novu.environments.create({ name: "Staging", color: "#00ff00" });
    expect(created.result).toMatchObject({ name: "Staging", organizationId: development.organizationId, parentId: development.id, type: "dev" });
    expect(created.result.id).toMatch(/^[0-9a-f]{24}$/);
    expect(created.result.identifier).not.toBe(development.identifier);
    const [apiKey] = created.result.apiKeys!;
    expect(apiKey!.key).toMatch(/^[0-9a-f]{32}$/);

    const staging = new Novu({ secretKey: apiKey!.key, serverURL: stack.url });
    await staging.subscribers.create({ subscriberId: "staging-only" });
    expect((await staging.subscribers.retrieve("staging-only")).result.environmentId).toBe(created.result.id);
    expect((await failureOf(novu.subscribers.retrieve("staging-only", undefined, once))).statusCode).toBe(404);
    expect((await novu.environments.list()).result.map((environment) => environment.id)).toContain(created.result.id);
    // The list never shows keys, the new environment's included.
    expect((await staging.environments.list()).result.every((environment) => environment.apiKeys === undefined)).toBe(true);
  });

  it("environments.create refuses a taken name, Novu's protected names and a missing color", async () => {
    await novu.environments.create({ name: "Preview", color: "#0000ff" });
    const taken = await failureOf(novu.environments.create({ name: "Preview", color: "#0000ff" }, undefined, once));
    expect(taken).toBeInstanceOf(errors.ErrorDto);
    expect(taken.statusCode).toBe(400);
    for (const name of ["Production", "development"]) {
      const refused = await failureOf(novu.environments.create({ name, color: "#0000ff" }, undefined, once));
      expect(refused).toBeInstanceOf(errors.ValidationErrorDto);
      expect((refused as errors.ValidationErrorDto).errors.name?.messages).toEqual(["Environment name cannot be Development or Production"]);
    }
    const noColor = await stack.request("POST", "/v1/environments", { name: "Colorless" });
    expect(noColor.status).toBe(422);
  });

  it("a replayed create answers the same environment and key, which never rests in the idempotency cache", async () => {
    const first = await novu.environments.create({ name: "Replayed", color: "#123456" }, "create-replayed");
    const again = await novu.environments.create({ name: "Replayed", color: "#123456" }, "create-replayed");
    expect(again.result).toEqual(first.result);
    expect(again.headers["idempotency-replay"]).toEqual(["true"]);
  });

  it("environments.update renames an environment and sets its identifier; Development keeps its name", async () => {
    const created = await novu.environments.create({ name: "Renamable", color: "#abcdef" });
    const updated = await novu.environments.update({ name: "Renamed", identifier: "renamed-app", color: "#fedcba" }, created.result.id);
    expect(updated.result).toMatchObject({ id: created.result.id, name: "Renamed", identifier: "renamed-app" });
    expect((await novu.environments.list()).result.find((environment) => environment.id === created.result.id)?.name).toBe("Renamed");

    const development = await developmentOf(novu);
    const kept = await failureOf(novu.environments.update({ name: "Dev" }, development.id, undefined, once));
    expect(kept).toBeInstanceOf(errors.ValidationErrorDto);
    const sameIdentifier = await failureOf(novu.environments.update({ identifier: development.identifier }, created.result.id, undefined, once));
    expect(sameIdentifier.statusCode).toBe(400);
    const bridge = await failureOf(novu.environments.update({ bridge: { url: "https://example.com/api/novu" } }, created.result.id, undefined, once));
    expect(bridge).toBeInstanceOf(errors.ValidationErrorDto);
    expect((await failureOf(novu.environments.update({ name: "Nowhere" }, "0".repeat(24), undefined, once))).statusCode).toBe(404);
  });

  it("environments.delete deletes a custom environment and its keys, never Development or Production", async () => {
    const created = await novu.environments.create({ name: "Doomed", color: "#000000" });
    const doomed = new Novu({ secretKey: created.result.apiKeys![0]!.key, serverURL: stack.url });
    await doomed.environments.list();

    await novu.environments.delete(created.result.id);
    expect((await novu.environments.list()).result.map((environment) => environment.id)).not.toContain(created.result.id);
    expect((await failureOf(doomed.environments.list(undefined, once))).statusCode).toBe(401);
    expect((await failureOf(novu.environments.delete(created.result.id, undefined, once))).statusCode).toBe(404);

    const development = await developmentOf(novu);
    const protectedOne = await failureOf(novu.environments.delete(development.id, undefined, once));
    expect(protectedOne).toBeInstanceOf(errors.ErrorDto);
    expect(protectedOne.statusCode).toBe(400);
  });

  it("an organization's environments are out of another organization's reach", async () => {
    const outsider = new Novu({ secretKey: await stack.createKey("Development", "Outsiders"), serverURL: stack.url });
    const created = await novu.environments.create({ name: "Private", color: "#111111" });
    expect((await outsider.environments.list()).result.map((environment) => environment.id)).not.toContain(created.result.id);
    expect((await failureOf(outsider.environments.update({ name: "Taken over" }, created.result.id, undefined, once))).statusCode).toBe(404);
    expect((await failureOf(outsider.environments.delete(created.result.id, undefined, once))).statusCode).toBe(404);
    expect((await failureOf(outsider.environments.getTags(created.result.id, undefined, once))).statusCode).toBe(404);
    expect((await novu.environments.list()).result.find((environment) => environment.id === created.result.id)?.name).toBe("Private");
  });

  it("environments.getTags lists the distinct tags of an environment's workflows", async () => {
    await novu.workflows.create({ name: "Tagged one", workflowId: "tagged-one", steps: [], tags: ["orders", "billing"] });
    await novu.workflows.create({ name: "Tagged two", workflowId: "tagged-two", steps: [], tags: ["orders"] });
    const development = await developmentOf(novu);
    expect((await novu.environments.getTags(development.id)).result).toEqual([{ name: "billing" }, { name: "orders" }]);
    // Named by its identifier too, as Novu's route takes it.
    expect((await novu.environments.getTags(development.identifier)).result).toEqual([{ name: "billing" }, { name: "orders" }]);

    const other = await novu.environments.create({ name: "Untagged", color: "#222222" });
    expect((await novu.environments.getTags(other.result.id)).result).toEqual([]);
  });
  it("environments.publish copies Development's workflows into another environment, or only says what it would", async () => {
    await novu.workflows.create({ name: "Published", workflowId: "published", steps: [], tags: ["release"] });
    const sourceIds = (await novu.workflows.list({ limit: 100 })).result.workflows.map((workflow) => workflow.id).sort();
    const release = await novu.environments.create({ name: "Release", color: "#333333" });
    const releaseSdk = new Novu({ secretKey: release.result.apiKeys![0]!.key, serverURL: stack.url });

    // A dry run skips every workflow, as Novu reports it, and changes nothing.
    const dry = await novu.environments.publish({ dryRun: true }, release.result.id);
    expect(dry.result.summary).toEqual({ resources: sourceIds.length, successful: 0, failed: 0, skipped: sourceIds.length });
    expect(dry.result.results[0]!.skipped.every((skipped) => skipped.reason === "Dry run mode")).toBe(true);
    expect((await releaseSdk.workflows.list({})).result.totalCount).toBe(0);

    // A workflow only the target has is deleted by a publish of everything.
    await releaseSdk.workflows.create({ name: "Retired", workflowId: "retired", steps: [] });
    const published = await novu.environments.publish({}, release.result.id);
    expect(
      published.result.results[0]!.successful.filter((synced) => synced.action === "created")
        .map((synced) => synced.resourceId)
        .sort(),
    ).toEqual(sourceIds);
    expect(published.result.results[0]!.successful.filter((synced) => synced.action === "deleted").map((synced) => synced.resourceName)).toEqual(["Retired"]);
    expect((await failureOf(releaseSdk.workflows.get("retired", undefined, undefined, once))).statusCode).toBe(404);
    const copied = await releaseSdk.workflows.get("published");
    expect(copied.result).toMatchObject({ workflowId: "published", name: "Published", tags: ["release"] });

    // Published again as it is: skipped; once changed: updated.
    const selected = { resources: [{ resourceType: "REGULAR" as const, resourceId: "published" }] };
    const again = await novu.environments.publish(selected, release.result.id);
    expect(again.result.results[0]!.skipped.map((skipped) => [skipped.resourceName, skipped.reason])).toEqual([["Published", "No changes detected"]]);
    await novu.workflows.patch({ tags: ["release", "v2"] }, "published");
    const changed = await novu.environments.publish(selected, release.result.id);
    expect(changed.result.results[0]!.successful.map((synced) => [synced.resourceName, synced.action])).toEqual([["Published", "updated"]]);

    const development = await developmentOf(novu);
    expect((await failureOf(novu.environments.publish({}, development.id, undefined, once))).statusCode).toBe(400);
    expect((await failureOf(novu.environments.publish({}, "0".repeat(24), undefined, once))).statusCode).toBe(404);
  });
  it("environments.diff tells which workflows a publish would add or change, and which only the target has", async () => {
    await novu.workflows.create({ name: "Compared", workflowId: "compared", steps: [], tags: ["diff"] });
    const staged = await novu.environments.create({ name: "Staged", color: "#444444" });
    const stagedSdk = new Novu({ secretKey: staged.result.apiKeys![0]!.key, serverURL: stack.url });
    const sourceCount = (await novu.workflows.list({ limit: 100 })).result.totalCount;

    const before = await novu.environments.diff({}, staged.result.id);
    expect(before.result.summary).toEqual({ totalEntities: sourceCount, totalChanges: sourceCount, hasChanges: true });
    expect(before.result.resources.every((resource) => resource.changes[0]?.action === "added" && resource.targetResource === null)).toBe(true);

    await novu.environments.publish({}, staged.result.id);
    const published = await novu.environments.diff({}, staged.result.id);
    expect(published.result.summary).toEqual({ totalEntities: sourceCount, totalChanges: 0, hasChanges: false });

    await novu.workflows.patch({ name: "Compared again" }, "compared");
    await stagedSdk.workflows.create({ name: "Staged only", workflowId: "staged-only", steps: [] });
    const changed = await novu.environments.diff({}, staged.result.id);
    const actions = changed.result.resources.flatMap((resource) =>
      resource.changes.map((change) => [change.sourceResource?.name ?? change.targetResource?.name, change.action]),
    );
    expect(actions.sort()).toEqual([
      ["Compared again", "modified"],
      ["Staged only", "deleted"],
    ]);
    expect(changed.result.sourceEnvironmentId).toBe((await developmentOf(novu)).id);
    expect((await failureOf(novu.environments.diff({}, "0".repeat(24), undefined, once))).statusCode).toBe(404);
  });
});
