// Command v2 is a hyper-mcp v2 plugin (list_tools, call_tool) whose tools
// exercise what toolhost promises Extism plugins: state in vars, errors,
// a deadline (spin), memory caps (hog), egress (fetch), notes and config.
package main

import (
	"encoding/json"
	"strconv"

	"github.com/extism/go-pdk"
)

//go:wasmimport extism:host/user notify_progress
func notifyProgress(uint64)

//go:wasmimport extism:host/user notify_logging_message
func notifyLoggingMessage(uint64)

//go:wasmimport extism:host/user create_message
func createMessage(uint64) uint64

//go:wasmimport extism:host/user create_elicitation
func createElicitation(uint64) uint64

//go:wasmimport extism:host/usr get_keyring_secret
func getKeyringSecret(uint64) uint64

//go:wasmimport extism:host/user get_keyring_secret
func getUserKeyringSecret(uint64) uint64

//go:wasmimport extism:host/user get_access_token
func getAccessToken(uint64) uint64

//go:wasmimport extism:host/user list_roots
func listRoots() uint64

//go:wasmimport extism:host/user notify_tool_list_changed
func notifyToolListChanged()

//go:wasmimport extism:host/user notify_resource_updated
func notifyResourceUpdated(uint64)

const tools = `{"tools":[
 {"name":"echo","title":"Echo","description":"Echoes its text and counts the calls of this instance.",
  "inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},
  "annotations":{"readOnlyHint":true,"idempotentHint":true}},
 {"name":"fail","description":"Reports an error.","inputSchema":{"type":"object"}},
 {"name":"spin","description":"Never returns.","inputSchema":{"type":"object"}},
 {"name":"hog","description":"Allocates without bound: kernel memory, or linear memory.",
  "inputSchema":{"type":"object","properties":{"kernel":{"type":"boolean"}}}},
 {"name":"fetch","description":"GETs a URL.","inputSchema":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}},
 {"name":"notes","description":"Logs and reports progress.","inputSchema":{"type":"object"}},
 {"name":"config","description":"Reads the greeting config key.","inputSchema":{"type":"object"}},
 {"name":"sample","description":"Asks the client for a message (sampling).","inputSchema":{"type":"object"}},
 {"name":"keyring","description":"Reads a keyring secret, from extism:host/usr (go-plugin-template's) or extism:host/user (hyper-mcp's host).",
  "inputSchema":{"type":"object","properties":{"service":{"type":"string"},"user":{"type":"string"},"module":{"type":"string"}}}},
 {"name":"token","description":"Asks for an OAuth access token.","inputSchema":{"type":"object"}},
 {"name":"roots","description":"Asks the client for its roots.","inputSchema":{"type":"object"}},
 {"name":"changed","description":"Says its tools and a resource changed.","inputSchema":{"type":"object"}},
 {"name":"ask","description":"Asks the user for a name, then for a confirmation.","inputSchema":{"type":"object"}}
]}`

//go:wasmexport list_tools
func listTools() int32 {
	pdk.OutputString(tools)
	return 0
}

type request struct {
	Request struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"request"`
}

//go:wasmexport call_tool
func callTool() int32 {
	var in request
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	var args struct {
		Text    string `json:"text"`
		URL     string `json:"url"`
		Kernel  bool   `json:"kernel"`
		Service string `json:"service"`
		User    string `json:"user"`
		Module  string `json:"module"`
	}
	_ = json.Unmarshal(in.Request.Arguments, &args)
	switch in.Request.Name {
	case "echo":
		n := pdk.GetVarInt("calls") + 1
		pdk.SetVarInt("calls", n)
		return result(map[string]any{"text": args.Text, "calls": n}, false)
	case "fail":
		return text("it failed on purpose", true)
	case "spin":
		for i := 0; ; i++ {
			if i < 0 {
				break
			}
		}
		return 0
	case "hog":
		var keep []any
		for {
			if args.Kernel {
				keep = append(keep, pdk.Allocate(1<<20))
			} else {
				keep = append(keep, make([]byte, 1<<20))
			}
		}
	case "fetch":
		resp := pdk.NewHTTPRequest(pdk.MethodGet, args.URL).Send()
		return result(map[string]any{"status": resp.Status(), "body": string(resp.Body()),
			"type": resp.Headers()["content-type"]}, false)
	case "notes":
		pdk.Log(pdk.LogInfo, "working")
		for i := 1; i <= 2; i++ {
			mem := pdk.AllocateString(`{"progressToken":"t","progress":` + strconv.Itoa(i) + `,"total":2,"message":"step"}`)
			notifyProgress(mem.Offset())
		}
		log := pdk.AllocateString(`{"level":"warning","logger":"v2","data":"careful"}`)
		notifyLoggingMessage(log.Offset())
		return text("done", false)
	case "sample":
		req := pdk.AllocateString(`{"messages":[],"maxTokens":1}`)
		createMessage(req.Offset())
		return text("unreachable", false)
	case "ask":
		name := elicit(`{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`)
		sure := elicit(`{"message":"Sure?","requestedSchema":{"type":"object","properties":{"sure":{"type":"boolean"}}}}`)
		return result(map[string]any{"name": name["content"], "sure": sure["content"], "action": sure["action"]}, false)
	case "keyring":
		b, _ := json.Marshal(map[string]string{"service": args.Service, "user": args.User})
		entry := pdk.AllocateBytes(b)
		get := getKeyringSecret
		if args.Module == "user" {
			get = getUserKeyringSecret
		}
		secret := pdk.FindMemory(get(entry.Offset()))
		return text(string(secret.ReadBytes()), false)
	case "token":
		creds := pdk.AllocateString(`{"client_id":"c","token_endpoint_url":"https://auth.example.com/token"}`)
		getAccessToken(creds.Offset())
		return text("unreachable", false)
	case "roots":
		listRoots()
		return text("unreachable", false)
	case "changed":
		notifyToolListChanged()
		uri := pdk.AllocateString(`{"uri":"ext://greeting"}`)
		notifyResourceUpdated(uri.Offset())
		return text("noted", false)
	case "config":
		v, ok := pdk.GetConfig("greeting")
		return result(map[string]any{"greeting": v, "set": ok}, false)
	}
	pdk.SetErrorString("no tool " + in.Request.Name)
	return 1
}

// elicit asks through create_elicitation and returns the ElicitResult.
func elicit(params string) map[string]any {
	req := pdk.AllocateString(params)
	off := createElicitation(req.Offset())
	mem := pdk.FindMemory(off)
	var res map[string]any
	_ = json.Unmarshal(mem.ReadBytes(), &res)
	return res
}

func result(v map[string]any, isError bool) int32 {
	b, _ := json.Marshal(v)
	out, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(b)}},
		"structuredContent": v, "isError": isError})
	pdk.Output(out)
	return 0
}

func text(s string, isError bool) int32 {
	out, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}, "isError": isError})
	pdk.Output(out)
	return 0
}

func main() {}

// Resources and prompts (hyper-mcp v2's optional exports); there is no
// list_resource_templates, as a plugin may leave any of them out.

//go:wasmexport list_resources
func listResources() int32 {
	pdk.OutputString(`{"resources":[{"uri":"ext://greeting","name":"greeting","mimeType":"text/plain"}]}`)
	return 0
}

//go:wasmexport read_resource
func readResource() int32 {
	var in struct {
		Request struct {
			URI string `json:"uri"`
		} `json:"request"`
	}
	if err := pdk.InputJSON(&in); err != nil || in.Request.URI != "ext://greeting" {
		pdk.SetErrorString("no resource " + in.Request.URI)
		return 1
	}
	pdk.OutputString(`{"contents":[{"uri":"ext://greeting","mimeType":"text/plain","text":"hello from a plugin"}]}`)
	return 0
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	pdk.OutputString(`{"prompts":[{"name":"review","description":"Reviews code.","arguments":[{"name":"lang","required":true}]}]}`)
	return 0
}

//go:wasmexport get_prompt
func getPrompt() int32 {
	var in struct {
		Request struct {
			Arguments map[string]string `json:"arguments"`
		} `json:"request"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	out, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user",
		"content": map[string]any{"type": "text", "text": "Review this " + in.Request.Arguments["lang"] + " code."}}}})
	pdk.Output(out)
	return 0
}

// complete and on_roots_list_changed are hyper-mcp v2's; toolhost serves
// neither (docs/WRITING-EXTISM.md), and the plugin loads with them.

//go:wasmexport complete
func complete() int32 {
	pdk.OutputString(`{"completion":{"values":["go"]}}`)
	return 0
}

//go:wasmexport on_roots_list_changed
func onRootsListChanged() int32 { return 0 }
