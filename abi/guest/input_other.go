//go:build !wasip1

package guest

// Outside WebAssembly no host resumes a call (DispatchAnswered stands in
// for one in tests).
func importedInput() []byte { return nil }
