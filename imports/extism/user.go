package extism

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/guestnote"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// userFuncs are hyper-mcp's extism:host/user functions (its
// xtp-plugin-schema.json): each takes and returns the offset of a JSON
// block. Progress and logging messages become the call's guest notes;
// the list-changed notices are accepted and dropped (toolhost lists tools
// itself); elicitation becomes toolhost's input requests (elicit.go);
// what else needs an MCP client's answer (sampling, roots) stops the call
// with ErrUnsupported.
var userFuncs = []hostFunc{
	{"notify_progress", sig(i64), none, notifyProgress},
	{"notify_logging_message", sig(i64), none, notifyLogging},
	{"create_elicitation", sig(i64), sig(i64), createElicitation},
	unsupported("create_message", sig(i64), sig(i64)),
	unsupported("list_roots", none, sig(i64)),
	ignored("notify_tool_list_changed", none),
	ignored("notify_prompt_list_changed", none),
	ignored("notify_resource_list_changed", none),
	ignored("notify_resource_updated", sig(i64)),
	ignored("notify_url_elicitation_completed", sig(i64)),
	keyring,
}

// usrFuncs are hyper-mcp's extism:host/usr functions: its keyring.
var usrFuncs = []hostFunc{keyring}

// keyring is get_keyring_secret(entry i64) -> i64. toolhost reads no OS
// keyring: a plugin's secrets come from the operator's extism_config,
// where {env = ...} and {file = ...} references keep them out of the file.
var keyring = hostFunc{"get_keyring_secret", sig(i64), sig(i64), func(_ context.Context, k *Kernel, _ api.Module, _ []uint64) {
	k.stop(fmt.Errorf("get_keyring_secret: %w: toolhost reads no keyring; the operator gives a plugin its secrets in [modules.\"MODULE.wasm\".extism_config], by {env = \"NAME\"} or {file = \"PATH\"}", ErrUnsupported))
}}

func unsupported(name string, params, results []api.ValueType) hostFunc {
	return hostFunc{name, params, results, func(_ context.Context, k *Kernel, _ api.Module, _ []uint64) {
		k.stop(fmt.Errorf("extism:host/user %s: %w (toolhost serves no client requests to plugins)", name, ErrUnsupported))
	}}
}

func ignored(name string, params []api.ValueType) hostFunc {
	return hostFunc{name, params, none, func(context.Context, *Kernel, api.Module, []uint64) {}}
}

// notifyProgress is notify_progress(params i64): MCP's
// ProgressNotificationParam {progressToken, progress, total?, message?}.
// The token is the host's business: the note goes to the call's own caller.
func notifyProgress(ctx context.Context, k *Kernel, _ api.Module, s []uint64) {
	var p struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
		Message  string  `json:"message"`
	}
	if err := json.Unmarshal(k.block(s[0], "notify_progress"), &p); err != nil {
		k.stop(fmt.Errorf("notify_progress: not a ProgressNotificationParam: %v", err))
	}
	if c := guestnote.CallFrom(ctx); c != nil {
		c.Progress(bytesMemory(p.Message), p.Progress, p.Total, 0, uint32(len(p.Message)))
	}
}

// notifyLogging is notify_logging_message(params i64): MCP's
// LoggingMessageNotificationParam {level, logger?, data}.
func notifyLogging(ctx context.Context, k *Kernel, _ api.Module, s []uint64) {
	var p struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(k.block(s[0], "notify_logging_message"), &p); err != nil {
		k.stop(fmt.Errorf("notify_logging_message: not a LoggingMessageNotificationParam: %v", err))
	}
	msg := string(p.Data)
	var text string
	if json.Unmarshal(p.Data, &text) == nil {
		msg = text
	}
	if p.Logger != "" {
		msg = p.Logger + ": " + msg
	}
	if c := guestnote.CallFrom(ctx); c != nil {
		c.Log(bytesMemory(msg), int32(mcpLevel(p.Level)), 0, uint32(len(msg)))
	}
}

// mcpLevel maps MCP's (RFC 5424) level names onto the levels a guest may
// use: nothing above error.
func mcpLevel(name string) abi.LogLevel {
	switch name {
	case "debug":
		return abi.LogDebug
	case "info":
		return abi.LogInfo
	case "notice":
		return abi.LogNotice
	case "warning":
		return abi.LogWarning
	}
	return abi.LogError
}
