// Package reactor is the body of the benchmark fixtures minimal and
// minimalregexp: a hand-written Go reactor that speaks the toolhost ABI
// with the standard library only and does the work of text.count
// (tools-src/text). A command that imports it is the floor a tool built
// with the Go SDK (abi/guest) is measured against: the same Go runtime
// start-up and encoding/json, without the SDK.
package reactor

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
	"unsafe"
)

const manifest = `{"abi":1,"tools":[{"name":"text.count","input_schema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"idempotent":true,"read_only":true}]}`

// inbox keeps the buffers handed to the host referenced until the next
// call, so the GC cannot free them while the host writes into them; resp
// keeps the last response alive until the host has copied it.
var (
	inbox [][]byte
	resp  []byte
)

//go:wasmexport toolhost_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport toolhost_alloc
func alloc(size int32) int32 {
	buf := make([]byte, max(size, 1))
	inbox = append(inbox, buf)
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
}

//go:wasmexport toolhost_describe
func describe() int64 {
	resp = []byte(manifest)
	return pack(resp)
}

//go:wasmexport toolhost_call
func call(namePtr, nameLen, argsPtr, argsLen int32) int64 {
	name, args := find(namePtr, nameLen), find(argsPtr, argsLen)
	inbox = nil
	resp = respond(string(name), args)
	return pack(resp)
}

func respond(name string, args []byte) []byte {
	if name != "text.count" {
		return []byte(`{"error":{"kind":"schema","message":"no such tool"}}`)
	}
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		b, _ := json.Marshal(map[string]any{"error": map[string]string{"kind": "schema", "message": err.Error()}})
		return b
	}
	lines := strings.Count(a.Text, "\n")
	if a.Text != "" && !strings.HasSuffix(a.Text, "\n") {
		lines++
	}
	b, _ := json.Marshal(struct {
		Result any `json:"result"`
	}{struct {
		Words int `json:"words"`
		Lines int `json:"lines"`
		Runes int `json:"runes"`
		Bytes int `json:"bytes"`
	}{len(strings.Fields(a.Text)), lines, utf8.RuneCountInString(a.Text), len(a.Text)}})
	return b
}

// find returns the n bytes at ptr if ptr is a buffer alloc handed out.
func find(ptr, n int32) []byte {
	for _, b := range inbox {
		if int32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) == ptr && int(n) <= len(b) {
			return b[:n]
		}
	}
	return nil
}

func pack(b []byte) int64 {
	return int64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))<<32 | int64(len(b))
}
