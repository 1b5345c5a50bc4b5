-- The order-free digest of the table nginx holds (ADR 67, ADR 70), for replica-mirror.lua:
-- "<count>:<a>:<b>", the number of lines and two sums mod 2^32 (8 hex digits each) of h and h*h,
-- h the CRC-32 of each line as the body of a PUT that would hold the table writes it, without its
-- "\n": "revision <n>", then every key of the whole generation with the overlay's value where it
-- has one, then the overlay's keys the whole generation has not. A key whose value is gone or
-- empty (removed by the overlay) has no line. The sidecar compares it with the digest of what it
-- pushed (src/push/nginx-digest.ts).
--
-- Two ways to the same answer. Kept: each PUT sums the lines it writes into "<gen>#sum", each PATCH
-- the whole generation's sum with its changed keys' lines taken out and put in into
-- "<overlay>#sum", so a check costs one dict read, not one per key (at 100k Apps 200k keys, 600 ms
-- of a worker every 5 s). It holds because no table key leaves the dict but by a write of
-- replica-mirror.lua: every write there is safe_set or safe_add, which never evict. Deep: every key
-- read from the dict again, which finds what the kept sum cannot, a key another writer of the dict
-- changed or a corruption; the sidecar asks for it on a slower timer.

local crc32, tohex = ngx.crc32_long, require("bit").tohex
local M = {}

local TWO32 = 4294967296

-- A sum of no line: { count, a, b }.
function M.new() return { 0, 0, 0 } end

-- Adds `line` to `sum` (`sign` 1), or takes it out (`sign` -1).
local function change(sum, line, sign)
  local h = crc32(line)
  local lo = h % 65536
  -- h*h mod 2^32 from its halves: lo*lo + (2*lo*hi mod 2^16) * 2^16, exact in a double.
  local square = (lo * lo + (2 * lo * ((h - lo) / 65536)) % 65536 * 65536) % TWO32
  sum[1] = sum[1] + sign
  sum[2], sum[3] = (sum[2] + sign * h) % TWO32, (sum[3] + sign * square) % TWO32
end
function M.add(sum, line) change(sum, line, 1) end
function M.remove(sum, line) change(sum, line, -1) end

-- The sum as a dict value, and back (nil for none).
function M.text(sum) return sum[1] .. " " .. sum[2] .. " " .. sum[3] end
function M.parse(text)
  local count, a, b = (text or ""):match("^(%d+) (%d+) (%d+)$")
  if count == nil then return nil end
  return { tonumber(count), tonumber(a), tonumber(b) }
end

-- The answer for a table of `sum` at `revision`.
function M.answer(sum, revision)
  local total = { sum[1], sum[2], sum[3] }
  M.add(total, "revision " .. revision)
  return total[1] .. ":" .. tohex(total[2]) .. ":" .. tohex(total[3])
end

-- The sum a PATCH's overlay `tables` (kind -> key -> value, an empty value removing the key)
-- leaves over the whole generation `gen` whose kept sum is `base`.
function M.overlaid(dict, gen, base, tables)
  local sum = { base[1], base[2], base[3] }
  for kind, values in pairs(tables) do
    for key, value in pairs(values) do
      local old = dict:get(gen .. kind .. key)
      if old ~= nil and old ~= "" then M.remove(sum, kind .. " " .. key .. " " .. old) end
      if value ~= "" then M.add(sum, kind .. " " .. key .. " " .. value) end
    end
  end
  return sum
end

-- The deep digest: each line hashed as its key is read, no body built, a 1 ms sleep every
-- DEEP_GROUP keys, so requests on this worker wait for one group at most. Not ngx.sleep(0): with
-- stock nginx that posts the handler to the queue nginx is draining, so it runs on at once and no
-- request does. `over` is the overlay's tables (kind -> key -> value).
local DEEP_GROUP = 500
function M.deep(dict, gen, revision, over)
  local sum = M.new()
  local seen = { ["="] = {}, ["*"] = {}, c = {}, n = {}, k = {} }
  local keys = dict:get(gen .. "#keys") or ""
  local at, from, n = #gen + 1, 1, 0
  while from <= #keys do
    local to = keys:find("\n", from, true) or #keys + 1
    local kind, key = keys:sub(from + at - 1, from + at - 1), keys:sub(from + at, to - 1)
    local value = over[kind][key]
    if value ~= nil then
      seen[kind][key] = true
    else
      value = dict:get(keys:sub(from, to - 1))
    end
    if value ~= nil and value ~= "" then M.add(sum, kind .. " " .. key .. " " .. value) end
    from, n = to + 1, n + 1
    if n % DEEP_GROUP == 0 then ngx.sleep(0.001) end
  end
  for kind, values in pairs(over) do
    local done = seen[kind]
    for key, value in pairs(values) do
      if not done[key] and value ~= "" then M.add(sum, kind .. " " .. key .. " " .. value) end
    end
  end
  return M.answer(sum, revision)
end

return M
