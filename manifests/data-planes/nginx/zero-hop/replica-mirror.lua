-- replica-mirror's zero-hop mode for nginx with Debian's libnginx-mod-http-lua: the sidecar PUTs
-- its whole routing table to /replica-mirror/table on the push listener (a Unix socket only it
-- and nginx reach: ADR 46), then PATCHes the changes since (ADR 44), and checks what nginx holds
-- (/replica-mirror/revision, /replica-mirror/digest: ADR 51); every request is answered from the
-- shared dict `replica_mirror` (see nginx.conf).
--
-- The table, one entry a line (src/push/nginx-table.ts writes it):
--   revision <n>           first line
--   base <generation>      second line of a PATCH: the whole table's generation it changes
--   = <hostname> <value>   an exact hostname
--   * <suffix> <value>     the wildcard *.<suffix>
--   c <app> <credential>   the App's credential, the upstream's whole Authorization value, as it
--                          is: the rest of the line (spaces, tabs and '|' included); after every
--                          entry, in App name order. In a PATCH, an empty one: the App has none.
--   n <name> <app>         an SNI name (an exact hostname or "*.<suffix>") served with the App's
--                          certificate; after the credentials, in name order (ADR 56)
--   k <app> <id>;<chain>;<key>  the App's certificate: its id (16 hex), its PEM chain and PEM
--                          private key, each line break written '|'; after the names, in App
--                          name order. In a PATCH an empty "n" or "k" value removes it.
-- Values, fields separated by '|': I|app|ipv4|port|flag|upstream and D|app|name|port|flag|upstream
-- (routed to an IPv4 literal or a DNS name; the flag is "c" when the App has a credential, empty
-- when not), N|app (no http://host[:port] upstream), S|app, U|app, O|app (503 secret-unavailable,
-- secret-unusable, credentials-off). No value holds the revision: a request takes it from
-- "current" with the generation, so the sidecar renders an App's line once, not at every push. A
-- credential is held once per App, read only for an entry that flags it, and a rotation is one
-- App's "c" line. The credentials are Secret bytes: they live in the dict and the workers' memory
-- only, and nothing here logs a value or returns one to a client.
--
-- The private keys are Secret bytes as the credentials are: nothing logs a "k" value (the
-- handshakes read them in replica-mirror-certificates.lua, installed beside this file).
--
-- A whole table (PUT) fills a new generation of keys ("<gen>=host", "<gen>*suffix",
-- "<gen>c<app>", "<gen>n<name>", "<gen>k<app>"); the changes since it (PATCH: the lines of the
-- Apps changed since that PUT, all of them each time, same hostnames) fill a new overlay
-- generation read before it. "current" ("<gen> <revision>" or "<gen> <revision> <overlay>") is
-- then switched with one set: a request reads "current" once, so it sees one whole table and its
-- revision. The generations a switch retires are deleted at the next
-- switch (a request that read "current" just before it may still read them).

local dict = ngx.shared.replica_mirror
local digest = require "replica-mirror-digest"
local M = {}

local function answer(status, reason, retry_after, text, app)
  ngx.status = status
  ngx.header["Content-Type"] = "text/plain"
  if reason then ngx.header["X-Mirror-Reason"] = reason end
  if retry_after then ngx.header["Retry-After"] = retry_after end
  if app then ngx.header["X-Mirror-App"] = app end
  ngx.print(text .. "\n")
  return ngx.exit(status)
end

-- The table's key: lower-cased, a port of 1 to 5 digits and then one trailing dot stripped.
local function key_of(lowered)
  local name, port = lowered:match("^(.*):(%d+)$")
  if name and #port <= 5 then lowered = name end
  if lowered:sub(-1) == "." then lowered = lowered:sub(1, -2) end
  return lowered
end

-- What /v1/route accepts: [a-z0-9_-] labels of 1 to 63 characters, at most 253 in all, one
-- optional trailing dot, an optional port of 1 to 5 digits; the last label not a number (digits,
-- or 0x and hex digits: an IPv4 literal in one of its spellings).
local function valid(lowered)
  local name = lowered
  local colon = name:find(":", 1, true)
  if colon then
    if not name:sub(colon + 1):match("^%d%d?%d?%d?%d?$") then return false end
    name = name:sub(1, colon - 1)
  end
  if name:sub(-1) == "." then name = name:sub(1, -2) end
  if #name == 0 or #name > 253 then return false end
  local last
  for label in (name .. "."):gmatch("([^.]*)%.") do
    if #label == 0 or #label > 63 or label:find("[^a-z0-9_-]") then return false end
    last = label
  end
  return not (last:find("^%d+$") or last:find("^0x%x*$"))
end

-- The client's own X-Mirror-* headers, whatever their case or place, never reach the upstream.
-- The raw header block is searched once; only a request that carries one pays for the table of
-- its headers.
local function strip_client_headers()
  if ngx.re.find(ngx.req.raw_header(true), [[^x-mirror-]], "ijom") then
    for name in pairs(ngx.req.get_headers(0, true)) do
      if name:sub(1, 9):lower() == "x-mirror-" then ngx.req.clear_header(name) end
    end
  end
end

-- The fields of an entry, without building a table: kind, app, host, port, credential flag,
-- upstream (the last field: an upstream may hold '|').
local function fields(value)
  local a = value:find("|", 1, true)
  local b = a and value:find("|", a + 1, true)
  local c = b and value:find("|", b + 1, true)
  local d = c and value:find("|", c + 1, true)
  local e = d and value:find("|", d + 1, true)
  return value:sub(1, 1), a and value:sub(a + 1, (b or 0) - 1), b and value:sub(b + 1, (c or 0) - 1),
    c and value:sub(c + 1, (d or 0) - 1), d and value:sub(d + 1, (e or 0) - 1), e and value:sub(e + 1)
end

-- The 503 of each kind of App not routed: its reason, retry-after and text (the hop
-- configuration's, ../../../base/nginx.conf).
local REFUSALS = {
  S = { "secret-unavailable", "5", "credentials not available yet" },
  U = { "secret-unusable", "5", "credentials not usable" },
  O = { "credentials-off", nil, "credentials not served" },
}

-- The overlay generation ("" for none) as this worker's own tables of exact names, wildcard
-- suffixes, credentials, SNI names and certificates (an empty one: the App has none since the
-- whole table), parsed from the dict once per overlay: a request reads it without the dict's
-- lock, and the overlay costs a table lookup a request rather than a dict read.
local function tables_of(text)
  local tables = { ["="] = {}, ["*"] = {}, c = {}, n = {}, k = {} }
  for kind, key, value in text:gmatch("\n([=*cnk]) (%S+) ([^\n]*)") do
    tables[kind][key] = value
  end
  return tables
end
local overlay_id, overlay_tables = "", tables_of("")
local function overlay_of(id)
  if id ~= overlay_id then
    overlay_id, overlay_tables = id, tables_of(dict:get(id .. "#table") or "")
  end
  return overlay_tables
end

-- The whole generation's credentials this worker has read, by App, so that a request reads a
-- Lua string it holds rather than copying the value out of the dict: a 1 KiB copy a request was
-- 1 KiB of garbage a request, and its collection most of what a credential cost (BENCHMARKS.md).
-- A generation's credentials never change (a rotation is the overlay's, read first), so the cache
-- is dropped only when the generation changes, or when it holds CACHED_CREDENTIALS Apps: at most
-- that many values (8 KiB each at most) a worker.
-- The same holds for the certificates' "k" values (4 KiB each at most for an EC chain of two),
-- which a handshake reads for the id of the certificate to serve.
local function generation_cache(kind, limit)
  local cached_gen, cached, cached_count = nil, {}, 0
  return function(gen, key)
    if gen ~= cached_gen or cached_count >= limit then
      cached_gen, cached, cached_count = gen, {}, 0
    end
    local value = cached[key]
    if value == nil then
      value = dict:get(gen .. kind .. key)
      if value ~= nil then cached[key], cached_count = value, cached_count + 1 end
    end
    return value
  end
end
local CACHED_CREDENTIALS = 4096
local credential_of = generation_cache("c", CACHED_CREDENTIALS)
local certificate_of = generation_cache("k", 2048)

-- The table held, as this worker last read "current": its generation, revision and overlay, and
-- the routes it has resolved since, by the request's Host as the client sent it. A route depends
-- on the Host and the table alone (a Host whose name nginx's $host does not match is resolved
-- anew each time: an absolute-form target, or a Host nginx reads otherwise), so a request to a
-- Host seen since the last push reads one dict key, "current", and no entry: the parsing, the
-- hostname's checks and the wildcard walk are done once per Host and table. The cache is dropped
-- at every push (a rotation included), and when it holds CACHED_ROUTES Hosts.
local CACHED_ROUTES = 16384
local held_current, held_gen, held_revision, held_over = nil, nil, nil, nil
local routes, route_count = {}, 0

local function hold(current)
  local gen, revision, overlay = current:match("^(%d+) (%d+) ?(%d*)$")
  held_current, held_gen, held_revision, held_over = current, gen, revision, overlay_of(overlay)
  routes, route_count = {}, 0
end

-- The route of `key` (the Host's name, lower-cased, without port or trailing dot): the entry's
-- fields, or the answer refusing it. Nil: no App serves it.
local function resolve(key, lowered)
  local over, gen = held_over, held_gen
  local value = over["="][key] or dict:get(gen .. "=" .. key)
  if value == nil then
    if not valid(lowered) then return { status = 400, reason = "bad-host", text = "bad host" } end
    -- Wildcards, the longest suffix first.
    local wild = over["*"]
    local dot = key:find(".", 1, true)
    while dot and value == nil do
      local suffix = key:sub(dot + 1)
      value = wild[suffix] or dict:get(gen .. "*" .. suffix)
      dot = key:find(".", dot + 1, true)
    end
    if value == nil then return nil end
  end
  local kind, app, host, port, flag, upstream = fields(value)
  local refusal = REFUSALS[kind]
  if refusal then
    local reason, retry, text = refusal[1], refusal[2], refusal[3]
    return { key = key, status = 503, reason = reason, retry_after = retry, text = text, app = app }
  end
  if kind == "N" then return { key = key, status = 502, text = "app has no http upstream" } end
  -- `host` and `port` are what balance() reads (ngx.ctx is the route itself).
  return {
    key = key,
    kind = kind,
    app = app,
    host = host,
    port = tonumber(port),
    port_text = port,
    credentialed = flag ~= "",
    upstream = upstream,
  }
end

-- The route of a Host not in the cache (or whose name nginx's $host does not match): cached when
-- the Host alone chose it.
local function route_of(host_header)
  local lowered = host_header:lower()
  local key = key_of(lowered)
  local cacheable = true
  -- nginx's $host is the Host's name, unless the request target is absolute-form: then its
  -- authority, which wins over Host (RFC 9112 §3.2.2) and goes on to the upstream as Host
  -- ($mirror_authority: $http_host keeps the value it was first read with).
  if key ~= ngx.var.host then
    cacheable = false
    local authority = ngx.var.request:match("^%S+ [hH][tT][tT][pP][sS]?://([^/?#%s]+)")
    if authority then
      ngx.var.mirror_authority = authority
      lowered = authority:lower()
      key = key_of(lowered)
    end
  end
  local route = resolve(key, lowered)
  if route == nil then return { status = 404, reason = "unknown-host", text = "unknown host" } end
  if cacheable and route.key then
    if route_count >= CACHED_ROUTES then routes, route_count = {}, 0 end
    routes[host_header], route_count = route, route_count + 1
  end
  return route
end

-- access_by_lua: answers a refusal, or leaves $mirror_* set for proxy_pass. nginx.conf routes with
-- the C module of module/ instead (ADR 86), which must answer as this does: this is its fallback
-- where the module cannot be loaded (module/BUILDING.md), and test/push/nginx-module.test.ts
-- compares the two byte for byte.
function M.route()
  strip_client_headers()
  local current = dict:get("current")
  if current == nil then
    return answer(503, "not-synced", "1", "routing table not synced yet")
  end
  if current ~= held_current then hold(current) end
  local host_header = ngx.var.http_host or ""
  local route = routes[host_header]
  if route == nil or route.key ~= ngx.var.host then route = route_of(host_header) end
  if route.status then
    return answer(route.status, route.reason, route.retry_after, route.text, route.app)
  end
  local app = route.app
  -- The App's credential replaces the Authorization the client sent ($mirror_authorization, which
  -- nginx.conf sends as the one Authorization; nginx refuses a request with two), also after the
  -- exec below; an App without one passes the client's. An entry that flags a credential the dict
  -- does not hold (written by another client of the socket, or deleted from the dict) is refused,
  -- never sent on without it: the sidecar's digest check puts the table back (5 s; 60 s deep).
  if route.credentialed then
    local credential = held_over.c[app] or credential_of(held_gen, app)
    if credential == nil or credential == "" then
      return answer(503, "not-synced", "1", "routing table not synced yet")
    end
    ngx.var.mirror_authorization = credential
  end
  ngx.var.mirror_app = app
  ngx.var.mirror_revision = held_revision
  ngx.var.mirror_upstream = route.upstream
  -- An IPv4 literal goes through the kept-alive upstream pool; a name needs the resolver.
  if route.kind == "D" then
    ngx.var.mirror_host = route.host
    ngx.var.mirror_port = route.port_text
    return ngx.exec("@replica_mirror_by_name")
  end
  ngx.ctx = route
end

local balancer = require "ngx.balancer"

-- balancer_by_lua of the pool: the peer access_by_lua chose.
function M.balance()
  local route = ngx.ctx
  local ok, err = balancer.set_current_peer(route.host, route.port)
  if not ok then
    ngx.log(ngx.ERR, "replica-mirror: ", err)
    return ngx.exit(502)
  end
end

-- ssl_certificate_by_lua: the SNI name's App's certificate, or the default one
-- (replica-mirror-certificates.lua).
M.certificate = require("replica-mirror-certificates").handler(dict, overlay_of, certificate_of)

local function body_of_request()
  ngx.req.read_body()
  local body = ngx.req.get_body_data()
  if body then return body end
  local path = ngx.req.get_body_file()
  if not path then return "" end
  local file = io.open(path, "rb")
  if not file then return nil end
  body = file:read("*a")
  file:close()
  return body
end

local function drop(gen)
  dict:delete(gen .. "#table")
  dict:delete(gen .. "#sum")
  local keys = dict:get(gen .. "#keys")
  if keys == nil then return end
  for key in keys:gmatch("[^\n]+") do dict:delete(key) end
  dict:delete(gen .. "#keys")
end

local function fail(status, ...)
  ngx.status = status
  ngx.say(...)
  return ngx.exit(status)
end

-- PUT /replica-mirror/table: the whole table, which replaces the one held; answers its
-- generation. PATCH: "base <generation>" on the second line, then the lines of the Apps changed
-- since that PUT; 409 unless that generation is the one held.
function M.load()
  local method = ngx.req.get_method()
  if method ~= "PUT" and method ~= "PATCH" then return ngx.exit(405) end
  local body = body_of_request()
  local revision = body and body:match("^revision (%d+)\n")
  if not revision then return fail(400, "the table must start with a revision line") end
  -- A credential goes to the upstream as it is ($mirror_authorization in nginx.conf): a CR or NUL
  -- in one would end or split the header, so a body that holds one is refused whole (the sidecar
  -- never sends one: credentialValue).
  for value in body:gmatch("\nc %S+ ([^\n]*)") do
    if value:find("[%z\r]") then return fail(400, "a credential holds a CR or NUL") end
  end
  local current = dict:get("current")
  local held, _, held_overlay = (current or ""):match("^(%d+) (%d+) ?(%d*)$")
  local base
  if method == "PATCH" then
    base = body:match("^revision %d+\nbase (%d+)\n")
    if not base then return fail(400, "changes must name their base on the second line") end
    if base ~= held then return fail(409, "the base generation is not the one held") end
  end
  -- The generations the last switch retired go first: at most the table held and the new one
  -- share the dict while it fills (two generations of 10k Apps with 8 KiB credentials: nginx.conf).
  -- Every write below is safe_set or safe_add, which never evict: no table key leaves the dict but
  -- by drop, which the kept digest relies on (replica-mirror-digest.lua).
  for old in (dict:get("retired") or ""):gmatch("%d+") do drop(old) end
  dict:safe_set("retired", "")
  dict:safe_add("generation", 0)
  local gen = dict:incr("generation", 1)
  if not gen then return fail(507, "the shared dict is full") end
  local sum
  if base then
    -- An overlay is one value, which each worker parses once (overlay_of).
    local ok, err = dict:safe_set(gen .. "#table", body)
    if not ok then return fail(507, "the shared dict is full: ", err) end
    local kept = digest.parse(dict:get(held .. "#sum"))
    -- A generation without a kept sum is summed by the deep digest only.
    sum = kept and digest.overlaid(dict, held, kept, tables_of(body))
  end
  local keys = {}
  if not base then sum = digest.new() end
  for kind, key, value in (base and "" or body):gmatch("\n([=*cnk]) (%S+) ([^\n]*)") do
    local full = gen .. kind .. key
    local ok, err = dict:safe_set(full, value)
    if not ok then
      for _, k in ipairs(keys) do dict:delete(k) end
      return fail(507, "the shared dict is full: ", err)
    end
    keys[#keys + 1] = full
    if value ~= "" then digest.add(sum, kind .. " " .. key .. " " .. value) end
  end
  local switched = base and (base .. " " .. revision .. " " .. gen) or (gen .. " " .. revision)
  local filled = (base or dict:safe_set(gen .. "#keys", table.concat(keys, "\n")))
    and (sum == nil or dict:safe_set(gen .. "#sum", digest.text(sum)))
    and dict:safe_set("current", switched)
  if not filled then
    drop(gen)
    for _, k in ipairs(keys) do dict:delete(k) end
    return fail(507, "the shared dict is full")
  end
  local retired = {}
  if held_overlay and held_overlay ~= "" then retired[#retired + 1] = held_overlay end
  if not base and held then retired[#retired + 1] = held end
  -- Should this fail, the generations it names stay in the dict until nginx restarts.
  dict:safe_set("retired", table.concat(retired, " "))
  if base then
    ngx.status = 204
    return ngx.exit(204)
  end
  -- A whole table leaves this worker tens of MB of garbage (its body, and strings for each line):
  -- collected here, in the push, not a step at a time by the requests of the seconds after it.
  body, keys = nil, nil
  collectgarbage()
  ngx.print(gen)
  return ngx.exit(200)
end

-- GET /replica-mirror/revision: the revision of the table held, or 404 before the first push.
function M.revision()
  local current = dict:get("current")
  if current == nil then return ngx.exit(404) end
  -- The second field: after a PATCH a third, the overlay's generation, follows it.
  ngx.print(current:match("^%d+ (%d+)"))
  return ngx.exit(200)
end

-- GET /replica-mirror/digest: the order-free digest of the table held (replica-mirror-digest.lua,
-- ADR 67, ADR 70), as the PUT and PATCHes that wrote it kept it; GET /replica-mirror/digest?deep=1:
-- the same digest of every key read from the dict now. 404 before the first push.
function M.digest()
  local current = dict:get("current")
  if current == nil then return ngx.exit(404) end
  local gen, revision, overlay = current:match("^(%d+) (%d+) ?(%d*)$")
  local summed = overlay ~= "" and overlay or gen
  local kept = ngx.var.arg_deep == nil and digest.parse(dict:get(summed .. "#sum"))
  if kept then
    ngx.print(digest.answer(kept, revision))
  else
    ngx.print(digest.deep(dict, gen, revision, overlay_of(overlay)))
  end
  return ngx.exit(200)
end

return M
