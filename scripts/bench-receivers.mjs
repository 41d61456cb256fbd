// The delivery bench's stand-ins for providers, in a process of their own (bench/delivery.mjs
// starts it): an SMTP sink that accepts every mail, counts it and discards it (no TLS, no auth),
// and an HTTP receiver that answers every POST 200 "ok". GET /count on the HTTP port answers
// {"smtp": mails, "http": posts, "connections": HTTP connections that carried posts}; with ?smtp=N or ?http=N
// it answers once that count reaches N, or after a second: a bench waiting for its sends asks
// once a second instead of polling, which would take CPU from the services it times. Ports come
// from SMTP_PORT and HTTP_PORT.
import { createServer } from "node:http";
import { SMTPServer } from "smtp-server";

const counts = { smtp: 0, http: 0, connections: 0 };
/** Long polls of /count: each answered once its count reaches its goal, or at its deadline. */
const waiting = new Set();
const LONG_POLL_MS = 1_000;
/** Connections that carried a post: the bench's own /count polls are not the senders' connections. */
const posting = new WeakSet();

function answerCount(response) {
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts));
}

function counted(field) {
  counts[field] += 1;
  for (const poll of waiting) {
    if (poll.field === field && counts[field] >= poll.goal) poll.answer();
  }
}

/** Answers now, or once `field` reaches `goal`, or after LONG_POLL_MS. */
function countWhen(response, field, goal) {
  if (!(field in counts) || !(counts[field] < goal)) return answerCount(response);
  const poll = {
    field,
    goal,
    answer: () => {
      waiting.delete(poll);
      clearTimeout(timer);
      answerCount(response);
    },
  };
  const timer = setTimeout(poll.answer, LONG_POLL_MS);
  waiting.add(poll);
}

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS", "AUTH"],
  disableReverseLookup: true,
  logger: false,
  onData(stream, _session, callback) {
    stream.on("end", () => {
      counted("smtp");
      callback();
    });
    stream.resume();
  },
});

const http = createServer((request, response) => {
  const url = new URL(request.url, "http://receiver");
  if (request.method === "GET" && url.pathname === "/count") {
    const [[field, goal] = []] = url.searchParams;
    countWhen(response, field, Number(goal));
    return;
  }
  if (!posting.has(request.socket)) {
    posting.add(request.socket);
    counts.connections += 1;
  }
  request.on("end", () => {
    counted("http");
    response.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  request.resume();
});

await new Promise((resolve) => smtp.listen(Number(process.env.SMTP_PORT), "127.0.0.1", resolve));
await new Promise((resolve) => http.listen(Number(process.env.HTTP_PORT), "127.0.0.1", resolve));

process.once("SIGTERM", () => {
  http.closeAllConnections();
  http.close();
  smtp.close(() => process.exit(0));
});
