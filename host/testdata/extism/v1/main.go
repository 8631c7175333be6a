// Command v1 is a hyper-mcp v1 plugin (describe, call) with one tool.
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

//go:wasmexport describe
func describe() int32 {
	pdk.OutputString(`{"tools":[{"name":"hello","description":"Greets someone.",
		"inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}]}`)
	return 0
}

//go:wasmexport call
func call() int32 {
	var in struct {
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Name string `json:"name"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	if in.Params.Name != "hello" {
		pdk.SetErrorString("no tool " + in.Params.Name)
		return 1
	}
	out, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello, " + in.Params.Arguments.Name}}})
	pdk.Output(out)
	return 0
}

func main() {}
