// The customer's app of the browser test: @novu/js as an app bundles it, pointed at the gateway the
// page names, keeping what the client reports for the test to read.
import { Novu } from "@novu/js";

interface Observed {
  sessionReady: boolean;
  socketReady: boolean;
  received: { id: string; body: string; isRead: boolean }[];
  unread: number[];
}

const settings = JSON.parse(document.getElementById("settings")?.textContent ?? "{}") as {
  apiUrl: string;
  applicationIdentifier: string;
  subscriberId: string;
};
const observed: Observed = { sessionReady: false, socketReady: false, received: [], unread: [] };
Object.assign(window, { observed });

const novu = new Novu({
  applicationIdentifier: settings.applicationIdentifier,
  subscriber: settings.subscriberId,
  apiUrl: settings.apiUrl,
  socketUrl: settings.apiUrl,
});
novu.on("session.initialize.resolved", ({ error }) => {
  observed.sessionReady = !error;
});
novu.on("socket.connect.resolved", ({ error }) => {
  observed.socketReady = !error;
});
novu.on("notifications.notification_received", ({ result }) => {
  observed.received.push({ id: result.id, body: result.body, isRead: result.isRead });
});
novu.on("notifications.unread_count_changed", ({ result }) => {
  observed.unread.push(result.total);
});
