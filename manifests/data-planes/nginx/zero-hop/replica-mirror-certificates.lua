-- replica-mirror's certificates by SNI for nginx's zero-hop mode (ADR 56), required by
-- replica-mirror.lua and installed beside it: each handshake on nginx.conf's TLS listener gets the
-- certificate of the App that holds its SNI name, from the "n" and "k" lines of the pushed table
-- (replica-mirror.lua's header; src/push/nginx-certificates.ts writes them). The private keys are
-- Secret bytes: nothing here logs a "k" value or an error that could quote one (OpenSSL's
-- messages name the call that failed, never the bytes).

local ssl = require "ngx.ssl"
local ffi = require "ffi"

local M = {}

-- ngx.ssl sets a key that is not the certificate's and the handshake fails after: each pair is
-- checked with OpenSSL's own X509_check_private_key (libcrypto, linked into nginx) before it is
-- served. parse_pem_cert's cdata is a STACK_OF(X509), leaf first.
ffi.cdef [[
void *OPENSSL_sk_value(const void *stack, int i);
int X509_check_private_key(const void *x509, const void *pkey);
void ERR_clear_error(void);
]]
local C = ffi.C

-- Each certificate this worker parsed, by its "k" value: { chain, key } as cdata, or false when
-- it could not be served (logged once). Parsing PEM costs more than a handshake's lookup: a
-- worker parses a value once (a string key is one hash lookup: LuaJIT interns strings), and
-- starts over past CACHED_PAIRS values (rotations leave old ones behind). By value, not by id: a
-- line someone else wrote under a good certificate's id never stands for the good one.
local CACHED_PAIRS = 2048
local parsed_pairs, pair_count = {}, 0

local function unusable(app, id, what)
  C.ERR_clear_error()
  ngx.log(ngx.ERR, "replica-mirror: the certificate ", id, " of App ", app, " is not served (",
    what, "): the default certificate is")
  return false
end

local function parse(app, id, value)
  local chain, key = value:match("^%x+;([^;]+);([^;]+)$")
  if not chain then return unusable(app, id, "malformed line") end
  local cert, err = ssl.parse_pem_cert(chain:gsub("|", "\n") .. "\n")
  if not cert then return unusable(app, id, err) end
  local pkey
  pkey, err = ssl.parse_pem_priv_key(key:gsub("|", "\n") .. "\n")
  if not pkey then return unusable(app, id, "the key does not parse: " .. tostring(err)) end
  if C.X509_check_private_key(C.OPENSSL_sk_value(cert, 0), pkey) ~= 1 then
    return unusable(app, id, "the key is not the certificate's")
  end
  return { cert, pkey }
end

local function pair_of(app, value)
  local pair = parsed_pairs[value]
  if pair == nil then
    if pair_count >= CACHED_PAIRS then parsed_pairs, pair_count = {}, 0 end
    pair = parse(app, value:match("^(%x+);") or "?", value)
    parsed_pairs[value], pair_count = pair, pair_count + 1
  end
  return pair
end

-- The function of ssl_certificate_by_lua: the certificate of the App that holds the SNI name,
-- exactly or by the wildcard one label up; otherwise (no SNI, an unknown name, no table, a
-- certificate that cannot be served) the default certificate of nginx.conf stays. An error never
-- fails the handshake. It reads the table as replica-mirror.lua keeps it: `dict`, the worker's
-- parsed overlay (`overlay_of(id)`: tables by kind, "n" and "k" among them) and the whole
-- generation's "k" values (`certificate_of(gen, app)`, kept per worker).
function M.handler(dict, overlay_of, certificate_of)
  -- The App serving an SNI name: the overlay's first (empty: removed since the whole table).
  local function app_of(over, gen, name)
    local app = over.n[name] or dict:get(gen .. "n" .. name)
    if app == "" then return nil end
    return app
  end

  local function serve_certificate()
    local name = ssl.server_name()
    if name == nil then return end
    local current = dict:get("current")
    if current == nil then return end
    local gen, _, overlay = current:match("^(%d+) (%d+) ?(%d*)$")
    local over = overlay_of(overlay)
    name = name:lower()
    local app = app_of(over, gen, name)
    if app == nil then
      -- A wildcard covers one label, as a certificate's does.
      local dot = name:find(".", 1, true)
      if dot == nil then return end
      app = app_of(over, gen, "*" .. name:sub(dot))
      if app == nil then return end
    end
    local value = over.k[app] or certificate_of(gen, app)
    if value == nil or value == "" then return end
    local pair = pair_of(app, value)
    if not pair then return end
    local ok, err = ssl.clear_certs()
    if ok then ok, err = ssl.set_cert(pair[1]) end
    if ok then ok, err = ssl.set_priv_key(pair[2]) end
    if not ok then
      -- Past clear_certs the default certificate is gone: this one handshake fails. The pair was
      -- parsed and checked, so only OpenSSL running out of memory gets here.
      C.ERR_clear_error()
      ngx.log(ngx.ERR, "replica-mirror: the certificate ", value:match("^(%x+);"), " of App ", app,
        " was not set: ", err)
    end
  end

  return function()
    local ok, err = pcall(serve_certificate)
    if not ok then ngx.log(ngx.ERR, "replica-mirror: choosing a certificate failed: ", err) end
  end
end

return M
