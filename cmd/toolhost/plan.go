package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/registry"
	toolserver "github.com/toolhost/toolhost/server"
	"github.com/toolhost/toolhost/transport"
)

func newPlanCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Run plans: plan, execute, replan",
		Long: `plan runs a goal as a sequence of tool calls that a planner makes and remakes:
each failed step goes back to the planner, within budgets of steps and replans.
See docs/PLAN.md.`,
	}
	cmd.AddCommand(newPlanRunCmd(), newPlanSchemaCmd())
	return cmd
}

type planFlags struct {
	plugins     string
	planner     string
	server      string
	events      string
	cacheDir    string
	config      string
	sessionID   string
	maxSteps    int
	maxReplans  int
	maxParallel int
}

func newPlanRunCmd() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "run [flags] FILE.json|-",
		Short: "Run a plan file",
		Long: `run executes a plan file (see 'toolhost plan schema') against the tools of the
plugins folder, in process, or through a running server with --server. The
planner is the file's own steps (static, the default), the rule planner
(rules), or a WebAssembly planner module (a path to a .wasm file). Flags
override the file's budgets.

The SessionResult is printed as JSON on stdout; the exit code is 0 when the
session completed and 1 when it failed. A trace goes to stderr: each step,
the dispatcher's retries, and every plan revision with removed steps struck
through and added ones marked +. --events writes the event log as JSONL.`,
		Example: `  toolhost plan run plan.json
  toolhost plan run --planner rules --events events.jsonl plan.json
  toolhost plan run --planner ./planners/llm.wasm --max-steps 20 plan.json
  toolhost plan run --server http://127.0.0.1:7331/mcp --max-parallel 4 plan.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.plugins, "plugins", "./plugins", "folder of .wasm tool modules (in-process runs)")
	fl.StringVar(&f.planner, "planner", "static", "static (the file's steps), rules, or PATH.wasm (a planner module)")
	fl.StringVar(&f.server, "server", "", "run steps through the toolhost server at this MCP endpoint instead of in process")
	fl.StringVar(&f.events, "events", "", "write the event log to this file as JSONL")
	fl.StringVar(&f.cacheDir, "cache-dir", "", `compilation cache folder (default <user cache dir>/toolhost/wazero; "off" disables)`)
	fl.StringVar(&f.config, "config", "", "TOML config as for serve (tool overrides, limits, quotas, egress grants) for in-process runs")
	fl.StringVar(&f.sessionID, "session-id", "", "session id for idempotency keys (default: the file's, else random)")
	fl.IntVar(&f.maxSteps, "max-steps", 0, "most steps to execute, failed ones included (default: the file's, else 12)")
	fl.IntVar(&f.maxReplans, "max-replans", -1, "most planner calls after the first (default: the file's, else 5)")
	fl.IntVar(&f.maxParallel, "max-parallel", 0, "most steps in flight (default: the file's, else 1)")
	return cmd
}

func newPlanSchemaCmd() *cobra.Command {
	var result bool
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of a plan file (or of a session result)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s := plan.FileSchema()
			if result {
				s = plan.ResultSchema()
			}
			_, err := cmd.OutOrStdout().Write(s)
			return err
		},
	}
	cmd.Flags().BoolVar(&result, "result", false, "print the SessionResult schema instead")
	return cmd
}

func runPlan(cmd *cobra.Command, f planFlags, path string) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	file, err := readPlanFile(cmd.InOrStdin(), path)
	if err != nil {
		return err
	}
	sess, err := session(cmd, f, file)
	if err != nil {
		return err
	}
	// The operator's config applies to in-process runs as it does to
	// serve: limits, tool overrides, quotas and egress grants.
	conf, err := toolserver.LoadConfig(f.config)
	if err != nil {
		return err
	}
	op, err := toolserver.NewOperator(conf, nil)
	if err != nil {
		return err
	}
	defer op.Close()
	// One runtime, made on first need: for the tools of an in-process run
	// and for a WebAssembly planner.
	var rt *host.Runtime
	runtime := func() (*host.Runtime, error) {
		if rt != nil {
			return rt, nil
		}
		logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		r, err := host.New(ctx, op.HostConfig(f.cacheDir, logger, compileLimits()))
		rt = r
		return r, err
	}
	defer func() {
		if rt != nil {
			_ = rt.Close(context.Background())
		}
	}()
	planner, err := choosePlanner(ctx, f.planner, file, runtime)
	if err != nil {
		return err
	}
	cfg := plan.Config{Planner: planner}
	if f.server != "" {
		var cs *mcp.ClientSession
		cs, err = remote(ctx, f.server, &cfg)
		if cs != nil {
			defer cs.Close()
		}
	} else {
		err = local(ctx, f.plugins, runtime, stderr, op, &cfg)
	}
	if err != nil {
		return err
	}
	trace := plan.NewTrace(stderr, isTerminal(stderr))
	cfg.Observe = trace.Event
	if f.events != "" {
		log, err := os.Create(f.events)
		if err != nil {
			return fmt.Errorf("--events: %w", err)
		}
		defer log.Close()
		var werr error
		cfg.Observe = func(e plan.Event) {
			trace.Event(e)
			if werr == nil {
				if werr = plan.WriteJSONL(log, e); werr != nil {
					fmt.Fprintf(stderr, "toolhost: --events: %v\n", werr)
				}
			}
		}
	}
	res, err := plan.New(cfg).Run(ctx, sess)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return err
	}
	if res.Status != plan.StatusCompleted {
		return &exitError{code: 1}
	}
	return nil
}

// readPlanFile reads and parses FILE.json, or stdin for "-".
func readPlanFile(stdin io.Reader, path string) (*plan.File, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	file, err := plan.ParseFile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return file, nil
}

// session merges the file's settings with the flags, which win.
func session(cmd *cobra.Command, f planFlags, file *plan.File) (plan.Session, error) {
	s := plan.Session{ID: file.SessionID, Goal: file.Goal, Limits: file.Limits(), OnFailure: file.OnFailure}
	fl := cmd.Flags()
	if fl.Changed("session-id") {
		if !plan.ValidSessionID(f.sessionID) {
			return s, fmt.Errorf("--session-id must match ^[A-Za-z0-9_.-]{1,64}$")
		}
		s.ID = f.sessionID
	}
	if fl.Changed("max-steps") {
		if f.maxSteps < 1 || f.maxSteps > plan.MaxMaxSteps {
			return s, fmt.Errorf("--max-steps must be between 1 and %d", plan.MaxMaxSteps)
		}
		s.Limits.MaxSteps = f.maxSteps
	}
	if fl.Changed("max-replans") {
		if f.maxReplans < 0 || f.maxReplans > plan.MaxMaxReplans {
			return s, fmt.Errorf("--max-replans must be between 0 and %d", plan.MaxMaxReplans)
		}
		s.Limits.MaxReplans = f.maxReplans
		if f.maxReplans == 0 {
			s.Limits.MaxReplans = -1 // none
		}
	}
	if fl.Changed("max-parallel") {
		if f.maxParallel < 1 || f.maxParallel > plan.MaxMaxParallel {
			return s, fmt.Errorf("--max-parallel must be between 1 and %d", plan.MaxMaxParallel)
		}
		s.Limits.MaxParallel = f.maxParallel
	}
	return s, nil
}

func choosePlanner(ctx context.Context, name string, file *plan.File, runtime func() (*host.Runtime, error)) (plan.Planner, error) {
	switch {
	case name == "static":
		return plan.Static(file.Steps), nil
	case name == "rules":
		return plan.Rules(), nil
	case strings.HasSuffix(name, ".wasm"):
		rt, err := runtime()
		if err != nil {
			return nil, err
		}
		p, err := rt.LoadPlannerFile(ctx, name)
		if err != nil {
			return nil, err
		}
		return plan.JSON(p), nil
	}
	return nil, fmt.Errorf("--planner must be static, rules or a .wasm planner module, not %q", name)
}

// local runs steps in process: the plugins folder behind a dispatcher, whose
// retries the executor follows on a bus.
func local(ctx context.Context, plugins string, runtime func() (*host.Runtime, error), stderr io.Writer,
	op *toolserver.Operator, cfg *plan.Config) error {
	rt, err := runtime()
	if err != nil {
		return err
	}
	loaded, err := loader.Load(ctx, rt, plugins, op.LoaderOptions(false, plugins))
	if err != nil {
		return err
	}
	for _, le := range loaded.Errors {
		fmt.Fprintf(stderr, "toolhost: skip %s: %s\n", le.Path, le.Reason)
	}
	bus := events.NewBus(nil)
	dc := op.DispatcherConfig()
	dc.Events = bus
	d := dispatcher.New(loaded.Registry, dc)
	cfg.Dispatcher = byEitherName{d: d, reg: loaded.Registry}
	cfg.Bus = bus
	cfg.Reusable = func(name string) bool {
		t, ok := loaded.Registry.Resolve(name)
		return ok && (t.Idempotent || t.ReadOnly)
	}
	return nil
}

// byEitherName lets a local plan's steps name tools as a server's clients
// do, by wire or manifest name; the dispatcher gets the manifest name, the
// identity its events and idempotency scopes use.
type byEitherName struct {
	d   *dispatcher.Dispatcher
	reg *registry.Registry
}

func (b byEitherName) Call(ctx context.Context, c dispatcher.Call) (json.RawMessage, error) {
	if t, ok := b.reg.Resolve(c.Tool); ok {
		c.Tool = t.Name
	}
	return b.d.Call(ctx, c)
}

// remote runs steps through a server: each step is a tools/call carrying
// the step's idempotency key; tools/list says which tools may be reused.
func remote(ctx context.Context, url string, cfg *plan.Config) (*mcp.ClientSession, error) {
	cs, err := connect(ctx, url)
	if err != nil {
		return nil, err
	}
	reusable := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return cs, fmt.Errorf("listing the tools of %s: %w", url, err)
		}
		ok := t.Annotations != nil && (t.Annotations.IdempotentHint || t.Annotations.ReadOnlyHint)
		reusable[t.Name] = ok
		// A step may name the tool by its manifest name as well.
		if manifest, _ := t.Meta[transport.MetaToolName].(string); manifest != "" {
			reusable[manifest] = ok
		}
	}
	cfg.Dispatcher = mcpDispatcher{cs}
	cfg.Reusable = func(name string) bool { return reusable[name] }
	return cs, nil
}

// mcpDispatcher dispatches through an MCP session. ClientSession is safe
// for concurrent calls.
type mcpDispatcher struct{ cs *mcp.ClientSession }

func (d mcpDispatcher) Call(ctx context.Context, c dispatcher.Call) (json.RawMessage, error) {
	meta := mcp.Meta{transport.MetaIdempotencyKey: c.IdempotencyKey}
	if c.Timeout > 0 {
		meta[transport.MetaTimeoutMS] = max(c.Timeout.Milliseconds(), 1)
	}
	if c.Budget != nil {
		meta[transport.MetaBudget] = *c.Budget
	}
	res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: c.Args, Meta: meta})
	if err != nil {
		return nil, clientFault(err)
	}
	if res.IsError {
		return nil, envelopeOf(res)
	}
	out, err := resultJSON(res)
	if err != nil {
		return nil, clientFault(err)
	}
	if !json.Valid(out) {
		return nil, clientFault(errors.New("the server's result is not JSON"))
	}
	return out, nil
}

// isTerminal reports whether w is a terminal that takes ANSI escapes.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
