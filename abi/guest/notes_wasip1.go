//go:build wasip1

package guest

import (
	"runtime"
	"unsafe"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// The toolhost_v1 note imports (abi.ImportProgress and abi.ImportLog). A
// module that never calls Progress or Log does not import them.

//go:wasmimport toolhost_v1 progress
func wasmProgress(done, total float64, ptr unsafe.Pointer, n int32) int32

//go:wasmimport toolhost_v1 log
func wasmLog(level int32, ptr unsafe.Pointer, n int32) int32

func importedProgress(done, total float64, msg string) abi.NoteStatus {
	st := wasmProgress(done, total, unsafe.Pointer(unsafe.StringData(msg)), int32(len(msg)))
	runtime.KeepAlive(msg)
	return abi.NoteStatus(st)
}

func importedLog(level abi.LogLevel, msg string) abi.NoteStatus {
	st := wasmLog(int32(level), unsafe.Pointer(unsafe.StringData(msg)), int32(len(msg)))
	runtime.KeepAlive(msg)
	return abi.NoteStatus(st)
}
