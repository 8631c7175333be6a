// Package reliability holds toolhost's reliability suite; it has no API.
//
// The tests here treat the rest of the repository as a black box, the way
// an operator's hostile plugin or client would:
//
//   - hostile modules (hostile_*_test.go): one test per way a module can
//     misbehave at load or at call time, each checking the error kind the
//     dispatcher (or the loader) reports, that a good call succeeds right
//     after, and that heap and goroutines return to their baseline;
//   - FuzzDispatchArgs: arbitrary arguments through the dispatcher's
//     validation into a real guest.
//
// The soak test of a real `toolhost serve` process is in cmd/toolhost
// (soak_test.go), beside the end-to-end harness it reuses. `make
// reliability` runs both in full; `go test ./...` runs the short forms.
// docs/RELIABILITY.md has the figures and docs/SECURITY.md names the test
// for each limit.
package reliability
