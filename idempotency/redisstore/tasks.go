package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolhost/toolhost/idempotency"
)

// Tasks live in Redis as a hash {caller, fp, status, msg, result, input,
// created, updated, expires, alias} per task id, and an alias key (the
// scoped idempotency key) naming the task id. Times are Redis TIME in
// milliseconds. A working task has the store's lease as its expiry,
// renewed by the replica that created it while the task works: a task
// whose replica died is forgotten a lease later instead of reading
// "working" for ever. A task in input_required runs nowhere: it expires
// at the end of its wait, and the replica that resumes it renews it from
// then on. A terminal task is kept for the TTL.

// taskTime is Redis TIME in milliseconds, for the scripts.
const taskTime = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// createTaskScript: KEYS[1] task key, KEYS[2] alias key ("" when none);
// ARGV id, caller, fp, lease_ms, task key prefix, accounting prefix, max
// tasks per caller, max bytes per caller, the task's bytes. Returns
// {"created", fields...}, {"existing", id, fields...} or {"limit", name,
// held, max, retry_ms}: the caller's tasks are accounted for as its keys
// are (accounts.go), apart from them, as in the in-memory store.
var createTaskScript = redis.NewScript(taskTime + "local acctPrefix = ARGV[6]\n" + accountLua + `
if KEYS[2] ~= '' then
  local id = redis.call('GET', KEYS[2])
  if id then
    local t = redis.call('HGETALL', ARGV[5] .. id)
    if #t > 0 then return {'existing', id, t} end
  end
end
local refused = refusal(ARGV[2], ARGV[7], ARGV[8], ARGV[9], 'tasks: ')
if refused then return refused end
redis.call('HSET', KEYS[1], 'caller', ARGV[2], 'fp', ARGV[3], 'status', 'working', 'created', now, 'updated', now, 'expires', 0, 'alias', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if KEYS[2] ~= '' then redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[4]) end
charge(ARGV[2], ARGV[1], now + tonumber(ARGV[4]), tonumber(ARGV[9]), false)
return {'created', ARGV[1], redis.call('HGETALL', KEYS[1])}
`)

// renewTaskScript: KEYS[1] task key; ARGV id, lease_ms, accounting
// prefix. Extends a
// working task (and its alias); 0 once the task is terminal or gone.
var renewTaskScript = redis.NewScript(taskTime + "local acctPrefix = ARGV[3]\n" + accountLua + `
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
charge(redis.call('HGET', KEYS[1], 'caller'), ARGV[1], now + tonumber(ARGV[2]), 0, false)
local a = redis.call('HGET', KEYS[1], 'alias')
if a and a ~= '' and redis.call('GET', a) == ARGV[1] then redis.call('PEXPIRE', a, ARGV[2]) end
return 1
`)

// finishTaskScript: KEYS[1] task key; ARGV id, status, msg, result,
// ttl_ms, unalias ("1"/"0"), accounting prefix. The first end wins; returns the fields, or
// {} when the task is gone.
var finishTaskScript = redis.NewScript(taskTime + "local acctPrefix = ARGV[7]\n" + accountLua + `
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return {} end
if st == 'working' or st == 'input_required' then
  local ttl = tonumber(ARGV[5])
  local input = string.len(redis.call('HGET', KEYS[1], 'input') or '')
  redis.call('HDEL', KEYS[1], 'input')
  redis.call('HSET', KEYS[1], 'status', ARGV[2], 'msg', ARGV[3], 'result', ARGV[4], 'updated', now, 'expires', now + ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
  charge(redis.call('HGET', KEYS[1], 'caller'), ARGV[1], now + ttl, string.len(ARGV[3]) + string.len(ARGV[4]) - input, true)
  local a = redis.call('HGET', KEYS[1], 'alias')
  if a and a ~= '' and redis.call('GET', a) == ARGV[1] then
    if ARGV[6] == '1' then
      redis.call('DEL', a)
      redis.call('HSET', KEYS[1], 'alias', '')
    else
      redis.call('PEXPIRE', a, ttl)
    end
  end
end
return redis.call('HGETALL', KEYS[1])
`)

// awaitTaskScript: KEYS[1] task key; ARGV id, input, wait_ms, accounting
// prefix. Moves a working task to input_required, to expire (with its
// alias) at the end of the wait; the input counts against the caller's
// bytes. Returns the fields, or {} when the task is gone.
var awaitTaskScript = redis.NewScript(taskTime + "local acctPrefix = ARGV[4]\n" + accountLua + `
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return {} end
if st == 'working' then
  local w = tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'status', 'input_required', 'input', ARGV[2], 'updated', now, 'expires', now + w)
  redis.call('PEXPIRE', KEYS[1], w)
  charge(redis.call('HGET', KEYS[1], 'caller'), ARGV[1], now + w, string.len(ARGV[2]), false)
  local a = redis.call('HGET', KEYS[1], 'alias')
  if a and a ~= '' and redis.call('GET', a) == ARGV[1] then redis.call('PEXPIRE', a, w) end
end
return redis.call('HGETALL', KEYS[1])
`)

// swapTaskScript: KEYS[1] task key; ARGV id, prev, next, resume ("1"/"0"),
// lease_ms, accounting prefix. Compare and swap of an input_required
// task's input; resume moves it to working under the lease. Returns
// {swapped (1/0), fields}, or {} when the task is gone.
var swapTaskScript = redis.NewScript(taskTime + "local acctPrefix = ARGV[6]\n" + accountLua + `
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return {} end
local cur = redis.call('HGET', KEYS[1], 'input') or ''
if st ~= 'input_required' or cur ~= ARGV[2] then return {0, redis.call('HGETALL', KEYS[1])} end
local caller = redis.call('HGET', KEYS[1], 'caller')
if ARGV[4] == '1' then
  local lease = tonumber(ARGV[5])
  redis.call('HDEL', KEYS[1], 'input')
  redis.call('HSET', KEYS[1], 'status', 'working', 'updated', now, 'expires', 0)
  redis.call('PEXPIRE', KEYS[1], lease)
  charge(caller, ARGV[1], now + lease, -string.len(cur), false)
  local a = redis.call('HGET', KEYS[1], 'alias')
  if a and a ~= '' and redis.call('GET', a) == ARGV[1] then redis.call('PEXPIRE', a, lease) end
else
  redis.call('HSET', KEYS[1], 'input', ARGV[3], 'updated', now)
  charge(caller, ARGV[1], tonumber(redis.call('HGET', KEYS[1], 'expires')), string.len(ARGV[3]) - string.len(cur), false)
end
return {1, redis.call('HGETALL', KEYS[1])}
`)

// noteTaskScript: KEYS[1] task key; ARGV msg. Sets a working task's
// message; a terminal or missing task is left alone.
var noteTaskScript = redis.NewScript(taskTime + `
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return 0 end
redis.call('HSET', KEYS[1], 'msg', ARGV[1], 'updated', now)
return 1
`)

func (s *Store) taskKey(id string) string { return s.conn.Key("idem:task:" + id) }
func (s *Store) aliasKey(a string) string { return s.conn.Key("idem:talias:" + a) }
func (s *Store) taskPrefix() string       { return s.conn.Key("idem:task:") }

// taskAcctPrefix is where the callers' task accounts live, apart from
// their keys' (accounts.go).
func (s *Store) taskAcctPrefix() string { return s.conn.Key("idem:t") }
func (s *Store) run(ctx context.Context, sc *redis.Script, keys []string, args ...any) ([]any, error) {
	var reply []any
	err := s.conn.Do(ctx, func(ctx context.Context) error {
		var err error
		reply, err = sc.Run(ctx, s.conn.Client, keys, args...).Slice()
		return err
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, unavailable(err)
	}
	return reply, nil
}

// CreateTask implements idempotency.Tasks. A new task over its caller's
// Limits is a *idempotency.LimitError, as in the in-memory store; the
// totals are left to Redis's maxmemory, as for keys.
func (s *Store) CreateTask(ctx context.Context, t idempotency.Task, alias string) (idempotency.Task, bool, error) {
	aliasKey := ""
	if alias != "" {
		aliasKey = s.aliasKey(alias)
	}
	reply, err := s.run(ctx, createTaskScript, []string{s.taskKey(t.ID), aliasKey},
		t.ID, t.Caller, t.Fingerprint, s.opts.Lease.Milliseconds(), s.taskPrefix(), s.taskAcctPrefix(),
		s.opts.Limits.MaxKeysPerCaller, s.opts.Limits.MaxBytesPerCaller, len(t.ID)+len(alias)+len(t.Fingerprint)+entryOverhead)
	if err != nil {
		return idempotency.Task{}, false, err
	}
	if str(at(reply, 0)) == "limit" {
		return idempotency.Task{}, false, limitError(reply, t.Caller)
	}
	fields, _ := at(reply, 2).([]any)
	got := readTask(str(at(reply, 1)), fields)
	if str(at(reply, 0)) == "existing" {
		if got.Fingerprint != t.Fingerprint {
			return idempotency.Task{}, false, &idempotency.ConflictError{Key: alias}
		}
		return got, false, nil
	}
	go s.renewTask(t.ID)
	return got, true, nil
}

// renewTask keeps a working task alive while this replica runs it (see
// the package comment on tasks); it ends when the task is terminal or
// the store closes.
func (s *Store) renewTask(id string) {
	tick := time.NewTicker(s.opts.Lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-tick.C:
		}
		var alive int
		err := s.conn.Do(context.Background(), func(ctx context.Context) error {
			var err error
			alive, err = renewTaskScript.Run(ctx, s.conn.Client, []string{s.taskKey(id)}, id, s.opts.Lease.Milliseconds(), s.taskAcctPrefix()).Int()
			return err
		})
		if err == nil && alive == 0 {
			return // terminal (or gone): its TTL is set
		}
		// Redis away: try again at the next tick; the lease bounds the task.
	}
}

// GetTask implements idempotency.Tasks.
func (s *Store) GetTask(ctx context.Context, id string) (idempotency.Task, error) {
	var m map[string]string
	err := s.conn.Do(ctx, func(ctx context.Context) error {
		var err error
		m, err = s.conn.Client.HGetAll(ctx, s.taskKey(id)).Result()
		return err
	})
	if err != nil {
		return idempotency.Task{}, unavailable(err)
	}
	if len(m) == 0 {
		return idempotency.Task{}, fmt.Errorf("task %q: %w (it never existed, or it ended longer ago than the result is kept)", id, idempotency.ErrTaskNotFound)
	}
	return taskOf(id, m), nil
}

// FinishTask implements idempotency.Tasks.
func (s *Store) FinishTask(ctx context.Context, id string, end idempotency.TaskEnd) (idempotency.Task, error) {
	unalias := "0"
	if end.Unalias {
		unalias = "1"
	}
	reply, err := s.run(ctx, finishTaskScript, []string{s.taskKey(id)},
		id, string(end.Status), end.Message, end.Result, s.opts.TTL.Milliseconds(), unalias, s.taskAcctPrefix())
	if err != nil {
		return idempotency.Task{}, err
	}
	if len(reply) == 0 {
		return idempotency.Task{}, fmt.Errorf("task %q: %w", id, idempotency.ErrTaskNotFound)
	}
	return readTask(id, reply), nil
}

// NoteTask implements idempotency.TaskNotes.
func (s *Store) NoteTask(ctx context.Context, id, msg string) error {
	err := s.conn.Do(ctx, func(ctx context.Context) error {
		return noteTaskScript.Run(ctx, s.conn.Client, []string{s.taskKey(id)}, msg).Err()
	})
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// AwaitTaskInput implements idempotency.TaskInputs.
func (s *Store) AwaitTaskInput(ctx context.Context, id string, input []byte, wait time.Duration) (idempotency.Task, error) {
	reply, err := s.run(ctx, awaitTaskScript, []string{s.taskKey(id)}, id, input, wait.Milliseconds(), s.taskAcctPrefix())
	if err != nil {
		return idempotency.Task{}, err
	}
	if len(reply) == 0 {
		return idempotency.Task{}, fmt.Errorf("task %q: %w", id, idempotency.ErrTaskNotFound)
	}
	return readTask(id, reply), nil
}

// SwapTaskInput implements idempotency.TaskInputs. The replica that
// resumes a task renews it while it works, as the one that created it
// did.
func (s *Store) SwapTaskInput(ctx context.Context, id string, prev, next []byte, resume bool) (idempotency.Task, bool, error) {
	r := "0"
	if resume {
		r = "1"
	}
	reply, err := s.run(ctx, swapTaskScript, []string{s.taskKey(id)}, id, prev, next, r, s.opts.Lease.Milliseconds(), s.taskAcctPrefix())
	if err != nil {
		return idempotency.Task{}, false, err
	}
	if len(reply) == 0 {
		return idempotency.Task{}, false, fmt.Errorf("task %q: %w", id, idempotency.ErrTaskNotFound)
	}
	fields, _ := at(reply, 1).([]any)
	swapped, _ := at(reply, 0).(int64)
	if swapped == 1 && resume {
		go s.renewTask(id)
	}
	return readTask(id, fields), swapped == 1, nil
}

// readTask reads an HGETALL reply (field, value, ...).
func readTask(id string, flat []any) idempotency.Task {
	m := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		m[str(flat[i])] = str(flat[i+1])
	}
	return taskOf(id, m)
}

func taskOf(id string, m map[string]string) idempotency.Task {
	ms := func(k string) time.Time {
		n, err := strconv.ParseInt(m[k], 10, 64)
		if err != nil || n == 0 {
			return time.Time{}
		}
		return time.UnixMilli(n)
	}
	t := idempotency.Task{ID: id, Caller: m["caller"], Fingerprint: m["fp"], Status: idempotency.TaskStatus(m["status"]),
		Message: m["msg"], Created: ms("created"), Updated: ms("updated"), Expires: ms("expires")}
	if r := m["result"]; r != "" {
		t.Result = []byte(r)
	}
	if in := m["input"]; in != "" {
		t.Input = []byte(in)
	}
	return t
}
