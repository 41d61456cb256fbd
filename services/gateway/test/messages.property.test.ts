import fc from "fast-check";
import { commonV1 } from "@notify/proto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSubscriber, newMessage, seeder, type Seeder } from "./messages-fixtures.js";
import { startStack, type Stack } from "./stack.js";

type Mark = "read" | "seen" | "unread" | "unseen";

interface ModelMessage {
  id: string;
  inApp: boolean;
  feed: string;
  read: boolean;
  seen: boolean;
}

/** The rules of the issue, applied to plain objects. */
function apply(message: ModelMessage, mark: Mark): void {
  if (mark === "read") Object.assign(message, { read: true, seen: true });
  if (mark === "seen") message.seen = true;
  if (mark === "unread") Object.assign(message, { read: false, seen: true });
  if (mark === "unseen") Object.assign(message, { read: false, seen: false });
}

/** Whether mark-all changes this message: in-app, in the feeds, and in the opposite state. */
function changedByMarkAll(message: ModelMessage, mark: Mark, feeds: string[] | undefined): boolean {
  if (!message.inApp || (feeds && !feeds.includes(message.feed))) return false;
  return { read: !message.read, seen: !message.seen, unread: message.read, unseen: message.seen }[mark];
}

const FEEDS = ["news", "alerts", "billing"];
const mark = fc.constantFrom<Mark>("read", "seen", "unread", "unseen");
const command = fc.oneof(
  fc.record({ kind: fc.constant("mark-as" as const), picks: fc.uniqueArray(fc.nat({ max: 13 }), { minLength: 1, maxLength: 5 }), mark }),
  fc.record({
    kind: fc.constant("mark-all" as const),
    feeds: fc.option(fc.uniqueArray(fc.constantFrom(...FEEDS, "unknown"), { minLength: 1, maxLength: 3 }), { nil: undefined }),
    mark,
  }),
);
const check = fc.record({ seen: fc.boolean(), limit: fc.integer({ min: 1, max: 15 }) });

let stack: Stack;
let seed: Seeder;
let runs = 0;

beforeAll(async () => {
  stack = await startStack();
  seed = seeder(stack, (await createSubscriber(stack, "property-scope")).scope);
});
afterAll(async () => {
  seed?.close();
  await stack?.stop();
});

it("random sequences of mark-as and mark-all keep the unseen count and the feed's pages equal to the model's", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(command, check), { minLength: 1, maxLength: 12 }), async (steps) => {
      const subscriber = await createSubscriber(stack, `property-${++runs}`);
      // 12 in-app messages over three feeds, and 2 e-mails that mark-as may touch but no count includes.
      const created = await seed.create([
        ...Array.from({ length: 12 }, (_, index) => newMessage(subscriber, { feedIdentifier: FEEDS[index % 3]! })),
        ...Array.from({ length: 2 }, () => newMessage(subscriber, { channel: commonV1.Channel.EMAIL, stepId: "email", feedIdentifier: "news" })),
      ]);
      const model: ModelMessage[] = created.messages.map((message, index) => ({
        id: message.id,
        inApp: index < 12,
        feed: index < 12 ? FEEDS[index % 3]! : "news",
        read: false,
        seen: false,
      }));
      const base = `/v1/subscribers/${subscriber.subscriberId}`;
      // Two pages of the feed, polled after every step: the gateway keeps them between polls, and
      // each step must leave neither behind.
      const feedMatches = async () => {
        const inApp = model.filter((message) => message.inApp).reverse();
        const all = await stack.request("GET", `${base}/notifications/feed?limit=20`);
        expect(all.body.data.map((message) => [message._id, message.read, message.seen])).toEqual(
          inApp.map((message) => [message.id, message.read, message.seen]),
        );
        const unseen = await stack.request("GET", `${base}/notifications/feed?limit=20&seen=false`);
        expect(unseen.body.data.map((message) => message._id)).toEqual(inApp.filter((message) => !message.seen).map((message) => message.id));
      };
      await feedMatches();

      for (const [step, { seen, limit }] of steps) {
        if (step.kind === "mark-as") {
          const targets = step.picks.map((pick) => model[pick]!);
          const reply = await stack.request("POST", `${base}/messages/mark-as`, { messageId: targets.map((message) => message.id), markAs: step.mark });
          expect(reply.status).toBe(201);
          for (const message of targets) apply(message, step.mark);
          expect(reply.body.data.map((message) => [message.read, message.seen])).toEqual(targets.map((message) => [message.read, message.seen]));
        } else {
          const expected = model.filter((message) => changedByMarkAll(message, step.mark, step.feeds));
          const reply = await stack.request("POST", `${base}/messages/mark-all`, { markAs: step.mark, ...(step.feeds ? { feedIdentifier: step.feeds } : {}) });
          expect(reply.body).toEqual({ data: expected.length });
          for (const message of expected) apply(message, step.mark);
        }
        const count = await stack.request("GET", `${base}/notifications/unseen?seen=${seen}&limit=${limit}`);
        const matching = model.filter((message) => message.inApp && message.seen === seen).length;
        expect(count.body).toEqual({ data: { count: Math.min(matching, limit) } });
        await feedMatches();
      }
    }),
    { numRuns: 40 },
  );
}, 120_000);
