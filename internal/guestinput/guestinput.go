// Package guestinput carries the answers to a tool's input request from
// the transport, which verified them, to the toolhost_v1 input host
// function, which hands them to the guest: the one thing the two share
// about input requests, so that neither imports the other.
package guestinput

import "context"

type resumeKey struct{}

// WithResume returns ctx carrying doc, the abi.InputResume JSON of a
// resumed call (the tool's verified state and the user's answers).
func WithResume(ctx context.Context, doc []byte) context.Context {
	return context.WithValue(ctx, resumeKey{}, doc)
}

// Resume returns the document WithResume put in ctx, or nil when the call
// is not a resumed one.
func Resume(ctx context.Context) []byte {
	doc, _ := ctx.Value(resumeKey{}).([]byte)
	return doc
}
