import type { FastifyInstance, FastifyReply } from "fastify";
import { ERRORS } from "../answers/reasons.ts";
import type { RetryAfterSeconds } from "../answers/route-answer.ts";
import type { SnapshotHolder } from "../snapshot/holder.ts";
import { findApp, listApps, lookup } from "../snapshot/lookup.ts";
import {
  appRecord,
  hostRecord,
  NOT_SYNCED_SNAPSHOT,
  type ProxyRecord,
  type SnapshotRecord,
  snapshotRecord,
} from "./records.ts";
import {
  appListSchema,
  appRecordSchema,
  errorSchema,
  hostRecordSchema,
  snapshotRecordSchema,
} from "./schemas.ts";

/**
 * The lookup and status API: `GET /v1/hosts/:host`, `/v1/apps`,
 * `/v1/apps/:name` and `/v1/snapshot`. Each answer is built from one read of the holder; before
 * the first Snapshot every route answers 503 with `retry-after`.
 */
export function registerStatusApi(
  app: FastifyInstance,
  holder: SnapshotHolder,
  retryAfter: RetryAfterSeconds,
  proxies: () => readonly ProxyRecord[],
): void {
  const retry = String(retryAfter.notSynced);
  const notSynced = (reply: FastifyReply) =>
    reply
      .code(ERRORS["not-synced"].status)
      .header("retry-after", retry)
      .send({ error: "not-synced" });

  app.get<{ Params: { host: string } }>(
    "/v1/hosts/:host",
    { schema: { response: { 200: hostRecordSchema, "4xx": errorSchema, 503: errorSchema } } },
    (request, reply) => {
      const snapshot = holder.current();
      if (snapshot === null) return notSynced(reply);
      const found = lookup(snapshot, request.params.host);
      switch (found.kind) {
        case "found":
          return reply.send(hostRecord(found, snapshot.revision));
        case "unknown":
          return reply
            .code(ERRORS["unknown-host"].status)
            .send({ error: "unknown-host", host: found.host });
        case "bad-host":
          return reply
            .code(ERRORS["bad-host"].status)
            .send({ error: "bad-host", reason: found.reason });
      }
    },
  );

  app.get(
    "/v1/apps",
    { schema: { response: { 200: appListSchema, 503: errorSchema } } },
    (_request, reply) => {
      const snapshot = holder.current();
      if (snapshot === null) return notSynced(reply);
      return reply.send({ revision: snapshot.revision, apps: listApps(snapshot).map(appRecord) });
    },
  );

  app.get<{ Params: { name: string } }>(
    "/v1/apps/:name",
    { schema: { response: { 200: appRecordSchema, 404: errorSchema, 503: errorSchema } } },
    (request, reply) => {
      const snapshot = holder.current();
      if (snapshot === null) return notSynced(reply);
      const found = findApp(snapshot, request.params.name);
      if (found === undefined) {
        return reply
          .code(ERRORS["unknown-app"].status)
          .send({ error: "unknown-app", name: request.params.name });
      }
      return reply.send(appRecord(found));
    },
  );

  app.get(
    "/v1/snapshot",
    { schema: { response: { 200: snapshotRecordSchema, 503: snapshotRecordSchema } } },
    (_request, reply) => {
      const snapshot = holder.current();
      if (snapshot === null) {
        const body: SnapshotRecord = NOT_SYNCED_SNAPSHOT;
        return reply.code(ERRORS["not-synced"].status).header("retry-after", retry).send(body);
      }
      return reply.send(snapshotRecord(snapshot, proxies()));
    },
  );
}
