// The delivery bench's stand-ins for providers, in a process of their own (bench/delivery.mjs
// starts it): an SMTP sink that accepts every mail, counts it and discards it (no TLS, no auth),
// and an HTTP receiver that answers every POST 200 "ok". GET /count on the HTTP port answers
// {"smtp": mails, "http": posts}. Ports come from SMTP_PORT and HTTP_PORT.
import { createServer } from "node:http";
import { SMTPServer } from "smtp-server";

const counts = { smtp: 0, http: 0 };

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS", "AUTH"],
  disableReverseLookup: true,
  logger: false,
  onData(stream, _session, callback) {
    stream.on("end", () => {
      counts.smtp += 1;
      callback();
    });
    stream.resume();
  },
});

const http = createServer((request, response) => {
  if (request.method === "GET" && request.url === "/count") {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts));
    return;
  }
  request.on("end", () => {
    counts.http += 1;
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
