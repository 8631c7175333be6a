package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically in Redis: each is one step no other replica
// can interleave with. Keys expire by Redis's clock (PEXPIRE), never a
// replica's. A key is a hash {owner, fp, state, outcome, caller}; owner is
// a random fencing token minted for each claim; waiters counts the claims
// (the leader's included) that still wait for a running execution, on
// every replica.

// acquire: KEYS[1] key; ARGV owner, fingerprint, lease_ms, caller,
// member (the key's name), accounting prefix, max keys per caller, max
// bytes per caller, the new key's bytes. Returns {"leader"},
// {"conflict"}, {"running", owner}, {"done", outcome} or {"limit", name,
// held, max, retry_ms}: a new key over its caller's bounds is refused
// before it is set, so no caller can fill Redis for the others.
var acquireScript = redis.NewScript(taskTime + "local acctPrefix = ARGV[6]\n" + accountLua + `
local v = redis.call('HMGET', KEYS[1], 'fp', 'state', 'outcome', 'owner')
if not v[1] then
  local refused = refusal(ARGV[4], ARGV[7], ARGV[8], ARGV[9], '')
  if refused then return refused end
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'fp', ARGV[2], 'state', 'running', 'caller', ARGV[4], 'waiters', 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  charge(ARGV[4], ARGV[5], now + tonumber(ARGV[3]), tonumber(ARGV[9]), false)
  return {'leader'}
end
if v[1] ~= ARGV[2] then return {'conflict'} end
if v[2] == 'done' then return {'done', v[3]} end
redis.call('HINCRBY', KEYS[1], 'waiters', 1)
return {'running', v[4]}
`)

// renew: KEYS[1] key; ARGV owner, lease_ms, member, accounting prefix.
// Extends a running claim's lease (and its caller's account of it) if
// ARGV owner still holds it; returns 1, or 0 when it does not.
var renewScript = redis.NewScript(taskTime + "local acctPrefix = ARGV[4]\n" + accountLua + `
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == 'running' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  charge(redis.call('HGET', KEYS[1], 'caller'), ARGV[3], now + tonumber(ARGV[2]), 0, false)
  return 1
end
return 0
`)

// complete: KEYS[1] key; ARGV owner, keep ("1" or "0"), ttl_ms, outcome,
// channel, message, member, accounting prefix. A kept outcome's bytes
// count against its caller until it expires; a key not kept leaves the
// caller's account. The fencing check: only the owner of a running claim
// may write; an owner whose lease lapsed (the key expired, or another
// owner claimed it since) gets 0 and changes nothing.
var completeScript = redis.NewScript(taskTime + "local acctPrefix = ARGV[8]\n" + accountLua + `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'running' then
  return 0
end
local caller = redis.call('HGET', KEYS[1], 'caller')
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'state', 'done', 'outcome', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  charge(caller, ARGV[7], now + tonumber(ARGV[3]), string.len(ARGV[4]), true)
else
  redis.call('DEL', KEYS[1])
  forget(caller, ARGV[7])
  touch(acct(caller))
end
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
`)

// release: KEYS[1] key; ARGV owner, channel, message, member, accounting
// prefix. One waiter of the
// running execution ARGV owner leads stops waiting; the last one abandons
// it: the key is freed and the abandonment published (the owner stops the
// execution). Returns 1 when this call abandoned it, else 0.
var releaseScript = redis.NewScript(taskTime + "local acctPrefix = ARGV[5]\n" + accountLua + `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'running' then
  return 0
end
if redis.call('HINCRBY', KEYS[1], 'waiters', -1) > 0 then return 0 end
local caller = redis.call('HGET', KEYS[1], 'caller')
redis.call('DEL', KEYS[1])
forget(caller, ARGV[4])
touch(acct(caller))
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`)
