import type { Client } from "@connectrpc/connect";
import type { messagesV1, workflowsV1 } from "@notify/proto";
import { scopeHeaders, type FollowedCache, type Scope } from "@notify/runtime";
import { LRUCache } from "lru-cache";

export type WorkflowsClient = Client<typeof workflowsV1.WorkflowService>;

/** BatchGetWorkflows takes at most this many ids per call. */
const BATCH_LIMIT = 1000;
/** Workflow ids remembered as absent, the oldest forgotten first. */
const MAX_ABSENT = 10_000;

/** Workflows as the messages service needs them, read through the triggers process. */
export interface WorkflowDirectory {
  /**
   * The live workflows the messages (or notifications) came from, each once: those kept in `copies` (which the
   * triggers process's change announcements keep current), the rest by one BatchGetWorkflows
   * call per 1000 distinct workflows, never one per message. Deleted workflows are absent, and
   * are not asked for again: a deleted workflow never comes back and ids are never reused.
   */
  ofMessages(scope: Scope, messages: readonly Pick<messagesV1.Message, "templateId">[]): Promise<workflowsV1.Workflow[]>;
}

export function createWorkflowDirectory(client: WorkflowsClient, copies: FollowedCache<workflowsV1.Workflow>): WorkflowDirectory {
  const absent = new LRUCache<string, true>({ max: MAX_ABSENT });
  const absentKey = (environmentId: string, id: string) => `${environmentId}\n${id}`;
  return {
    async ofMessages(scope, messages) {
      const kept: workflowsV1.Workflow[] = [];
      const missing: string[] = [];
      for (const id of new Set(messages.map((message) => message.templateId))) {
        if (absent.has(absentKey(scope.environmentId, id))) continue;
        const copy = copies.get(scope.environmentId, id);
        if (copy) kept.push(copy);
        else missing.push(id);
      }
      const ticket = copies.ticket();
      const replies = [];
      for (let start = 0; start < missing.length; start += BATCH_LIMIT) {
        replies.push(client.batchGetWorkflows({ ids: missing.slice(start, start + BATCH_LIMIT) }, { headers: scopeHeaders(scope) }));
      }
      const read = (await Promise.all(replies)).flatMap((reply) => reply.workflows);
      for (const workflow of read) copies.set(ticket, scope.environmentId, workflow.id, workflow);
      const found = new Set(read.map((workflow) => workflow.id));
      for (const id of missing) {
        if (found.has(id)) continue;
        absent.set(absentKey(scope.environmentId, id), true);
      }
      return [...kept, ...read];
    },
  };
}

/** Those of `workflows` that `messages` came from. */
export function workflowsOf(workflows: readonly workflowsV1.Workflow[], messages: readonly messagesV1.Message[]): workflowsV1.Workflow[] {
  const used = new Set(messages.map((message) => message.templateId));
  return workflows.filter((workflow) => used.has(workflow.id));
}
