package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically in Redis: each is one step no other replica
// can interleave with. Keys expire by Redis's clock (PEXPIRE), never a
// replica's. A key is a hash {owner, fp, state, outcome, caller}; owner is
// a random fencing token minted for each claim; waiters counts the claims
// (the leader's included) that still wait for a running execution, on
// every replica.

// acquire: KEYS[1] key; ARGV owner, fingerprint, lease_ms, caller.
// Returns {"leader"}, {"conflict"}, {"running", owner} or {"done", outcome}.
var acquireScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'fp', 'state', 'outcome', 'owner')
if not v[1] then
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'fp', ARGV[2], 'state', 'running', 'caller', ARGV[4], 'waiters', 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'leader'}
end
if v[1] ~= ARGV[2] then return {'conflict'} end
if v[2] == 'done' then return {'done', v[3]} end
redis.call('HINCRBY', KEYS[1], 'waiters', 1)
return {'running', v[4]}
`)

// renew: KEYS[1] key; ARGV owner, lease_ms. Extends a running claim's
// lease if ARGV owner still holds it; returns 1, or 0 when it does not.
var renewScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == 'running' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`)

// complete: KEYS[1] key; ARGV owner, keep ("1" or "0"), ttl_ms, outcome,
// channel, message. The fencing check: only the owner of a running claim
// may write; an owner whose lease lapsed (the key expired, or another
// owner claimed it since) gets 0 and changes nothing.
var completeScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'running' then
  return 0
end
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'state', 'done', 'outcome', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
`)

// release: KEYS[1] key; ARGV owner, channel, message. One waiter of the
// running execution ARGV owner leads stops waiting; the last one abandons
// it: the key is freed and the abandonment published (the owner stops the
// execution). Returns 1 when this call abandoned it, else 0.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'running' then
  return 0
end
if redis.call('HINCRBY', KEYS[1], 'waiters', -1) > 0 then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`)
