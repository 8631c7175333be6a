package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

// `toolhost call --task` runs a call as an MCP task (2026-07-28, the
// io.modelcontextprotocol/tasks extension): it starts the task, polls
// tasks/get at the interval the server suggests with a progress line on
// stderr, and ends as `call` does: the result on stdout and exit 0, or the
// envelope on stderr and exit 1. Ctrl-C sends tasks/cancel first.

// taskIDParams are the params of tasks/get and tasks/cancel.
type taskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// polledTask is a 2026-07-28 tasks/get answer.
type polledTask struct {
	mcp.ResultBase
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          json.RawMessage `json:"error"`
}

func runCallTask(cmd *cobra.Command, f callFlags, tool string, args json.RawMessage, meta mcp.Meta) error {
	stderr := cmd.ErrOrStderr()
	fail := func(de *dispatcher.DispatchError) error {
		writeEnvelope(stderr, de)
		return &exitError{code: 1}
	}
	ctx := cmd.Context()
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(transport.ExtTasks, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolhost-cli", Version: version}, &mcp.ClientOptions{Capabilities: caps})
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if err := mcp.AddSendingCustomMethod[*taskIDParams, *polledTask](client, m); err != nil {
			return fail(clientFault(err))
		}
	}
	cs, err := connectWith(ctx, f.server, client)
	if err != nil {
		return fail(clientFault(err))
	}
	defer cs.Close()
	meta[transport.MetaTask] = map[string]any{}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	if err != nil {
		return fail(clientFault(err))
	}
	rel, _ := res.Meta[transport.MetaRelatedTask].(map[string]any)
	id, _ := rel["taskId"].(string)
	if id == "" { // answered at once: a refusal, or a server without tasks
		return printResult(cmd, res, fail)
	}
	task, err := pollTask(ctx, cs, id, stderr)
	if err != nil {
		if ctx.Err() != nil {
			cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer stop()
			_, cerr := mcp.CallCustomMethod[*taskIDParams, *polledTask](cctx, cs, "tasks/cancel", &taskIDParams{TaskID: id})
			msg := fmt.Sprintf("interrupted: task %s was cancelled", id)
			if cerr != nil {
				msg = fmt.Sprintf("interrupted, and task %s could not be cancelled (it may still run): %v", id, cerr)
			}
			return fail(clientFault(errors.New(msg)))
		}
		return fail(clientFault(err))
	}
	switch task.Status {
	case "completed":
		var out mcp.CallToolResult
		if err := json.Unmarshal(task.Result, &out); err != nil {
			return fail(clientFault(fmt.Errorf("task %s: its result is not a tool result: %v", id, err)))
		}
		return printResult(cmd, &out, fail)
	case "cancelled":
		return fail(clientFault(fmt.Errorf("task %s was cancelled: %s", id, task.StatusMessage)))
	default:
		return fail(clientFault(fmt.Errorf("task %s %s: %s %s", id, task.Status, task.StatusMessage, task.Error)))
	}
}

// printResult ends as `call` does for a tool result.
func printResult(cmd *cobra.Command, res *mcp.CallToolResult, fail func(*dispatcher.DispatchError) error) error {
	if res.IsError {
		return fail(envelopeOf(res))
	}
	out, err := resultJSON(res)
	if err != nil {
		return fail(clientFault(err))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", safeJSON(out))
	return nil
}

// pollTask polls until the task is terminal, showing its state on w: one
// line rewritten in place on a terminal, a line per change otherwise.
func pollTask(ctx context.Context, cs *mcp.ClientSession, id string, w io.Writer) (*polledTask, error) {
	start, last := time.Now(), ""
	tty := isTerminal(w)
	if tty {
		defer fmt.Fprintln(w) // end the line rewritten in place
	}
	for {
		t, err := mcp.CallCustomMethod[*taskIDParams, *polledTask](ctx, cs, "tasks/get", &taskIDParams{TaskID: id})
		if err != nil {
			return nil, fmt.Errorf("polling task %s: %w", id, err)
		}
		line := fmt.Sprintf("task %s: %s", id, t.Status)
		if t.StatusMessage != "" {
			line += ": " + t.StatusMessage // the tool's progress, while it works
		}
		line = safeLine(line) // all of it the server's: id, status and message
		if tty {
			fmt.Fprintf(w, "\r%s (%s)\033[K", line, time.Since(start).Round(time.Second))
		} else if line != last {
			fmt.Fprintln(w, line)
		}
		last = line
		if t.Status != "working" && t.Status != "input_required" {
			return t, nil
		}
		wait := time.Duration(t.PollIntervalMs) * time.Millisecond
		if wait <= 0 {
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}
