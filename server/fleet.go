package server

import (
	"cmp"
	"fmt"
	"log/slog"
	neturl "net/url"

	"github.com/prometheus/client_golang/prometheus"
	brkredis "github.com/toolhost/toolhost/breaker/redisstore"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	govredis "github.com/toolhost/toolhost/governor/redisstore"
	"github.com/toolhost/toolhost/idempotency"
	idemredis "github.com/toolhost/toolhost/idempotency/redisstore"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/internal/redisconn"
)

// Events about the shared state (docs/SCALING.md).
const (
	// eventRedisState: Redis went down or came back.
	eventRedisState = "redis.state"
	// eventGovernorStore: the governor went to its local 1/N share of
	// every quota, or back to the shared pools.
	eventGovernorStore = "governor.store"
)

// fleet is a replica's link to the state it shares with the others: one
// Redis connection, the idempotency store and the governor store on it.
// A nil *fleet is a server on its own: every method gives the embedded
// default.
type fleet struct {
	conn     *redisconn.Conn
	idem     *idemredis.Store
	gov      *govredis.Store
	fallback *govredis.Fallback
	breakers *brkredis.Store
	settings config.Redis
}

// openFleet connects to the Redis at url (--redis, or [redis] url), with
// the rest of conf's [redis] section, or returns nil when url is empty. It does not wait for Redis: a replica
// started before Redis serves degraded until Redis answers.
func openFleet(url string, conf *config.Config, limits idempotency.Limits, bus *events.Bus, logger *slog.Logger) (*fleet, error) {
	var s config.Redis
	if conf != nil {
		s = conf.Redis
	}
	s.URL = url
	if s.URL == "" {
		return nil, nil
	}
	if msg := config.CheckRedisURL(s.URL); msg != "" {
		return nil, fmt.Errorf("--redis: %s", msg)
	}
	redisconn.SetLogger(logger)
	s.Idempotency = cmp.Or(s.Idempotency, config.IdempotencyFailClosed)
	s.Replicas = max(s.Replicas, 1)
	conn, err := redisconn.Open(redisconn.Options{URL: s.URL, Timeout: s.Timeout, OnChange: func(err error) {
		if err != nil {
			logger.Warn("redis is unreachable: quotas fall back to this replica's share, breakers to this replica's own state, keyed calls "+keyedWhileDown(s), "err", err, "replicas", s.Replicas)
			bus.Publish(eventRedisState, map[string]any{"state": "down", "error": err.Error()})
			return
		}
		logger.Info("redis is back: idempotency keys, quotas and breaker openings are shared again")
		bus.Publish(eventRedisState, map[string]any{"state": "up"})
	}})
	if err != nil {
		return nil, err
	}
	fl := &fleet{conn: conn, settings: s, gov: govredis.New(conn), breakers: brkredis.New(conn)}
	var ttl = idempotency.DefaultTTL
	if conf != nil && conf.Dispatch.IdempotencyTTL > 0 {
		ttl = conf.Dispatch.IdempotencyTTL
	}
	fl.idem = idemredis.New(idemredis.Options{Conn: conn, TTL: ttl, Lease: s.Lease, Errors: dispatcher.OutcomeErrors, Limits: limits})
	fl.fallback = govredis.NewFallback(fl.gov, s.Replicas, func(err error) {
		if err != nil {
			bus.Publish(eventGovernorStore, map[string]any{"store": "local", "replicas": s.Replicas, "error": err.Error()})
			return
		}
		bus.Publish(eventGovernorStore, map[string]any{"store": "shared", "replicas": s.Replicas})
	})
	logger.Info("sharing idempotency keys, quotas and breaker openings through redis", "url", redactURL(s.URL), "replicas", s.Replicas, "idempotency", s.Idempotency)
	return fl, nil
}

func keyedWhileDown(s config.Redis) string {
	if s.Idempotency == config.IdempotencyLocalFallback {
		return "are deduplicated within this replica only"
	}
	return "fail with transient"
}

// redactURL drops a password from a Redis URL for the log.
func redactURL(s string) string {
	if u, err := neturl.Parse(s); err == nil {
		return u.Redacted()
	}
	return s
}

// governorStore is the store the governor's quotas live in.
func (fl *fleet) governorStore(base governor.Config) governor.Config {
	if fl != nil {
		base.Store = fl.fallback
	}
	return base
}

// dispatcherConfig puts the shared idempotency store and breaker openings
// in base, with the in-memory store (within base's bounds) as the local
// fallback when the operator chose it.
func (fl *fleet) dispatcherConfig(base dispatcher.Config) dispatcher.Config {
	if fl == nil {
		return base
	}
	base.Idempotency = fl.idem
	base.BreakerShared = fl.breakers
	if fl.settings.Idempotency == config.IdempotencyLocalFallback {
		base.Idempotency = &idempotency.Fallback{Primary: fl.idem,
			Local: idempotency.NewMemoryWith(idempotency.MemoryOptions{TTL: base.IdempotencyTTL, Limits: base.IdempotencyLimits})}
	}
	return base
}

// degraded says what is wrong with the shared state, or "" when nothing
// is: /readyz reports it as degraded (the replica still serves).
func (fl *fleet) degraded() string {
	if fl == nil {
		return ""
	}
	if err := fl.conn.Err(); err != nil {
		return fmt.Sprintf("degraded: %v; quotas use this replica's 1/%d share, breakers this replica's own state, keyed calls %s", err, fl.settings.Replicas, keyedWhileDown(fl.settings))
	}
	return ""
}

// register adds the fleet's metrics: whether Redis answers, and the
// governor's local fallback.
func (fl *fleet) register(reg *prometheus.Registry) {
	if fl == nil {
		return
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toolhost_redis_up", Help: "1 while Redis answers, 0 while this replica runs degraded."},
			func() float64 {
				if fl.conn.Err() != nil {
					return 0
				}
				return 1
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "toolhost_governor_local_draws_total",
			Help: "Governor store operations served by this replica's local 1/N share because Redis did not answer."},
			func() float64 { return float64(fl.fallback.LocalDraws()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "toolhost_governor_local_spells_total",
			Help: "Times the governor went to its local share because Redis did not answer."},
			func() float64 { return float64(fl.fallback.Spells()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "toolhost_breaker_local_decisions_total",
			Help: "Breaker cool-downs that ended on this replica's own state because Redis did not answer."},
			func() float64 { return float64(fl.breakers.LocalDecisions()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "toolhost_breaker_unshared_openings_total",
			Help: "Breaker openings that stayed on this replica because Redis did not answer."},
			func() float64 { return float64(fl.breakers.LostOpenings()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "toolhost_breaker_dropped_notices_total",
			Help: "Messages on the breaker channel dropped: not naming a valid tool, or too many waiting at once."},
			func() float64 { return float64(fl.breakers.DroppedNotices()) }),
	)
}

// Close ends the subscriptions and the connection.
func (fl *fleet) Close() {
	if fl == nil {
		return
	}
	_ = fl.idem.Close()
	_ = fl.gov.Close()
	_ = fl.breakers.Close()
	_ = fl.conn.Close()
}
