package redisstore

import "github.com/redis/go-redis/v9"

// Every script reads the time from Redis (TIME), so all replicas share one
// clock, and runs atomically, so replicas' draws never interleave. A
// quota is one hash: tat and blocked (Unix microseconds) and its usage
// buckets "b:<index>". Times are in microseconds so that they stay exact
// in Lua's doubles; the emission interval is rounded up to one, so
// rounding never grants more than the quota.
//
// ARGV common to all: [1] emission µs, [2] burst, [3] bucket width µs,
// [4] window µs. Each returns {granted, wait µs, available (string), used,
// blocked µs, now µs}.
const prelude = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local T = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local width = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local buckets = 50
local tat = tonumber(redis.call('HGET', KEYS[1], 'tat') or '0')
local blocked = tonumber(redis.call('HGET', KEYS[1], 'blocked') or '0')
local function bucket() return string.format('b:%d', math.floor(now / width)) end
local function used()
  local cur = math.floor(now / width)
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
local function result(granted, wait)
  local avail = burst
  if tat > now then avail = avail - (tat - now) / T end
  if avail < 0 then avail = 0 end
  local b = blocked - now
  if b < 0 then b = 0 end
  local keep = math.max(window, tat - now, blocked - now)
  redis.call('PEXPIRE', KEYS[1], math.ceil(keep / 1000) + 1000)
  return {granted, wait, tostring(avail), used(), b, now}
end
`

// take: ARGV[5] cost, [6] reserve.
var takeScript = redis.NewScript(prelude + `
local cost = tonumber(ARGV[5])
local reserve = tonumber(ARGV[6])
local nxt = math.max(tat, now) + cost * T
local over = nxt - now - (burst - reserve) * T
if over <= 0 and now >= blocked then
  tat = nxt
  redis.call('HSET', KEYS[1], 'tat', string.format('%d', tat))
  redis.call('HINCRBY', KEYS[1], bucket(), cost)
  return result(1, 0)
end
return result(0, math.max(over, blocked - now, 0))
`)

// block: ARGV[5] duration µs.
var blockScript = redis.NewScript(prelude + `
local untl = now + tonumber(ARGV[5])
if untl > blocked then blocked = untl end
tat = math.max(tat, blocked + (burst - 1) * T)
redis.call('HSET', KEYS[1], 'blocked', string.format('%d', blocked), 'tat', string.format('%d', tat))
return result(0, 0)
`)

// refund: ARGV[5] cost.
var refundScript = redis.NewScript(prelude + `
local cost = tonumber(ARGV[5])
tat = math.max(tat - cost * T, now)
redis.call('HSET', KEYS[1], 'tat', string.format('%d', tat))
redis.call('HINCRBY', KEYS[1], bucket(), -cost)
return result(0, 0)
`)

var peekScript = redis.NewScript(prelude + `
return result(0, 0)
`)
