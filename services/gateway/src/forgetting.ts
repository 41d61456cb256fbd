import type { DescService } from "@bufbuild/protobuf";
import type { CallOptions, Client } from "@connectrpc/connect";
import { CHANGE_SUBJECTS, ChangeKind, declaredAnnouncements, ENVIRONMENT_HEADER, EVERY_KEY, type AnnouncedKind, type Followed } from "@notify/runtime";
import { scopeHeaderOf } from "./coalesce.js";
import type { FeedPages } from "./messages-client.js";

/**
 * What the kept feed pages follow, by change kind: pages are kept by subscriber, so changes of a
 * subscriber's feed or of the subscriber drop that subscriber's pages; a workflow's keys are not
 * subscribers, so its change drops every page of the environment.
 */
const FEED_PAGES_FOLLOW: Record<Exclude<AnnouncedKind, typeof ChangeKind.RECEIVED>, Followed> = {
  [ChangeKind.FEEDS]: { subject: CHANGE_SUBJECTS.feeds },
  [ChangeKind.SUBSCRIBERS]: { subject: CHANGE_SUBJECTS.subscribers },
  [ChangeKind.WORKFLOWS]: { subject: CHANGE_SUBJECTS.workflows, dropsEnvironment: true },
};

/** The subjects whose announcements the kept feed pages follow (server.ts). */
export const feedPagesFollowed: readonly Followed[] = Object.values(FEED_PAGES_FOLLOW);

type Method = (request: object, options?: CallOptions) => Promise<unknown>;

/**
 * `client` with every write whose contract declares announcements (the `coherence` option of its
 * RPC) dropping the pages those announcements will drop, once it is done, failed or not: the owner
 * announces them too, but a client reading right after its own write through this gateway must
 * not depend on which of the two arrives first. Keys only the owner's handler knows drop the
 * whole environment.
 */
export function forgettingWrites<S extends DescService>(service: S, client: Client<S>, feedPages: FeedPages | undefined): Client<S> {
  if (!feedPages) return client;
  const wrapped: Record<string, unknown> = { ...client };
  for (const method of service.methods) {
    const announcements = declaredAnnouncements(method);
    if (announcements.length === 0) continue;
    const write = (client as Record<string, Method>)[method.localName]!;
    wrapped[method.localName] = async (request: object, options?: CallOptions) => {
      try {
        return await write(request, options);
      } finally {
        const environmentId = scopeHeaderOf(options, ENVIRONMENT_HEADER);
        if (environmentId !== undefined) {
          for (const { kind, keysOf, namedByHandler } of announcements) {
            // What arrived in a feed is announced as its feed's change too.
            if (kind === ChangeKind.RECEIVED) continue;
            const dropsEnvironment = FEED_PAGES_FOLLOW[kind].dropsEnvironment === true || namedByHandler;
            feedPages.forget(environmentId, dropsEnvironment ? EVERY_KEY : keysOf(request, new Map()));
          }
        }
      }
    };
  }
  return wrapped as Client<S>;
}
