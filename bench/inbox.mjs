// The Inbox. Live events: 10,000 sockets (opened by a process of their own, as @novu/js opens
// them) connected to one gateway, over the whole stack as processes:
//   - memory per idle socket (the gateway's RSS with them open, less before);
//   - a broadcast to those 10,000 subscribers, written as the worker writes a fan-out (pages of a
//     thousand recipients through CreateMessages): the time from the last page's commit to the
//     last socket hearing its notification_received, and its count events;
//   - the gateway's CPU while the sockets stay idle, over more than a ping interval.
// BENCH_INBOX_SOCKETS and BENCH_IDLE_SECONDS shrink a run while working on it.
import { liveEventsBench } from "../scripts/bench-inbox-live.mjs";

export default async function inboxBench({ report }) {
  await liveEventsBench({ report });
}
