-- replica-mirror for HAProxy (2.6 and later): the action `lua.replica_mirror <route URL>` asks the
-- sidecar about the request's Host with HAProxy's own HTTP client (core.httpclient) and leaves
-- the answer in transaction variables for haproxy.cfg to act on:
--   txn.mirror.status       the sidecar's status; 0 when it did not answer
--   txn.mirror.reason       x-mirror-reason (404 unknown-host, 400 bad-host, 503 ...)
--   txn.mirror.retry_after  retry-after of a 503
--   txn.mirror.app          x-mirror-app; txn.mirror.revision x-mirror-revision
--   txn.mirror.credential   x-mirror-credential of a 200: the upstream's Authorization (Secret
--                           bytes: haproxy.cfg sets it on the request and nothing else reads it)
--   txn.mirror.upstream_host, txn.mirror.upstream_port   from x-mirror-upstream (http://host[:port])
--   txn.mirror.upstream_ip  set here when the upstream host is an IPv4 literal (no DNS needed)
-- The request body is never read or sent to the sidecar.
-- Connections to the sidecar are kept alive: the HTTP client's requests go through HAProxy's
-- internal <HTTPCLIENT> proxy, whose server keeps idle connections and, as its retries cover a
-- kept connection found closed, reuses them for every request (since 2.6.5; 2.6.0 to 2.6.4 open
-- a connection per request). A client object serves one request only.

local ANSWER_HEADERS = {
  ["x-mirror-reason"] = "txn.mirror.reason",
  ["retry-after"] = "txn.mirror.retry_after",
  ["x-mirror-app"] = "txn.mirror.app",
  ["x-mirror-revision"] = "txn.mirror.revision",
}

-- The first value of a response header (the httpclient's lists start at index 0).
local function first(headers, name)
  local values = headers[name]
  if values == nil then
    return nil
  end
  return values[0]
end

local function set_upstream(txn, upstream)
  local host, port = upstream:match("^http://([^/:]+):?(%d*)/?$")
  if host == nil then
    return
  end
  txn:set_var("txn.mirror.upstream_host", host)
  txn:set_var("txn.mirror.upstream_port", port ~= "" and tonumber(port) or 80)
  if host:match("^%d+%.%d+%.%d+%.%d+$") then
    txn:set_var("txn.mirror.upstream_ip", host)
  end
end

local function route(txn, url)
  -- An absent Host is sent as an empty X-Forwarded-Host, which the sidecar answers bad-host.
  local host = txn.sf:req_hdr("host") or ""
  local ok, answer = pcall(function()
    return core.httpclient():get({
      url = url,
      headers = { ["x-forwarded-host"] = { host } },
      timeout = 2000,
    })
  end)
  if not ok or answer == nil or answer.status == nil then
    txn:set_var("txn.mirror.status", 0)
    return
  end
  txn:set_var("txn.mirror.status", answer.status)
  local headers = answer.headers or {}
  for name, var in pairs(ANSWER_HEADERS) do
    local value = first(headers, name)
    if value ~= nil then
      txn:set_var(var, value)
    end
  end
  local upstream = first(headers, "x-mirror-upstream")
  if answer.status == 200 and upstream ~= nil then
    set_upstream(txn, upstream)
  end
  local credential = first(headers, "x-mirror-credential")
  if answer.status == 200 and credential ~= nil then
    txn:set_var("txn.mirror.credential", credential)
  end
end

core.register_action("replica_mirror", { "http-req" }, route, 1)
