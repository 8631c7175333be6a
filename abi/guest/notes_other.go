//go:build !wasip1

package guest

import "github.com/toolhost/toolhost/abi/guest/abi"

// Outside WebAssembly there is no host to tell.
func importedProgress(float64, float64, string) abi.NoteStatus { return abi.NoteDropped }
func importedLog(abi.LogLevel, string) abi.NoteStatus          { return abi.NoteDropped }
