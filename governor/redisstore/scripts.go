package redisstore

import "github.com/redis/go-redis/v9"

// Every script reads the time from Redis (TIME), so all replicas share one
// clock, and runs atomically, so replicas' draws never interleave. A
// quota is three hashes. KEYS[1]: tat and blocked (Unix microseconds) and
// its usage buckets "b:<index>". KEYS[2]: each agent's usage, a ring of
// the same buckets, field "s<slot>:<agent>" = "<index>:<used>" (a slot is
// index mod 50, so an agent holds at most 50 fields, reused as the window
// moves). KEYS[3]: the agents counted by name, agent = the index of its
// last draw; at most ARGV[5] of them, the others counted as "other".
// Times are in microseconds so that they stay exact in Lua's doubles; the
// emission interval is rounded up to one, so rounding never grants more
// than the quota.
//
// ARGV common to all: [1] emission µs, [2] burst, [3] bucket width µs,
// [4] window µs, [5] max agents. Each returns {granted, wait µs,
// available (string), used, blocked µs, now µs, agents}, agents being
// {name, used, …} from peek and empty from the others.
const prelude = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local T = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local width = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local maxagents = tonumber(ARGV[5])
local buckets = 50
local cur = math.floor(now / width)
local tat = tonumber(redis.call('HGET', KEYS[1], 'tat') or '0')
local blocked = tonumber(redis.call('HGET', KEYS[1], 'blocked') or '0')
local function bucket() return string.format('b:%d', cur) end
local function used()
  local sum = 0
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local f = all[i]
    if string.sub(f, 1, 2) == 'b:' then
      local idx = tonumber(string.sub(f, 3))
      if idx > cur - buckets and idx <= cur then
        sum = sum + tonumber(all[i + 1])
      elseif idx <= cur - buckets then
        redis.call('HDEL', KEYS[1], f)
      end
    end
  end
  return sum
end
-- agent: the name a draw (create) or a refund of name counts under.
local function agent(name, create)
  if name ~= 'other' then
    local last = redis.call('HGET', KEYS[3], name)
    if last then
      -- Written once per bucket, not once per draw.
      if create and tonumber(last) ~= cur then redis.call('HSET', KEYS[3], name, string.format('%d', cur)) end
      return name
    end
  end
  if name == 'other' or not create then return 'other' end
  if redis.call('HLEN', KEYS[3]) >= maxagents then
    -- Forget the agents whose draws all aged out, with their rings.
    local all = redis.call('HGETALL', KEYS[3])
    for i = 1, #all, 2 do
      if tonumber(all[i + 1]) <= cur - buckets then
        redis.call('HDEL', KEYS[3], all[i])
        local fields = {}
        for s = 0, buckets - 1 do fields[#fields + 1] = string.format('s%d:', s) .. all[i] end
        redis.call('HDEL', KEYS[2], unpack(fields))
      end
    end
    if redis.call('HLEN', KEYS[3]) >= maxagents then return 'other' end
  end
  redis.call('HSET', KEYS[3], name, string.format('%d', cur))
  return name
end
local function split(v)
  local sep = string.find(v, ':', 1, true)
  return tonumber(string.sub(v, 1, sep - 1)), tonumber(string.sub(v, sep + 1))
end
local function count(name, cost)
  local f = string.format('s%d:', cur % buckets) .. name
  local v = redis.call('HGET', KEYS[2], f)
  local n = 0
  if v then
    local idx, u = split(v)
    if idx == cur then n = u end
  end
  redis.call('HSET', KEYS[2], f, string.format('%d:%d', cur, n + cost))
end
local function agents()
  local sums = {}
  local all = redis.call('HGETALL', KEYS[2])
  for i = 1, #all, 2 do
    local f = all[i]
    local name = string.sub(f, string.find(f, ':', 1, true) + 1)
    local idx, u = split(all[i + 1])
    if idx > cur - buckets and idx <= cur then sums[name] = (sums[name] or 0) + u end
  end
  local out = {}
  for name, n in pairs(sums) do
    if n ~= 0 then out[#out + 1] = name; out[#out + 1] = n end
  end
  return out
end
local function result(granted, wait, per)
  local avail = burst
  if tat > now then avail = avail - (tat - now) / T end
  if avail < 0 then avail = 0 end
  local b = blocked - now
  if b < 0 then b = 0 end
  local keep = math.ceil(math.max(window, tat - now, blocked - now) / 1000) + 1000
  for k = 1, 3 do redis.call('PEXPIRE', KEYS[k], keep) end
  return {granted, wait, tostring(avail), used(), b, now, per or {}}
end
`

// take: ARGV[6] cost, [7] reserve, [8] agent.
var takeScript = redis.NewScript(prelude + `
local cost = tonumber(ARGV[6])
local reserve = tonumber(ARGV[7])
local nxt = math.max(tat, now) + cost * T
local over = nxt - now - (burst - reserve) * T
if over <= 0 and now >= blocked then
  tat = nxt
  redis.call('HSET', KEYS[1], 'tat', string.format('%d', tat))
  redis.call('HINCRBY', KEYS[1], bucket(), cost)
  count(agent(ARGV[8], true), cost)
  return result(1, 0)
end
return result(0, math.max(over, blocked - now, 0))
`)

// block: ARGV[6] duration µs.
var blockScript = redis.NewScript(prelude + `
local untl = now + tonumber(ARGV[6])
if untl > blocked then blocked = untl end
tat = math.max(tat, blocked + (burst - 1) * T)
redis.call('HSET', KEYS[1], 'blocked', string.format('%d', blocked), 'tat', string.format('%d', tat))
return result(0, 0)
`)

// refund: ARGV[6] cost, [7] agent.
var refundScript = redis.NewScript(prelude + `
local cost = tonumber(ARGV[6])
tat = math.max(tat - cost * T, now)
redis.call('HSET', KEYS[1], 'tat', string.format('%d', tat))
redis.call('HINCRBY', KEYS[1], bucket(), -cost)
count(agent(ARGV[7], false), -cost)
return result(0, 0)
`)

var peekScript = redis.NewScript(prelude + `
return result(0, 0, agents())
`)
