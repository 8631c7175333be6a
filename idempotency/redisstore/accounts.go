package redisstore

import (
	"strconv"
	"time"

	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/internal/redisconn"
)

// Each caller's keys are accounted for in Redis beside the keys, so that
// every replica applies the same per-caller Limits atomically inside the
// claim script: a sorted set of the caller's keys scored by their expiry
// (idem:ca:<caller>), a sorted set of those kept for replay
// (idem:cd:<caller>, for RetryAfter), and a hash of their bytes with the
// sum in field "total" (idem:cb:<caller>). A member whose score has
// passed is a key Redis has expired: the scripts prune it before they
// count. The three expire with the caller's last key, so an idle caller
// leaves nothing behind.
//
// The global MaxKeys and MaxBytes are not applied: counting every
// caller's keys in one place would make every claim of the fleet write
// one hot key. Redis's maxmemory bounds the total (docs/SCALING.md).

// accountLua defines the scripts' accounting helpers. It expects now (ms,
// Redis TIME) and acctPrefix (the prefix of the caller keys) in scope.
const accountLua = `
local function acct(caller)
  return acctPrefix .. 'ca:' .. caller, acctPrefix .. 'cd:' .. caller, acctPrefix .. 'cb:' .. caller
end
local function touch(all, kept, bytes)
  local last = redis.call('ZRANGE', all, -1, -1, 'WITHSCORES')
  if not last[2] then
    redis.call('DEL', all, kept, bytes)
    return
  end
  local at = tonumber(last[2]) + 1
  redis.call('PEXPIREAT', all, at)
  redis.call('PEXPIREAT', bytes, at)
  if redis.call('EXISTS', kept) == 1 then redis.call('PEXPIREAT', kept, at) end
end
local function forget(caller, member)
  local all, kept, bytes = acct(caller)
  local b = redis.call('HGET', bytes, 'k:' .. member)
  if b then
    redis.call('HINCRBY', bytes, 'total', -tonumber(b))
    redis.call('HDEL', bytes, 'k:' .. member)
  end
  redis.call('ZREM', all, member)
  redis.call('ZREM', kept, member)
end
local function prune(caller)
  local all = acct(caller)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', all, '-inf', '(' .. now)) do forget(caller, m) end
end
local function charge(caller, member, expires, add, keep)
  local all, kept, bytes = acct(caller)
  redis.call('ZADD', all, expires, member)
  if keep then redis.call('ZADD', kept, expires, member) end
  redis.call('HINCRBY', bytes, 'k:' .. member, add)
  redis.call('HINCRBY', bytes, 'total', add)
  touch(all, kept, bytes)
end
-- refusal is the reply refusing caller a new entry of cost bytes over its
-- bounds (limit names start with what), or nil when it fits; expired
-- entries are pruned first.
local function refusal(caller, maxKeys, maxBytes, cost, what)
  prune(caller)
  local all, kept, bytes = acct(caller)
  local n = redis.call('ZCARD', all)
  local held = tonumber(redis.call('HGET', bytes, 'total') or '0')
  local limit, h, max
  if n >= tonumber(maxKeys) then
    limit, h, max = what .. 'keys per caller', n, maxKeys
  elseif held + tonumber(cost) > tonumber(maxBytes) then
    limit, h, max = what .. 'bytes per caller', held, maxBytes
  end
  if not limit then return nil end
  local old = redis.call('ZRANGE', kept, 0, 0, 'WITHSCORES')
  local retry = 0
  if old[2] then retry = tonumber(old[2]) - now end
  return {'limit', limit, tostring(h), tostring(max), tostring(retry)}
end
`

// entryOverhead matches the in-memory store's: a key's bytes beyond its
// name, fingerprint and outcome, so that many small keys count too.
const entryOverhead = 256

func (s *Store) acctPrefix() string { return s.conn.Key("idem:") }

// limitError is the claim script's refusal {"limit", name, held, max,
// retry_ms} as the in-memory store's error.
func limitError(reply []any, caller string) error {
	num := func(i int) int64 {
		n, _ := strconv.ParseInt(str(at(reply, i)), 10, 64)
		return n
	}
	err := &idempotency.LimitError{Limit: str(at(reply, 1)), Caller: caller, Held: num(2), Max: num(3)}
	if ms := num(4); ms > 0 {
		err.RetryAfter = redisconn.Duration(ms, time.Millisecond)
	}
	return err
}
