package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/extism"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/guestinput"
	"github.com/toolhost/toolhost/internal/guestnote"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// extismModule loads the go-pdk plugin at pkg in a runtime of its own
// configured by cfg.
func extismModule(t *testing.T, pkg string, cfg host.Config) *host.Module {
	t.Helper()
	path := testwasm.Go(t, pkg)
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.CacheDir = cacheDir
	rt, err := host.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const extismV2 = "./host/testdata/extism/v2"

func TestExtismV2ListsAndCalls(t *testing.T) {
	m := extismModule(t, extismV2, host.Config{ExtismConfig: map[string]map[string]string{
		"host_testdata_extism_v2.wasm": {"greeting": "hej"}}, ExtismKeyring: map[string]map[string]map[string]string{
		"host_testdata_extism_v2.wasm": {"context7": {"api_key": "k3y", "a b": "spaced"}}, "other.wasm": {"svc": {"u": "not yours"}}}})
	var names []string
	for _, tool := range m.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "echo,fail,spin,hog,fetch,notes,config,sample,keyring,token,roots,changed,ask" {
		t.Fatalf("tools = %s", got)
	}
	if got := m.ExtismInterface(); got != "hyper-mcp v2" {
		t.Errorf("ExtismInterface() = %q", got)
	}
	echo := m.Tools[0]
	if echo.Title != "Echo" || !echo.ReadOnly || !echo.Idempotent || echo.Instances != abi.InstancesReuse {
		t.Errorf("echo = %+v, want the title and hints mapped, and reuse", echo)
	}
	ctx := context.Background()
	res, err := m.Call(ctx, "echo", []byte(`{"text":"hi"}`), host.Limits{})
	if err != nil || string(res) != `{"calls":1,"text":"hi"}` {
		t.Errorf("echo = %s, %v", res, err)
	}
	_, err = m.Call(ctx, "fail", nil, host.Limits{})
	var ae *abi.Error
	if !errors.As(err, &ae) || ae.Kind != abi.KindInternal || ae.Message != "it failed on purpose" {
		t.Errorf("fail: %v, want the plugin's isError text as an internal error", err)
	}
	res, err = m.Call(ctx, "config", nil, host.Limits{})
	if err != nil || string(res) != `{"greeting":"hej","set":true}` {
		t.Errorf("config = %s, %v", res, err)
	}
	// What toolhost does not do for plugins is refused when they ask, each
	// saying what instead; the plugin loads with every import.
	for tool, want := range map[string]string{
		"sample": "extism:host/user create_message: not supported by toolhost (toolhost sends no sampling requests",
		"roots":  "extism:host/user list_roots: not supported by toolhost (toolhost asks clients for no roots",
		"token":  `extism:host/user get_access_token: not supported by toolhost (toolhost runs no OAuth flows for plugins; the operator injects an upstream's credential into the plugin's requests with [grants."MODULE.wasm".headers."HOST"])`,
	} {
		_, err = m.Call(ctx, tool, nil, host.Limits{})
		if !errors.Is(err, extism.ErrUnsupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want ErrUnsupported saying %q", tool, err, want)
		}
	}
	// List-changed notices are accepted and dropped: the list is the one
	// read at load.
	res, err = m.Call(ctx, "changed", nil, host.Limits{})
	if err != nil || string(res) != `"noted"` {
		t.Errorf("changed = %s, %v", res, err)
	}
	// The keyring answers only what the operator mapped for this plugin,
	// through either module name a plugin may import it from.
	for args, want := range map[string]string{
		`{"service":"context7","user":"api_key"}`:                 `"k3y"`,
		`{"service":"context7","user":"api_key","module":"user"}`: `"k3y"`,
		`{"service":"context7","user":"a b"}`:                     `"spaced"`,
	} {
		res, err := m.Call(ctx, "keyring", []byte(args), host.Limits{})
		if err != nil || string(res) != want {
			t.Errorf("keyring %s = %s, %v, want %s", args, res, err, want)
		}
	}
	for args, want := range map[string]string{
		`{"service":"context7","user":"other"}`: `get_keyring_secret: the operator maps no secret to keyring entry service "context7", user "other"; map one with [modules."host_testdata_extism_v2.wasm".keyring."context7"] other = {env = "NAME"} or {file = "PATH"} in the config file`,
		`{"service":"svc","user":"u"}`:          `[modules."host_testdata_extism_v2.wasm".keyring."svc"] u = `,
		`{"service":"s","user":"a.b"}`:          `keyring."s"] "a.b" = `,
	} {
		res, err := m.Call(ctx, "keyring", []byte(args), host.Limits{})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "not yours") {
			t.Errorf("keyring %s = %s, %v, want a refusal saying %q", args, res, err, want)
		}
	}
	_, err = m.Call(ctx, "nosuch", nil, host.Limits{})
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "no tool nosuch") {
		t.Errorf("nosuch: %v, want the plugin's error_set message", err)
	}
}

func TestExtismV1(t *testing.T) {
	m := extismModule(t, "./host/testdata/extism/v1", host.Config{})
	if len(m.Tools) != 1 || m.Tools[0].Name != "hello" {
		t.Fatalf("tools = %+v", m.Tools)
	}
	res, err := m.Call(context.Background(), "hello", []byte(`{"name":"bob"}`), host.Limits{})
	if err != nil || string(res) != `"hello, bob"` {
		t.Errorf("hello = %s, %v", res, err)
	}
}

// A warm instance keeps the plugin's vars, as hyper-mcp's one instance
// per plugin does; a fresh one starts from nothing.
func TestExtismVarsLiveInWarmInstances(t *testing.T) {
	m := extismModule(t, extismV2, host.Config{})
	ctx := context.Background()
	call := func(reuse bool, caller string) string {
		res, err := m.Do(ctx, host.Request{Tool: "echo", Args: []byte(`{"text":"x"}`), Reuse: reuse, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		return string(res)
	}
	for i, want := range []string{`{"calls":1,"text":"x"}`, `{"calls":2,"text":"x"}`, `{"calls":3,"text":"x"}`} {
		if got := call(true, "a"); got != want {
			t.Errorf("warm call %d = %s, want %s", i+1, got, want)
		}
	}
	if got := call(true, "b"); got != `{"calls":1,"text":"x"}` {
		t.Errorf("another caller's first call = %s, want its own instance", got)
	}
	if got := call(false, "a"); got != `{"calls":1,"text":"x"}` {
		t.Errorf("fresh call = %s, want a fresh kernel", got)
	}
}

func TestExtismDeadlineStopsPlugin(t *testing.T) {
	m := extismModule(t, extismV2, host.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Call(ctx, "spin", nil, host.Limits{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("spin: %v, want the deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("spin stopped after %v", d)
	}
}

func TestExtismMemoryCaps(t *testing.T) {
	m := extismModule(t, extismV2, host.Config{})
	lim := host.Limits{MemoryBytes: 32 << 20}
	for _, tc := range []struct{ args, want string }{
		{`{"kernel":false}`, "out of memory"},
		{`{"kernel":true}`, "over its 33554432-byte limit"},
	} {
		_, err := m.Call(context.Background(), "hog", []byte(tc.args), lim)
		var f *host.Fault
		if !errors.As(err, &f) || !strings.Contains(f.Error(), tc.want) {
			t.Errorf("hog %s: %v, want a fault saying %q", tc.args, err, tc.want)
		}
	}
}

func TestExtismHTTPThroughEgress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("pong"))
	}))
	defer srv.Close()
	args, _ := json.Marshal(map[string]string{"url": srv.URL + "/ping"})
	file := filepath.Base(testwasm.Go(t, extismV2))

	refused := extismModule(t, extismV2, host.Config{})
	_, err := refused.Call(context.Background(), "fetch", args, host.Limits{})
	var re *toolhostv1.EgressRefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "has no egress grant") {
		t.Fatalf("fetch without a grant: %v, want a refusal naming the grant", err)
	}
	if refused.OpenWorld() {
		t.Error("OpenWorld without a grant")
	}

	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	granted := extismModule(t, extismV2, host.Config{Egress: toolhostv1.Egress{Grants: map[string]toolhostv1.Grant{
		file: {Hosts: []string{"127.0.0.1"}, Schemes: []string{"http"}, AllowNetworks: loopback}}}})
	res, err := granted.Call(context.Background(), "fetch", args, host.Limits{})
	if err != nil || string(res) != `{"body":"pong","status":200,"type":"text/plain"}` {
		t.Fatalf("fetch with a grant = %s, %v", res, err)
	}
	if !granted.OpenWorld() {
		t.Error("not OpenWorld with a grant and http_request imported")
	}
}

type extismSink struct {
	mu    sync.Mutex
	notes []string
}

func (s *extismSink) Progress(done, total float64, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, "progress "+strings.Join([]string{ftoa(done), ftoa(total), msg}, " "))
}

func (s *extismSink) Log(level abi.LogLevel, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, "log "+level.String()+" "+msg)
}

func ftoa(f float64) string { b, _ := json.Marshal(f); return string(b) }

func TestExtismNotes(t *testing.T) {
	m := extismModule(t, extismV2, host.Config{})
	sink := &extismSink{}
	res, err := m.Call(guestnote.WithSink(context.Background(), sink), "notes", nil, host.Limits{})
	if err != nil || string(res) != `"done"` {
		t.Fatalf("notes = %s, %v", res, err)
	}
	got := strings.Join(sink.notes, "; ")
	if !strings.Contains(got, "log info working") || !strings.Contains(got, "progress 2 2 step") || !strings.Contains(got, "log warning v2: careful") {
		t.Errorf("notes = %s, want the log and the last progress", got)
	}
}

func TestExtismLoadRefusals(t *testing.T) {
	rt, err := host.New(context.Background(), host.Config{Logger: slog.New(slog.DiscardHandler), CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	for name, want := range map[string]string{
		"extism_badsig":  "imports extism:host/env.alloc with signature (i32) -> (i32), want (i64) -> (i64)",
		"extism_noiface": "without hyper-mcp's interface",
		"extism_unknown": "extism:host/user.get_session, which toolhost does not provide",
		"extism_oob":     "list_tools failed: load_u64(999999): outside the 31 bytes of kernel memory",
	} {
		_, err := rt.LoadFile(context.Background(), testwasm.WAT(t, "host/testdata/wat/"+name+".wat"))
		var le *host.LoadError
		if !errors.As(err, &le) || !strings.Contains(le.Reason, want) {
			t.Errorf("%s: %v, want a load error saying %q", name, err, want)
		}
	}
}

// A plugin built as a WASI command runs its constructors once per
// instance, never _start, as under Extism.
func TestExtismCommandPlugin(t *testing.T) {
	rt, err := host.New(context.Background(), host.Config{Logger: slog.New(slog.DiscardHandler), CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	m, err := rt.LoadFile(context.Background(), testwasm.WAT(t, "host/testdata/wat/extism_command.wat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, reuse := range []bool{false, true, true} {
		res, err := m.Do(context.Background(), host.Request{Tool: "cmd.ready", Reuse: reuse})
		if err != nil || string(res) != `"ready"` {
			t.Errorf("cmd.ready (reuse %v) = %s, %v", reuse, res, err)
		}
	}
}

// Calls in parallel, fresh and warm, each see only their own instance's
// kernel: a caller's warm calls count 1, 2, 3... whatever runs beside them.
func TestExtismConcurrentCalls(t *testing.T) {
	m := extismModule(t, extismV2, host.Config{})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			caller := string(rune('a' + g))
			for i := 1; i <= 5; i++ {
				res, err := m.Do(context.Background(), host.Request{Tool: "echo", Args: []byte(`{"text":"` + caller + `"}`),
					Reuse: g%2 == 0, Caller: caller})
				want := 1
				if g%2 == 0 {
					want = i
				}
				var got struct {
					Calls int    `json:"calls"`
					Text  string `json:"text"`
				}
				if err != nil || json.Unmarshal(res, &got) != nil || got.Calls != want || got.Text != caller {
					t.Errorf("caller %s call %d = %s, %v; want calls %d", caller, i, res, err, want)
				}
			}
		}()
	}
	wg.Wait()
}

// create_elicitation becomes toolhost's input requests: each round stops
// the call with the next question, the answers so far in its state, and
// the last round runs to the end with every answer.
func TestExtismElicitation(t *testing.T) {
	m := extismModule(t, extismV2, host.Config{})
	call := func(resume string) (json.RawMessage, *abi.InputRequest, error) {
		ctx := context.Background()
		if resume != "" {
			ctx = guestinput.WithResume(ctx, []byte(resume))
		}
		res, err := m.Call(ctx, "ask", []byte(`{}`), host.Limits{})
		var ir *abi.InputRequest
		if errors.As(err, &ir) {
			return nil, ir, nil
		}
		return res, nil, err
	}
	_, first, err := call("")
	if err != nil || first == nil || first.Requests["elicit-1"].Message != "Your name?" || first.Requests["elicit-1"].Mode != abi.InputForm {
		t.Fatalf("first round: %+v, %v; want the name asked", first, err)
	}
	_, second, err := call(`{"state":` + quoteJSON(first.State) + `,"responses":{"elicit-1":{"action":"accept","content":{"name":"bob"}}}}`)
	if err != nil || second == nil || second.Requests["elicit-2"].Message != "Sure?" || !strings.Contains(second.State, "bob") {
		t.Fatalf("second round: %+v, %v; want the confirmation asked, the name in the state", second, err)
	}
	res, again, err := call(`{"state":` + quoteJSON(second.State) + `,"responses":{"elicit-2":{"action":"accept","content":{"sure":true}}}}`)
	if err != nil || again != nil || string(res) != `{"action":"accept","name":{"name":"bob"},"sure":{"sure":true}}` {
		t.Fatalf("last round = %s, %+v, %v", res, again, err)
	}
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

// A v2 plugin's resources and prompts are listed in its manifest and read
// and got through the reserved call names.
func TestExtismResourcesAndPrompts(t *testing.T) {
	m := extismModule(t, extismV2, host.Config{})
	l := m.Manifest.Listing
	if len(l.Resources) != 1 || l.Resources[0].URI != "ext://greeting" || l.Resources[0].MIMEType != "text/plain" ||
		len(l.ResourceTemplates) != 0 || len(l.Prompts) != 1 || l.Prompts[0].Name != "review" || !l.Prompts[0].Arguments[0].Required {
		t.Fatalf("listing = %+v", l)
	}
	ctx := context.Background()
	res, err := m.Do(ctx, host.Request{Tool: abi.CallReadResource, Args: []byte(`{"uri":"ext://greeting"}`)})
	if err != nil || string(res) != `{"contents":[{"uri":"ext://greeting","mimeType":"text/plain","text":"hello from a plugin"}]}` {
		t.Errorf("read = %s, %v", res, err)
	}
	_, err = m.Do(ctx, host.Request{Tool: abi.CallReadResource, Args: []byte(`{"uri":"ext://nosuch"}`)})
	var ae *abi.Error
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "no resource ext://nosuch") {
		t.Errorf("read of an unknown URI: %v", err)
	}
	res, err = m.Do(ctx, host.Request{Tool: abi.CallGetPrompt, Args: []byte(`{"name":"review","arguments":{"lang":"go"}}`)})
	if err != nil || string(res) != `{"messages":[{"content":{"text":"Review this go code.","type":"text"},"role":"user"}]}` {
		t.Errorf("get = %s, %v", res, err)
	}
}

// With Config.Lazy, an Extism plugin described once is listed from the
// describe cache without compiling, and compiles on its first call.
func TestExtismDescribeCache(t *testing.T) {
	path := testwasm.Go(t, extismV2)
	dir := t.TempDir()
	open := func() *host.Runtime {
		rt, err := host.New(context.Background(), host.Config{Logger: slog.New(slog.DiscardHandler), CacheDir: dir, Lazy: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rt.Close(context.Background()) })
		return rt
	}
	first := open()
	if _, err := first.LoadFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	rt := open()
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if st := rt.ModuleStats(); st.DescribeHits != 1 || st.Compiles != 0 {
		t.Fatalf("stats after a cached load = %+v, want one describe hit and no compile", st)
	}
	if m.ExtismInterface() != "hyper-mcp v2" || len(m.Manifest.Listing.Resources) != 1 {
		t.Errorf("cached module: %q, listing %+v", m.ExtismInterface(), m.Manifest.Listing)
	}
	res, err := m.Call(context.Background(), "echo", []byte(`{"text":"c"}`), host.Limits{})
	if err != nil || string(res) != `{"calls":1,"text":"c"}` {
		t.Errorf("first call of the cached module = %s, %v", res, err)
	}
}
