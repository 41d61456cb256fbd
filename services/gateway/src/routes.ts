import { Code, ConnectError } from "@connectrpc/connect";
import { z } from "zod";
import { HttpError } from "./errors.js";
import { offsetPage } from "./mappers/common.js";
import {
  createSubscriberBody,
  deletedResult,
  fieldsOf,
  listSubscribersQuery,
  searchRequestOf,
  searchSubscribersQuery,
  subscriberIdParam,
  subscriberToJson,
  updateSubscriberBody,
  v1Cleared,
  v2Cleared,
} from "./mappers/subscribers.js";
import { route, type Route } from "./route.js";
import { queryBool } from "./validation.js";

/** THE route table: every public REST route, the RPC it makes and the mapper of its reply. */
export const routes: Route[] = [
  // Subscribers (v1)
  route({
    method: "POST",
    path: "/v1/subscribers",
    body: createSubscriberBody,
    handle: async ({ body, clients, call }) => {
      const { subscriberId, ...profile } = body;
      const reply = await clients.subscribers.upsertSubscriber({ subscriberId, fields: fieldsOf(profile), cleared: v1Cleared(profile) }, call);
      return subscriberToJson(reply.subscriber!);
    },
  }),
  route({
    method: "GET",
    path: "/v1/subscribers",
    envelope: false,
    query: listSubscribersQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.subscribers.listSubscribers({ page: query.page, limit: query.limit }, call);
      return offsetPage(reply.subscribers.map(subscriberToJson), query.page, query.limit, reply.totalCount, reply.hasMore);
    },
  }),
  route({
    method: "GET",
    path: "/v1/subscribers/:subscriberId",
    params: subscriberIdParam,
    handle: async ({ params, clients, call }) => subscriberToJson(await clients.subscribers.getSubscriber(params, call)),
  }),
  route({
    method: "PUT",
    path: "/v1/subscribers/:subscriberId",
    params: subscriberIdParam,
    body: updateSubscriberBody,
    handle: async ({ params, body, clients, call }) =>
      subscriberToJson(
        await clients.subscribers.updateSubscriber({ subscriberId: params.subscriberId, fields: fieldsOf(body), cleared: v1Cleared(body) }, call),
      ),
  }),
  route({
    method: "DELETE",
    path: "/v1/subscribers/:subscriberId",
    params: subscriberIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.subscribers.deleteSubscriber(params, call);
      return deletedResult;
    },
  }),

  // Subscribers (v2, as @novu/api calls them)
  route({
    method: "POST",
    path: "/v2/subscribers",
    query: z.object({ failIfExists: queryBool.default(false) }),
    body: createSubscriberBody,
    handle: async ({ query, body, clients, call }) => {
      const { subscriberId, ...profile } = body;
      try {
        const reply = await clients.subscribers.upsertSubscriber(
          { subscriberId, fields: fieldsOf(profile), cleared: v1Cleared(profile), failIfExists: query.failIfExists },
          call,
        );
        return subscriberToJson(reply.subscriber!);
      } catch (error) {
        if (!(error instanceof ConnectError) || error.code !== Code.AlreadyExists) throw error;
        // The SDK reads a 409 here as the existing subscriber, so the error body carries its fields too.
        const existing = subscriberToJson(await clients.subscribers.getSubscriber({ subscriberId }, call));
        throw new HttpError(409, error.rawMessage, existing);
      }
    },
  }),
  route({
    method: "GET",
    path: "/v2/subscribers",
    envelope: false,
    query: searchSubscribersQuery,
    handle: async ({ query, clients, call }) => {
      const reply = await clients.subscribers.searchSubscribers(searchRequestOf(query), call);
      return {
        data: reply.subscribers.map(subscriberToJson),
        next: reply.next ?? null,
        previous: reply.previous ?? null,
        totalCount: reply.totalCount,
        totalCountCapped: reply.totalCountCapped,
      };
    },
  }),
  route({
    method: "GET",
    path: "/v2/subscribers/:subscriberId",
    params: subscriberIdParam,
    handle: async ({ params, clients, call }) => subscriberToJson(await clients.subscribers.getSubscriber(params, call)),
  }),
  route({
    method: "PATCH",
    path: "/v2/subscribers/:subscriberId",
    params: subscriberIdParam,
    body: updateSubscriberBody,
    handle: async ({ params, body, clients, call }) =>
      subscriberToJson(
        await clients.subscribers.updateSubscriber({ subscriberId: params.subscriberId, fields: fieldsOf(body), cleared: v2Cleared(body) }, call),
      ),
  }),
  route({
    method: "DELETE",
    path: "/v2/subscribers/:subscriberId",
    params: subscriberIdParam,
    handle: async ({ params, clients, call }) => {
      await clients.subscribers.deleteSubscriber(params, call);
      return deletedResult;
    },
  }),
];

