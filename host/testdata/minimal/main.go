// Command minimal is a benchmark fixture: a hand-written Go reactor
// (package reactor) that speaks the toolhost ABI with the standard library
// only and does the work of text.count (tools-src/text). It is the floor a
// tool built with the Go SDK (abi/guest) is measured against. host's
// BenchmarkFresh builds it on demand; it is never linked into the server.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o minimal.wasm ./host/testdata/minimal
package main

import _ "github.com/toolhost/toolhost/host/testdata/minimal/reactor"

func main() {}
