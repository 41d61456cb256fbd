import type { Client } from "@connectrpc/connect";
import type { messagesV1, workflowsV1 } from "@notify/proto";
import { scopeHeaders, type Scope } from "@notify/runtime";

export type WorkflowsClient = Client<typeof workflowsV1.WorkflowService>;

/** BatchGetWorkflows takes at most this many ids per call. */
const BATCH_LIMIT = 1000;

/** Workflows as the messages service needs them, read through the triggers process. */
export interface WorkflowDirectory {
  /**
   * The live workflows the messages came from, each once: one BatchGetWorkflows call per 1000
   * distinct workflows, never one per message. Deleted workflows are absent. Nothing is cached,
   * so an edited or deleted workflow shows at once.
   */
  ofMessages(scope: Scope, messages: readonly messagesV1.Message[]): Promise<workflowsV1.Workflow[]>;
}

export function createWorkflowDirectory(client: WorkflowsClient): WorkflowDirectory {
  return {
    async ofMessages(scope, messages) {
      const ids = [...new Set(messages.map((message) => message.templateId))];
      const replies = [];
      for (let start = 0; start < ids.length; start += BATCH_LIMIT) {
        replies.push(client.batchGetWorkflows({ ids: ids.slice(start, start + BATCH_LIMIT) }, { headers: scopeHeaders(scope) }));
      }
      return (await Promise.all(replies)).flatMap((reply) => reply.workflows);
    },
  };
}

/** Those of `workflows` that `messages` came from. */
export function workflowsOf(workflows: readonly workflowsV1.Workflow[], messages: readonly messagesV1.Message[]): workflowsV1.Workflow[] {
  const used = new Set(messages.map((message) => message.templateId));
  return workflows.filter((workflow) => used.has(workflow.id));
}
