import { randomBytes } from "node:crypto";
import { createLogger } from "@notify/runtime";
import { connect, JSONCodec } from "nats";
import { expect, it, vi } from "vitest";
import { answerRequests } from "../src/requests.js";

const codec = JSONCodec<unknown>();
const isQuestion = (value: unknown): value is { question: string } => typeof (value as { question?: unknown } | undefined)?.question === "string";

it("answers requests, refuses what is not one, and logs an answer it cannot send", async () => {
  const subject = `test.${randomBytes(6).toString("hex")}.requests`;
  const log = createLogger("requests-test", "silent");
  const warn = vi.spyOn(log, "warn");
  const serving = await connect({ servers: "nats://127.0.0.1:4222" });
  const asking = await connect({ servers: "nats://127.0.0.1:4222" });
  const tooLarge = (serving.info?.max_payload ?? 1_048_576) + 1;
  const answered = answerRequests(
    serving,
    subject,
    isQuestion,
    async ({ question }) => ({ answer: question === "all of it" ? "x".repeat(tooLarge) : `${question}!` }),
    { answer: "not a question" },
    log,
  );
  try {
    await serving.flush();
    const ask = async (request: unknown) => codec.decode((await asking.request(subject, codec.encode(request), { timeout: 2_000 })).data);
    expect(await ask({ question: "why" })).toEqual({ answer: "why!" });
    expect(await ask({ other: 1 })).toEqual({ answer: "not a question" });

    // An answer larger than NATS carries is not sent: the asker's wait ends on its own, and it is logged.
    await expect(asking.request(subject, codec.encode({ question: "all of it" }), { timeout: 500 })).rejects.toThrow();
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ subject }), "request not answered");
    expect(await ask({ question: "still" })).toEqual({ answer: "still!" });
  } finally {
    answered.stop();
    await serving.close();
    await asking.close();
  }
});
