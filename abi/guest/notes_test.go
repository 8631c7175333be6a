package guest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// recordNotes replaces the host calls for one test and returns what they
// were given, one line per note.
func recordNotes(t *testing.T) *[]string {
	t.Helper()
	var got []string
	oldP, oldL := hostProgress, hostLog
	hostProgress = func(done, total float64, msg string) abi.NoteStatus {
		got = append(got, fmt.Sprintf("progress %g/%g %s", done, total, msg))
		return abi.NoteAccepted
	}
	hostLog = func(level abi.LogLevel, msg string) abi.NoteStatus {
		got = append(got, fmt.Sprintf("log %s %s", level, msg))
		return abi.NoteAccepted
	}
	t.Cleanup(func() { hostProgress, hostLog = oldP, oldL })
	return &got
}

type countArgs struct {
	N int `json:"n"`
}

// A RegisterContext handler's notes reach the host; so do those of a
// plain handler that passes context.Background(). A context kept from a
// finished call reports nothing, during a later call or between calls.
func TestNotesReachTheHost(t *testing.T) {
	got := recordNotes(t)
	registered := tools
	t.Cleanup(func() { tools, manifest = registered, nil }) // other tests list the tools
	var kept context.Context
	RegisterContext("notes.count", Options{}, func(ctx context.Context, a countArgs) (int, error) {
		for i := 1; i <= a.N; i++ {
			Progress(ctx, float64(i), float64(a.N), "counting")
		}
		Log(ctx, abi.LogNotice, "counted")
		kept = ctx
		return a.N, nil
	})
	Register("notes.plain", Options{}, func(a countArgs) (int, error) {
		Progress(context.Background(), 1, 0, "")
		Log(kept, abi.LogError, "from a finished call")
		return 0, nil
	})
	if resp := string(Dispatch("notes.count", []byte(`{"n":2}`))); resp != `{"result":2}` {
		t.Fatalf("response %s", resp)
	}
	if resp := string(Dispatch("notes.plain", []byte(`{"n":0}`))); resp != `{"result":0}` {
		t.Fatalf("response %s", resp)
	}
	Log(kept, abi.LogError, "between calls")
	Progress(context.Background(), 9, 9, "between calls")
	want := "progress 1/2 counting|progress 2/2 counting|log notice counted|progress 1/0 "
	if s := strings.Join(*got, "|"); s != want {
		t.Errorf("notes %q, want %q", s, want)
	}
}
