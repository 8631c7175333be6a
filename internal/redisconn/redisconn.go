// Package redisconn is toolhost's one connection to Redis, shared by the
// idempotency and governor stores: a go-redis client whose every command
// is bounded by a timeout, and a health state that turns "down" at the
// first failed command and "up" again when a background PING succeeds, so
// that callers decide their failure mode once instead of each waiting out
// a timeout while Redis is away.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of Options.
const (
	DefaultTimeout = 500 * time.Millisecond
	DefaultProbe   = 250 * time.Millisecond
)

// ErrDown is returned, wrapped with the cause, while Redis is unreachable:
// a command failed and no PING has succeeded since.
var ErrDown = errors.New("redis unavailable")

// Options configure Open. The zero value, with a URL, is usable.
type Options struct {
	// URL is redis://[user:password@]host:port/db.
	URL string
	// Timeout bounds every command (dial, write and read included); 0
	// means DefaultTimeout.
	Timeout time.Duration
	// Probe is how often a PING checks whether Redis is back while it is
	// down; 0 means DefaultProbe.
	Probe time.Duration
	// Prefix namespaces every key and channel, so that several fleets can
	// share one Redis; "" means "toolhost:".
	Prefix string
	// OnChange, if set, is called (from its own goroutine, in order) when
	// Redis goes down (err non-nil) or comes back (err nil).
	OnChange func(err error)
}

// SetLogger sends go-redis's own messages (reconnects of a pub/sub
// connection, and the like) to logger at debug level instead of plain
// lines on stderr, which would break a JSON log. go-redis has one logger
// per process.
func SetLogger(logger *slog.Logger) { redis.SetLogger(slogLogger{logger}) }

type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Printf(ctx context.Context, format string, v ...any) {
	s.l.DebugContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
}

// Conn is a Redis client with a health state. It is safe for concurrent
// use. Close it when done.
type Conn struct {
	// Client is the go-redis client; use Do to bound a command and track
	// health.
	Client *redis.Client
	prefix string
	opts   Options

	mu      sync.Mutex
	downErr error // nil while up
	probing bool
	changes chan error
	closed  chan struct{}
	closing sync.Once // closes closed: Close may race with itself at shutdown
	wg      sync.WaitGroup
}

// Open parses opts.URL and returns a Conn. It does not dial: the first
// command does, so a server that starts before Redis still serves.
func Open(opts Options) (*Conn, error) {
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("redis URL %q: %v (want redis://host:port/db)", opts.URL, err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Probe <= 0 {
		opts.Probe = DefaultProbe
	}
	if opts.Prefix == "" {
		opts.Prefix = "toolhost:"
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = opts.Timeout, opts.Timeout, opts.Timeout
	ro.PoolTimeout = opts.Timeout
	// No hidden retries: a command either answers within Timeout or fails,
	// and the caller's failure mode decides what happens next.
	ro.MaxRetries = -1
	c := &Conn{Client: redis.NewClient(ro), prefix: opts.Prefix, opts: opts,
		changes: make(chan error, 16), closed: make(chan struct{})}
	c.wg.Add(1)
	go c.notify()
	return c, nil
}

// Key returns name in the Conn's namespace.
func (c *Conn) Key(name string) string { return c.prefix + name }

// Timeout is the bound on one command.
func (c *Conn) Timeout() time.Duration { return c.opts.Timeout }

// Err returns nil while Redis is up, else an error wrapping ErrDown with
// the failure that took it down.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.downErr
}

// Do runs fn with a context bounded by the command timeout. A failure that
// is Redis's absence (not a script's or the caller's own cancellation)
// marks Redis down and is returned wrapping ErrDown. While Redis is down,
// Do fails at once without running fn, until a probe finds it back.
func (c *Conn) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := c.Err(); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.Timeout)
	defer cancel()
	err := fn(cctx)
	if err == nil || errors.Is(err, redis.Nil) || isReply(err) {
		return err
	}
	return c.down(err)
}

// isReply reports whether err is an answer from a working server (a
// script's error, a wrong type) rather than its absence.
func isReply(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	for _, p := range []string{"LOADING", "BUSY", "MASTERDOWN", "READONLY", "CLUSTERDOWN", "TRYAGAIN"} {
		if len(msg) >= len(p) && msg[:len(p)] == p {
			return false
		}
	}
	return true
}

// down records Redis as unreachable and starts the probe.
func (c *Conn) down(cause error) error {
	err := fmt.Errorf("%w: %v", ErrDown, cause)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.downErr != nil {
		return c.downErr
	}
	c.downErr = err
	c.event(err)
	if !c.probing {
		c.probing = true
		c.wg.Add(1)
		go c.probe()
	}
	return err
}

// probe PINGs every Probe until Redis answers, then marks it up.
func (c *Conn) probe() {
	defer c.wg.Done()
	t := time.NewTicker(c.opts.Probe)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
		err := c.Client.Ping(ctx).Err()
		cancel()
		if err == nil {
			c.mu.Lock()
			c.downErr, c.probing = nil, false
			c.event(nil)
			c.mu.Unlock()
			return
		}
	}
}

// event queues a health change for OnChange. Called with c.mu held; a
// full queue drops the change rather than block a command.
func (c *Conn) event(err error) {
	select {
	case c.changes <- err:
	default:
	}
}

func (c *Conn) notify() {
	defer c.wg.Done()
	for {
		select {
		case <-c.closed:
			return
		case err := <-c.changes:
			if c.opts.OnChange != nil {
				c.opts.OnChange(err)
			}
		}
	}
}

// Close stops the probe and closes the client. It may be called more than
// once, from several goroutines at a time: the first closes, the others
// return nil at once.
func (c *Conn) Close() error {
	first := false
	c.closing.Do(func() { first = true; close(c.closed) })
	if !first {
		return nil
	}
	c.wg.Wait()
	return c.Client.Close()
}
