package transport

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func sealerWith(t testing.TB, keys ...string) *stateSealer {
	t.Helper()
	var ks [][]byte
	for _, k := range keys {
		ks = append(ks, []byte(k))
	}
	s, err := newStateSealer(InputOptions{Keys: ks, StateTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	oldKey = strings.Repeat("o", MinInputKeyBytes)
	newKey = strings.Repeat("n", MinInputKeyBytes)
)

// A fleet rotates without breaking exchanges in flight: a state signed
// with the old key verifies once the new key signs and the old one still
// verifies, and is refused once the old key is dropped.
func TestInputStateKeyRotation(t *testing.T) {
	st := sealedState{Tool: "t", Caller: "alice", Args: "fp", IDs: []string{"b", "a"}, State: []byte("s")}
	token, err := sealerWith(t, oldKey).seal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		keys []string
		ok   bool
	}{
		{[]string{oldKey, newKey}, true}, // the new key added, second
		{[]string{newKey, oldKey}, true}, // the new key signs
		{[]string{newKey}, false},        // the old key dropped
	} {
		got, err := sealerWith(t, tc.keys...).open(token, "t", "alice", "fp")
		if (err == nil) != tc.ok {
			t.Errorf("keys %d: %v; want ok %v", len(tc.keys), err, tc.ok)
		}
		if err == nil && (string(got.State) != "s" || strings.Join(got.IDs, ",") != "a,b") {
			t.Errorf("opened %+v", got)
		}
	}
	if next, _ := sealerWith(t, newKey, oldKey).seal(st); sealerWith(t, oldKey).verifiedToken(next) {
		t.Error("a state signed after the rotation verified under the old key alone")
	}
}

func (s *stateSealer) verifiedToken(token string) bool {
	_, err := s.open(token, "t", "alice", "fp")
	return err == nil
}

// A state is refused after its TTL, and one longer than any this server
// issues is refused before it is decoded; a short key is refused at start.
func TestInputStateBounds(t *testing.T) {
	s := sealerWith(t, newKey)
	now := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return now }
	token, err := s.seal(sealedState{Tool: "t", Caller: "alice", Args: "fp", IDs: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute + time.Second)
	if _, err := s.open(token, "t", "alice", "fp"); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("after the TTL: %v", err)
	}
	if _, err := s.open(strings.Repeat("A", maxRequestState+1), "t", "alice", "fp"); err == nil || !strings.Contains(err.Error(), "more than this server ever issues") {
		t.Errorf("an oversized state: %v", err)
	}
	// The worst case: every byte of the state and the caller one JSON
	// would escape.
	big, err := s.seal(sealedState{Tool: strings.Repeat("t", 128), Caller: strings.Repeat("\"", 256), Args: strings.Repeat("f", 64),
		IDs: []string{"a", "b", "c", "d"}, State: bytes.Repeat([]byte{1}, 4096)})
	if err != nil || len(big) > maxRequestState {
		t.Errorf("the largest state a tool can keep seals to %d bytes (limit %d), %v", len(big), maxRequestState, err)
	}
	if err := CheckInputKeys([][]byte{[]byte("short")}); err == nil {
		t.Error("a 5-byte key was accepted")
	}
}

// BenchmarkInputState is what an exchange adds to the server's work: one
// seal when the tool asks, one open when the client answers.
func BenchmarkInputState(b *testing.B) {
	s := sealerWith(b, newKey, oldKey)
	st := sealedState{Tool: "web.delete", Caller: "alice", Args: strings.Repeat("f", 64), IDs: []string{"confirm"}, State: []byte(strings.Repeat("x", 256))}
	for b.Loop() {
		token, err := s.seal(st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.open(token, "web.delete", "alice", st.Args); err != nil {
			b.Fatal(err)
		}
	}
}
