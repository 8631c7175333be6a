package server

import (
	"log/slog"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/transport"
)

// eventStreamOptions scopes each /events stream to the identity of its
// token, operators (--operator) excepted, within the stream bounds. With no
// tokens every request has the empty identity, which sees everything: one
// user on loopback.
func eventStreamOptions(s Settings) events.HandlerOptions {
	return events.HandlerOptions{
		Identity: func(r *http.Request) string {
			if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
				return ti.UserID
			}
			return ""
		},
		Operator:              func(id string) bool { return slices.Contains(s.Operators, id) },
		MaxStreams:            s.MaxEventStreams,
		MaxStreamsPerIdentity: s.MaxEventStreamsPerIdentity,
	}
}

// warnOperators says when --operator cannot take effect: without tokens
// every client already sees everything, and there is no identity to name.
func warnOperators(s Settings, tokens *transport.Tokens, logger *slog.Logger) {
	if len(s.Operators) > 0 && tokens == nil {
		logger.Warn("--operator has no effect without tokens: every /events client sees every call", "operators", s.Operators)
	}
}
