// The Inbox sockets of the live-events benchmark, in a process of their own (forked by
// bench/inbox.mjs): opens one socket.io websocket per token (as @novu/js does), then records when
// each socket hears its new message and its counts. Driven over IPC:
//   {open: {url, tokens}} → {opened, failed, ms}
//   {watch: true}         → starts recording afresh → {watching: true}
//   {report: true}        → {received, counted, firstReceived, lastReceived, lastCounted, sockets}
// Times are epoch milliseconds with sub-millisecond precision, comparable with the parent's.
import { io } from "socket.io-client";

const now = () => performance.timeOrigin + performance.now();
/** Handshakes under way at once: enough to open ten thousand in seconds, few enough not to time out. */
const OPENING_AT_ONCE = 200;

const sockets = [];
let received = new Map();
let counted = new Map();

function open(url, token) {
  return new Promise((resolve) => {
    const socket = io(url, { transports: ["websocket"], query: { token }, forceNew: true, reconnection: false, timeout: 60_000 });
    const index = sockets.length;
    sockets.push(socket);
    socket.on("notification_received", () => received.set(index, now()));
    socket.on("unread_count_changed", ({ counts }) => {
      if (counts && typeof counts.total === "number") counted.set(index, now());
    });
    socket.once("connect", () => resolve(true));
    socket.once("connect_error", () => resolve(false));
  });
}

async function openAll(url, tokens) {
  const started = now();
  let next = 0;
  let opened = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: OPENING_AT_ONCE }, async () => {
      while (next < tokens.length) {
        const token = tokens[next++];
        if (await open(url, token)) opened += 1;
        else failed += 1;
      }
    }),
  );
  return { opened, failed, ms: now() - started };
}

process.on("message", async (command) => {
  if (command.open) process.send(await openAll(command.open.url, command.open.tokens));
  else if (command.watch) {
    received = new Map();
    counted = new Map();
    process.send({ watching: true });
  } else if (command.report) {
    const receivedTimes = [...received.values()];
    const countedTimes = [...counted.values()];
    process.send({
      sockets: sockets.filter((socket) => socket.connected).length,
      received: receivedTimes.length,
      counted: countedTimes.length,
      firstReceived: Math.min(...receivedTimes),
      lastReceived: Math.max(...receivedTimes),
      lastCounted: Math.max(...countedTimes),
    });
  } else if (command.close) {
    for (const socket of sockets) socket.close();
    process.exit(0);
  }
});
