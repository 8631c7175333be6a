package transport

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// InputOptions configure input requests (a tool asking the user through
// MCP elicitation). The zero value signs with a key made at start-up,
// which only this process knows: right for one server, wrong for a fleet,
// where every replica must verify what another signed.
type InputOptions struct {
	// Keys sign and verify the requestState toolhost hands a 2026-07-28
	// client between the two calls of an exchange: Keys[0] signs, every
	// key verifies (so a fleet rotates by adding the new key second, then
	// first, then dropping the old). Each is at least 32 bytes. Never
	// logged.
	Keys [][]byte
	// StateTTL is how long a requestState stays valid; 0 means 10 minutes.
	StateTTL time.Duration
}

// MinInputKeyBytes is the shortest key InputOptions.Keys accepts.
const MinInputKeyBytes = 32

// maxRequestState bounds the requestState a client may send back before
// anything is decoded: the guest's state is at most
// abi.MaxInputStateBytes (base64 twice: 16/9 of it), and what toolhost
// adds (names, the caller, the digest, ids) a few KiB at most.
const maxRequestState = 16 << 10

// stateLabel starts every MAC'd message, so that no other HMAC made with
// these keys can pass for a requestState.
const stateLabel = "toolhost/input-state/v1\x00"

// sealedState is what a requestState carries: the tool's own state and
// what it is bound to. It is signed, not encrypted: the client holding it
// may read it (docs/ABI.md says so to tool authors).
type sealedState struct {
	Tool   string   `json:"tool"`   // manifest name
	Caller string   `json:"caller"` // the identity that was asked
	Args   string   `json:"args"`   // dispatcher.Fingerprint of tool and arguments
	IDs    []string `json:"ids"`    // the ids of the requests asked, sorted
	Exp    int64    `json:"exp"`    // Unix seconds after which it is refused
	// State is bytes so that JSON carries it as base64 (4/3), never
	// escaped (up to 6 bytes a byte).
	State []byte `json:"state,omitempty"`
}

// stateSealer signs and opens requestStates. It is safe for concurrent
// use: it never changes after newStateSealer.
type stateSealer struct {
	keys [][]byte
	ttl  time.Duration
	now  func() time.Time
}

func newStateSealer(o InputOptions) (*stateSealer, error) {
	s := &stateSealer{keys: o.Keys, ttl: o.StateTTL, now: time.Now}
	if s.ttl <= 0 {
		s.ttl = 10 * time.Minute
	}
	for i, k := range s.keys {
		if len(k) < MinInputKeyBytes {
			return nil, fmt.Errorf("input state key %d is %d bytes; want at least %d", i+1, len(k), MinInputKeyBytes)
		}
	}
	if len(s.keys) == 0 {
		k := make([]byte, MinInputKeyBytes)
		_, _ = rand.Read(k)
		s.keys = [][]byte{k}
	}
	return s, nil
}

func (s *stateSealer) mac(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(stateLabel))
	m.Write(payload)
	return m.Sum(nil)
}

// seal returns the requestState for st, its expiry set from now.
func (s *stateSealer) seal(st sealedState) (string, error) {
	st.Exp = s.now().Add(s.ttl).Unix()
	slices.Sort(st.IDs)
	payload, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(s.keys[0], payload)), nil
}

// errStateInvalid is the one answer to a requestState that is not one of
// ours: the client learns nothing of why a forgery failed.
var errStateInvalid = errors.New("requestState is not one this server issued (altered, forged, or signed with a key no longer in use)")

// open verifies token and checks that it was issued for this tool,
// caller and arguments, and has not expired.
func (s *stateSealer) open(token, tool, caller, args string) (sealedState, error) {
	if len(token) > maxRequestState {
		return sealedState{}, fmt.Errorf("requestState is %d bytes, more than this server ever issues (%d)", len(token), maxRequestState)
	}
	p64, m64, ok := strings.Cut(token, ".")
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p64)
	mac, err2 := enc.DecodeString(m64)
	if !ok || err1 != nil || err2 != nil || !s.verified(payload, mac) {
		return sealedState{}, errStateInvalid
	}
	var st sealedState
	if err := json.Unmarshal(payload, &st); err != nil {
		return sealedState{}, errStateInvalid
	}
	switch {
	case st.Tool != tool:
		return sealedState{}, fmt.Errorf("requestState was issued for another tool, not %s", tool)
	case st.Caller != caller:
		return sealedState{}, errors.New("requestState was issued to another caller")
	case st.Args != args:
		return sealedState{}, errors.New("requestState was issued for other arguments: retry with the arguments of the call that asked")
	case s.now().Unix() > st.Exp:
		return sealedState{}, fmt.Errorf("requestState expired at %s: call the tool again without it", time.Unix(st.Exp, 0).UTC().Format(time.RFC3339))
	}
	return st, nil
}

func (s *stateSealer) verified(payload, mac []byte) bool {
	for _, k := range s.keys {
		if hmac.Equal(mac, s.mac(k, payload)) {
			return true
		}
	}
	return false
}

// CheckInputKeys reports whether keys can sign input states (each at
// least MinInputKeyBytes), for the config to refuse a bad one at start-up.
func CheckInputKeys(keys [][]byte) error {
	_, err := newStateSealer(InputOptions{Keys: keys})
	return err
}

// mustSealer is New's sealer. Keys that CheckInputKeys would refuse are
// logged (never the keys) and replaced by a key of this process only:
// states then stay valid on this server alone, which is safe.
func mustSealer(o InputOptions, logger *slog.Logger) *stateSealer {
	s, err := newStateSealer(o)
	if err != nil {
		logger.Error("input state keys refused; signing with a key of this process only", "err", err)
		o.Keys = nil
		s, _ = newStateSealer(o)
	}
	return s
}
