import { describe, expect, it } from "vitest";
import type { ListOptions, ListWatch, SecretObject } from "../../src/kube/cache/list-watch.ts";
import { err, ok } from "../../src/result.ts";
import { sendJson, status, TOKEN } from "../support/api-server-stub.ts";
import { connect, open, scope, secret, wireSecret } from "../support/list-watch-harness.ts";
import { waitUntil } from "../support/wait.ts";

/** A list's items, as they were handed on, with the page's end. */
async function listed(lw: ListWatch, options: Partial<ListOptions> = {}) {
  const items: SecretObject[] = [];
  const page = await lw.list(
    { signal: new AbortController().signal, ...options },
    (item) => void items.push(item),
  );
  return page.ok ? ok({ items, ...page.value }) : page;
}

describe("createListWatch: list and get", () => {
  it("lists a page with the bearer token, selectors, limit and continue", async () => {
    const { stub, lw } = await connect((_req, res) => {
      sendJson(res, 200, {
        kind: "SecretList",
        metadata: { resourceVersion: "100", continue: "next-page" },
        items: [wireSecret("a", "90")],
      });
    }, scope);
    const page = await listed(lw, { limit: 2, continue: "this-page" });
    expect(page).toEqual(
      ok({ items: [secret("a", "90")], resourceVersion: "100", continue: "next-page" }),
    );
    expect(stub.requests).toEqual([
      {
        path: "/api/v1/namespaces/ns1/secrets",
        query: {
          labelSelector: "app=shop",
          fieldSelector: "metadata.name=reg",
          limit: "2",
          continue: "this-page",
        },
        authorization: `Bearer ${TOKEN}`,
      },
    ]);
  });

  it("lists across all namespaces when the scope has none", async () => {
    const { stub, lw } = await connect((_req, res) => {
      sendJson(res, 200, { metadata: { resourceVersion: "1" }, items: [] });
    }, {});
    expect(await listed(lw)).toEqual(ok({ items: [], resourceVersion: "1" }));
    expect(stub.requests.map((r) => [r.path, r.query])).toEqual([["/api/v1/secrets", {}]]);
  });

  it("maps 429 with Retry-After, reading the Status body", async () => {
    const { lw } = await connect((_req, res) => {
      sendJson(res, 429, status(429, "TooManyRequests", "slow down"), { "retry-after": "7" });
    });
    expect(await listed(lw)).toEqual(
      err({
        kind: "http",
        status: 429,
        reason: "TooManyRequests",
        message: "slow down",
        retryAfterSeconds: 7,
      }),
    );
  });

  it("maps an error without a Status body to its HTTP status line", async () => {
    const { lw } = await connect((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html>bad gateway</html>");
    });
    expect(await listed(lw)).toEqual(
      err({ kind: "http", status: 502, reason: "Bad Gateway", message: "HTTP 502 Bad Gateway" }),
    );
  });

  it("reports a body that is not one whole JSON object as a decode error", async () => {
    const { lw } = await connect((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"items": [');
    });
    expect(await listed(lw)).toEqual(
      err({ kind: "decode", message: "list body ended before its JSON object did" }),
    );
  });

  it("treats an empty continue token as the last page and null items as none", async () => {
    const { lw } = await connect((_req, res) => {
      sendJson(res, 200, { metadata: { resourceVersion: "9", continue: "" }, items: null });
    });
    expect(await listed(lw)).toEqual(ok({ items: [], resourceVersion: "9" }));
  });

  it("names the item that failed, never its content", async () => {
    const { lw } = await connect((_req, res) => {
      sendJson(res, 200, {
        metadata: { resourceVersion: "9" },
        items: [wireSecret("a", "1"), { metadata: { namespace: "n", name: "s" } }],
      });
    });
    expect(await listed(lw)).toEqual(
      err({
        kind: "decode",
        message: "SecretList item 1: invalid_type at metadata.resourceVersion (expected string)",
      }),
    );
  });

  it("hands items on as they arrive, before the response has ended", async () => {
    let finish: () => void = () => {};
    const { lw } = await connect((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`{"kind":"SecretList","items":[${JSON.stringify(wireSecret("a", "1"))},`);
      finish = () =>
        res.end(`${JSON.stringify(wireSecret("b", "2"))}],"metadata":{"resourceVersion":"3"}}`);
    });
    const items: string[] = [];
    const pending = lw.list({ signal: new AbortController().signal }, (item) =>
      items.push(item.metadata.name),
    );
    await waitUntil(() => items.length === 1, { timeoutMs: 2_000, intervalMs: 5 });
    expect(items).toEqual(["a"]);
    finish();
    expect(await pending).toEqual(ok({ resourceVersion: "3" }));
    expect(items).toEqual(["a", "b"]);
  });

  it("gets one Secret by name, and null when it is absent", async () => {
    const { stub, lw } = await connect((_req, res, url) => {
      if (url.pathname.endsWith("/reg")) sendJson(res, 200, wireSecret("reg", "5"));
      else sendJson(res, 404, status(404, "NotFound", 'secrets "nope" not found'));
    }, {});
    const signal = new AbortController().signal;
    expect(await lw.get("ns2", "reg", signal)).toEqual(ok({ ...secret("reg", "5") }));
    expect(await lw.get("ns2", "nope", signal)).toEqual(ok(null));
    expect(stub.requests.map((r) => [r.path, r.query])).toEqual([
      ["/api/v1/namespaces/ns2/secrets/reg", {}],
      ["/api/v1/namespaces/ns2/secrets/nope", {}],
    ]);
  });

  it("reports a refused connection as a network error", async () => {
    const { stub, lw } = await connect(() => {});
    await open.splice(0)[0]?.stub.close();
    const page = await listed(lw);
    expect(page.ok ? undefined : page.error.kind).toBe("network");
    expect(stub.requests).toEqual([]);
  });

  it("resolves aborted and closes the connection when a list is aborted before the response", async () => {
    const { stub, lw } = await connect(() => {});
    const controller = new AbortController();
    const pending = lw.list({ signal: controller.signal }, () => {});
    await waitUntil(() => stub.requests.length === 1, { timeoutMs: 2_000, intervalMs: 5 });
    controller.abort();
    expect(await pending).toEqual(err({ kind: "aborted" }));
    await stub.clientClosed(0);
  });

  it("gets through a list selecting the name when the scope has a label selector", async () => {
    const { stub, lw } = await connect(
      (_req, res, url) => {
        const selected = url.searchParams.get("fieldSelector") === "metadata.name=shop";
        sendJson(res, 200, {
          metadata: { resourceVersion: "8" },
          items: selected ? [wireSecret("shop", "5")] : [],
        });
      },
      { labelSelector: "mirror=yes" },
    );
    const signal = new AbortController().signal;
    expect(await lw.get("ns2", "shop", signal)).toEqual(ok(secret("shop", "5")));
    expect(await lw.get("ns2", "other", signal)).toEqual(ok(null));
    expect(stub.requests.map((r) => [r.path, r.query])).toEqual([
      [
        "/api/v1/namespaces/ns2/secrets",
        { labelSelector: "mirror=yes", fieldSelector: "metadata.name=shop" },
      ],
      [
        "/api/v1/namespaces/ns2/secrets",
        { labelSelector: "mirror=yes", fieldSelector: "metadata.name=other" },
      ],
    ]);
  });
});
