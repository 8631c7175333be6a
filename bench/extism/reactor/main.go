// Command reactor is text.count as a minimal hand-written Go reactor on
// toolhost's ABI (docs/ABI.md), without abi/guest: the floor a Go guest SDK
// is measured against. Same input, counting and output as tools-src/text.
package main

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
	"unsafe"
)

const manifest = `{"abi":1,"tools":[{"name":"text.count","input_schema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"idempotent":true,"read_only":true}]}`

// inbox keeps the host's buffers alive until the next call; resp keeps
// the last response alive until the host has copied it.
var (
	inbox [][]byte
	resp  []byte
)

type countArgs struct {
	Text string `json:"text"`
}

type counts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Runes int `json:"runes"`
	Bytes int `json:"bytes"`
}

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
	args := unsafe.Slice((*byte)(unsafe.Pointer(uintptr(argsPtr))), argsLen)
	var a countArgs
	if err := json.Unmarshal(args, &a); err != nil {
		resp = []byte(`{"error":{"kind":"schema","message":"bad arguments"}}`)
	} else {
		lines := strings.Count(a.Text, "\n")
		if a.Text != "" && !strings.HasSuffix(a.Text, "\n") {
			lines++
		}
		out, _ := json.Marshal(struct {
			Result counts `json:"result"`
		}{counts{len(strings.Fields(a.Text)), lines, utf8.RuneCountInString(a.Text), len(a.Text)}})
		resp = out
	}
	inbox = nil
	return pack(resp)
}

func pack(b []byte) int64 {
	return int64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))<<32 | int64(len(b))
}

func main() {}
