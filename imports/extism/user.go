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
// xtp-plugin-schema.json, and src/service.rs's host_fns for the two the
// schema leaves out, get_access_token and get_keyring_secret): each takes
// and returns the offset of a JSON block. Progress and logging messages
// become the call's guest notes; the list-changed notices are accepted
// and dropped (toolhost lists a plugin once, at load: see
// docs/WRITING-EXTISM.md); elicitation becomes toolhost's input requests
// (elicit.go); keyring reads are served from the operator's config
// (keyring.go); what else needs an MCP client's answer (sampling, roots)
// or an OAuth flow stops the call with ErrUnsupported.
var userFuncs = []hostFunc{
	{"notify_progress", sig(i64), none, notifyProgress},
	{"notify_logging_message", sig(i64), none, notifyLogging},
	{"create_elicitation", sig(i64), sig(i64), createElicitation},
	unsupported("create_message", sig(i64), sig(i64), "toolhost sends no sampling requests to clients on a plugin's behalf"),
	unsupported("list_roots", none, sig(i64), "toolhost asks clients for no roots on a plugin's behalf"),
	// get_access_token(credentials i64) -> i64: hyper-mcp runs an OAuth
	// client-credentials or device flow with the plugin's OauthCredentials
	// and answers an AccessToken or null.
	unsupported("get_access_token", sig(i64), sig(i64),
		"toolhost runs no OAuth flows for plugins; the operator injects an upstream's credential into the plugin's requests with [grants.\"MODULE.wasm\".headers.\"HOST\"]"),
	ignored("notify_tool_list_changed", none),
	ignored("notify_prompt_list_changed", none),
	ignored("notify_resource_list_changed", none),
	ignored("notify_resource_updated", sig(i64)),
	ignored("notify_url_elicitation_completed", sig(i64)),
	keyring,
}

// usrFuncs are the extism:host/usr functions: hyper-mcp's host serves
// get_keyring_secret in extism:host/user, but its go-plugin-template
// imports it from extism:host/usr, so toolhost serves it in both.
var usrFuncs = []hostFunc{keyring}

// unsupported is a host function that stops the call with ErrUnsupported
// and why.
func unsupported(name string, params, results []api.ValueType, why string) hostFunc {
	return hostFunc{name, params, results, func(_ context.Context, k *Kernel, _ api.Module, _ []uint64) {
		k.stop(fmt.Errorf("extism:host/user %s: %w (%s)", name, ErrUnsupported, why))
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
