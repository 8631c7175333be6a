package main

import (
	"log/slog"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/transport"
)

// addBoundsFlags adds serve's flags for who sees which events and how much
// the event streams and the idempotency store may hold.
func addBoundsFlags(cmd *cobra.Command, f *serveFlags) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.operators, "operator", nil, "token identity that may see every identity's calls on /events (repeatable); others see only their own")
	fl.IntVar(&f.eventStreams, "max-event-streams", events.DefaultMaxStreams, "most /events streams open at once")
	fl.IntVar(&f.eventsPerID, "max-event-streams-per-identity", events.DefaultMaxStreamsPerIdentity, "most /events streams one identity may hold open")
	fl.IntVar(&f.idemKeys, "idempotency-max-keys", idempotency.DefaultMaxKeys, "most idempotency keys held (running or kept for replay); beyond, keyed calls are rate_limited")
	fl.IntVar(&f.idemKeysPerID, "idempotency-max-keys-per-identity", idempotency.DefaultMaxKeysPerCaller, "most idempotency keys one identity may hold")
	fl.Int64Var(&f.idemBytes, "idempotency-max-bytes", idempotency.DefaultMaxBytes, "most bytes of kept outcomes (results and keys) the idempotency store holds")
	fl.Int64Var(&f.idemBytesPerID, "idempotency-max-bytes-per-identity", idempotency.DefaultMaxBytesPerCaller, "most idempotency store bytes one identity may hold")
}

// eventStreamOptions scopes each /events stream to the identity of its
// token, operators (--operator) excepted, within the stream bounds. With no
// tokens every request has the empty identity, which sees everything: one
// user on loopback.
func eventStreamOptions(f serveFlags) events.HandlerOptions {
	return events.HandlerOptions{
		Identity: func(r *http.Request) string {
			if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
				return ti.UserID
			}
			return ""
		},
		Operator:              func(id string) bool { return slices.Contains(f.operators, id) },
		MaxStreams:            f.eventStreams,
		MaxStreamsPerIdentity: f.eventsPerID,
	}
}

// warnOperators says when --operator cannot take effect: without tokens
// every client already sees everything, and there is no identity to name.
func warnOperators(f serveFlags, tokens *transport.Tokens, logger *slog.Logger) {
	if len(f.operators) > 0 && tokens == nil {
		logger.Warn("--operator has no effect without tokens: every /events client sees every call", "operators", f.operators)
	}
}

// idempotencyConfig applies the store bounds of the flags to base.
func idempotencyConfig(f serveFlags, base dispatcher.Config) dispatcher.Config {
	base.IdempotencyLimits = idempotency.Limits{MaxKeys: f.idemKeys, MaxKeysPerCaller: f.idemKeysPerID,
		MaxBytes: f.idemBytes, MaxBytesPerCaller: f.idemBytesPerID}
	return base
}
