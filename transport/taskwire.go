package transport

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/idempotency"
)

// The shapes of tasks on the wire. 2025-11-25 (experimental Tasks) and
// the 2026-07-28 extension name the same things differently: ttl and
// pollInterval there, ttlMs and pollIntervalMs here; the task nested under
// "task" in CreateTaskResult there, inline with resultType "task" here;
// a tool result with isError is a failed task there, a completed one
// here; the result comes from tasks/result there, inline in tasks/get
// here.

// legacyTask is a 2025-11-25 Task.
type legacyTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// legacyTaskResult answers 2025-11-25 tasks/get and tasks/cancel.
type legacyTaskResult struct {
	mcp.ResultBase
	legacyTask
}

// legacyCreated answers a 2025-11-25 task-augmented tools/call.
type legacyCreated struct {
	mcp.ResultBase
	Task legacyTask `json:"task"`
}

// detailedTask is a 2026-07-28 task with what its status carries.
type detailedTask struct {
	mcp.ResultBase
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	// InputRequests are a task's outstanding questions while it is in
	// input_required (answered with tasks/update).
	InputRequests mcp.InputRequestMap `json:"inputRequests,omitempty"`
}

// taskAck is the empty acknowledgement of 2026-07-28 tasks/cancel and
// tasks/update.
type taskAck struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// createdResult answers a tools/call that became (or joined) task t. The
// task id is in _meta too: SDK clients that decode the answer as a
// CallToolResult still find it there.
func (s *Server) createdResult(t idempotency.Task, stateless bool) mcp.Result {
	meta := mcp.Meta{MetaRelatedTask: map[string]any{"taskId": t.ID}}
	if stateless {
		d := s.detailed(t, "task", false)
		d.Meta = meta
		return d
	}
	return &legacyCreated{ResultBase: mcp.ResultBase{Meta: meta}, Task: s.legacy(t)}
}

// taskAnswer is t as tasks/get (withResult) or tasks/cancel answer it.
func (s *Server) taskAnswer(t idempotency.Task, stateless, withResult bool) mcp.Result {
	if stateless {
		return s.detailed(t, "complete", withResult)
	}
	return &legacyTaskResult{legacyTask: s.legacy(t)}
}

func (s *Server) legacy(t idempotency.Task) legacyTask {
	return legacyTask{TaskID: t.ID, Status: legacyStatus(t), StatusMessage: t.Message, CreatedAt: stamp(t.Created),
		LastUpdatedAt: stamp(t.Updated), TTL: ttlOf(t), PollInterval: s.pollMS(t)}
}

func (s *Server) detailed(t idempotency.Task, resultType string, withResult bool) *detailedTask {
	d := &detailedTask{ResultType: resultType, TaskID: t.ID, Status: string(t.Status), StatusMessage: t.Message,
		CreatedAt: stamp(t.Created), LastUpdatedAt: stamp(t.Updated), TTLMs: ttlOf(t), PollIntervalMs: s.pollMS(t)}
	if withResult && t.Status == idempotency.TaskCompleted {
		d.Result = completeResult(t.Result)
	}
	if withResult {
		d.InputRequests = inputRequestsOf(t)
	}
	return d
}

// completeResult gives a stored CallToolResult the resultType "complete"
// that 2026-07-28 puts on every result, the embedded one of tasks/get too
// (the ext-tasks client refuses it without, for successes and tool
// failures alike). The store keeps the revision-free form, since a task
// started at one revision may be polled at another; a result that is not
// an object is left for the client to refuse.
func completeResult(raw json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return raw
	}
	fields["resultType"] = json.RawMessage(`"complete"`)
	b, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return b
}

// pollMS suggests a polling interval while the task works.
func (s *Server) pollMS(t idempotency.Task) int64 {
	if t.Status.Terminal() {
		return 0
	}
	return s.opts.Tasks.pollInterval().Milliseconds()
}

// legacyStatus is t's 2025-11-25 status: a tool result with isError is
// a failed task there.
func legacyStatus(t idempotency.Task) string {
	if t.Status == idempotency.TaskCompleted {
		var r struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(t.Result, &r) == nil && r.IsError {
			return string(idempotency.TaskFailed)
		}
	}
	return string(t.Status)
}

// ttlOf is how long after its creation the task is kept: unbounded (null)
// while it works, then its end plus the replay TTL.
func ttlOf(t idempotency.Task) *int64 {
	if t.Expires.IsZero() {
		return nil
	}
	ms := t.Expires.Sub(t.Created).Milliseconds()
	return &ms
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// initTasks is a 2025-11-25 initialize answer with the tasks capability:
// tasks/get, tasks/result and tasks/cancel, for tools/call (no tasks/list:
// a caller polls the ids it was given). The SDK has no field for it.
type initTasks struct{ *mcp.InitializeResult }

// MarshalJSON adds capabilities.tasks to the SDK's answer.
func (r initTasks) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.InitializeResult)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(m["capabilities"], &caps); err != nil || caps == nil {
		caps = map[string]json.RawMessage{}
	}
	caps["tasks"] = json.RawMessage(`{"cancel":{},"requests":{"tools":{"call":{}}}}`)
	if m["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// taskToolList is a 2025-11-25 tools/list whose offered tools say
// execution.taskSupport "optional" (clients such as the TypeScript SDK's
// callToolStream then run them as tasks by themselves). The others may
// still be called as tasks by a client that asks.
type taskToolList struct {
	legacyToolList
	offered func(name string) bool
}

// MarshalJSON writes the legacy shape with execution on offered tools.
func (l taskToolList) MarshalJSON() ([]byte, error) {
	type execution struct {
		TaskSupport string `json:"taskSupport"`
	}
	type tool struct {
		*mcp.Tool
		Execution *execution `json:"execution,omitempty"`
	}
	tools := make([]tool, len(l.Tools))
	for i, t := range l.Tools {
		tools[i].Tool = t
		name, _ := t.Meta[MetaToolName].(string)
		if name == "" {
			name = t.Name
		}
		if l.offered(name) {
			tools[i].Execution = &execution{TaskSupport: "optional"}
		}
	}
	return json.Marshal(struct {
		Meta       mcp.Meta `json:"_meta,omitempty"`
		NextCursor string   `json:"nextCursor,omitempty"`
		Tools      []tool   `json:"tools"`
	}{l.Meta, l.NextCursor, tools})
}
