import type http from "node:http";
import { describe, expect, it } from "vitest";
import { createKubeTransport } from "../../src/kube/rest/transport.ts";
import { err, ok } from "../../src/result.ts";
import { sendJson, status, TOKEN } from "../support/api-server-stub.ts";
import {
  connect,
  drain,
  line,
  openWatch,
  pause,
  scope,
  secret,
  wireSecret,
} from "../support/list-watch-harness.ts";

describe("createListWatch: watch", () => {
  it("asks for a watch with bookmarks, resourceVersion, timeoutSeconds and the selectors", async () => {
    const { stub, lw } = await connect((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        line({ type: "BOOKMARK", object: { kind: "Secret", metadata: { resourceVersion: "12" } } }),
      );
    }, scope);
    const stream = await openWatch(lw, { resourceVersion: "10", timeoutSeconds: 300 });
    expect(await drain(stream)).toEqual([ok({ type: "BOOKMARK", resourceVersion: "12" })]);
    expect(stub.requests).toEqual([
      {
        path: "/api/v1/namespaces/ns1/secrets",
        query: {
          labelSelector: "app=shop",
          fieldSelector: "metadata.name=reg",
          watch: "1",
          allowWatchBookmarks: "true",
          resourceVersion: "10",
          timeoutSeconds: "300",
        },
        authorization: `Bearer ${TOKEN}`,
      },
    ]);
  });

  it("asks for a streaming list with sendInitialEvents and NotOlderThan, and reads its end bookmark", async () => {
    const end = { "k8s.io/initial-events-end": "true" };
    const { stub, lw } = await connect((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(line({ type: "ADDED", object: wireSecret("a", "11") }));
      res.end(
        line({
          type: "BOOKMARK",
          object: { metadata: { resourceVersion: "12", annotations: end } },
        }),
      );
    });
    const latest = await openWatch(lw, { resourceVersion: "", sendInitialEvents: true });
    expect(await drain(latest)).toEqual([
      ok({ type: "ADDED", object: secret("a", "11") }),
      ok({ type: "BOOKMARK", resourceVersion: "12", initialEventsEnd: true }),
    ]);
    await drain(await openWatch(lw, { resourceVersion: "9", sendInitialEvents: true }));
    const asked = { watch: "1", allowWatchBookmarks: "true", timeoutSeconds: "5" };
    const streaming = { sendInitialEvents: "true", resourceVersionMatch: "NotOlderThan" };
    expect(stub.requests.map((r) => r.query)).toEqual([
      { ...asked, ...streaming },
      { ...asked, ...streaming, resourceVersion: "9" },
    ]);
  });

  it("decodes lines split across chunks and several lines in one chunk", async () => {
    const added = line({ type: "ADDED", object: wireSecret("a", "11") });
    const { lw } = await connect(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(added.slice(0, 40));
      await pause(20);
      res.write(added.slice(40) + line({ type: "MODIFIED", object: wireSecret("a", "12") }));
      await pause(20);
      res.end(line({ type: "DELETED", object: wireSecret("a", "13") }).slice(0, -1)); // no final newline
    });
    const stream = await openWatch(lw, { resourceVersion: "10" });
    expect(await drain(stream)).toEqual([
      ok({ type: "ADDED", object: secret("a", "11") }),
      ok({ type: "MODIFIED", object: secret("a", "12") }),
      ok({ type: "DELETED", object: secret("a", "13") }),
    ]);
  });

  it("yields a malformed line as a decode item that holds no Secret data, and carries on", async () => {
    const bad = '{"type":"ADDED","object":{"data":{"token":"c2VjcmV0LXZhbHVl"},,}}\n';
    const { lw } = await connect((_req, res) => {
      res.writeHead(200);
      res.end(
        bad + line({ type: "ERROR", object: status(410, "Expired", "too old resource version") }),
      );
    });
    const stream = await openWatch(lw);
    const items = await drain(stream);
    expect(items).toEqual([
      err({
        kind: "decode",
        message: "watch event of 65 bytes is not valid JSON at position 62",
        bytes: 65,
      }),
      ok({
        type: "ERROR",
        status: { code: 410, reason: "Expired", message: "too old resource version" },
      }),
    ]);
    expect(JSON.stringify(items)).not.toContain("c2VjcmV0LXZhbHVl");
  });

  it("maps a 410 answer to the watch request", async () => {
    const { lw } = await connect((_req, res) => {
      sendJson(res, 410, status(410, "Expired", "too old resource version: 1 (50)"));
    });
    expect(
      await lw.watch({
        resourceVersion: "1",
        timeoutSeconds: 5,
        signal: new AbortController().signal,
      }),
    ).toEqual(
      err({
        kind: "http",
        status: 410,
        reason: "Expired",
        message: "too old resource version: 1 (50)",
      }),
    );
  });

  it("ends with a network item when the server drops the connection mid-stream", async () => {
    const { lw } = await connect((req, res) => {
      res.writeHead(200);
      res.write(line({ type: "BOOKMARK", object: { metadata: { resourceVersion: "3" } } }));
      setTimeout(() => req.socket.destroy(), 20);
    });
    const stream = await openWatch(lw);
    const items = await drain(stream);
    expect(items[0]).toEqual(ok({ type: "BOOKMARK", resourceVersion: "3" }));
    expect(items.slice(1).map((i) => (i.ok ? i.value.type : i.error.kind))).toEqual(["network"]);
  });

  it("destroys the connection when the signal aborts an open watch, ending iteration quietly", async () => {
    const responses: http.ServerResponse[] = [];
    const { stub, lw } = await connect((_req, res) => {
      res.writeHead(200);
      res.flushHeaders();
      responses.push(res);
    });
    const controller = new AbortController();
    const stream = await openWatch(lw, { timeoutSeconds: 300, signal: controller.signal });
    const items = drain(stream);
    controller.abort();
    expect(await items).toEqual([]);
    await stub.clientClosed(0);
  });

  it("destroys the connection on close()", async () => {
    const { stub, lw } = await connect((_req, res) => {
      res.writeHead(200);
      res.flushHeaders();
    });
    const stream = await openWatch(lw, { timeoutSeconds: 300 });
    stream.close();
    expect(await drain(stream)).toEqual([]);
    await stub.clientClosed(0);
  });

  it("reports activity for every chunk, even an incomplete line", async () => {
    const { lw } = await connect(async (_req, res) => {
      res.writeHead(200);
      res.write('{"type":"BOOK');
      await pause(20);
      res.end('MARK","object":{"metadata":{"resourceVersion":"4"}}}\n');
    });
    let activity = 0;
    const stream = await openWatch(lw, {
      onActivity: () => {
        activity += 1;
      },
    });
    expect(await drain(stream)).toEqual([ok({ type: "BOOKMARK", resourceVersion: "4" })]);
    expect(activity).toBe(2);
  });
});

describe("createKubeTransport", () => {
  it("refuses a plain-HTTP server unless the kubeconfig skips TLS verification, as client-node does", async () => {
    const { KubeConfig } = await import("@kubernetes/client-node");
    const kc = new KubeConfig();
    kc.loadFromClusterAndUser(
      { name: "c", server: "http://127.0.0.1:1", skipTLSVerify: false },
      { name: "u" },
    );
    expect(createKubeTransport(kc)).toEqual(
      err({
        kind: "kubeconfig",
        message:
          "cluster server http://127.0.0.1:1 is plain HTTP: client-node requires insecure-skip-tls-verify: true for it",
      }),
    );
  });
});
