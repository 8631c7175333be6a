//go:build wasip1

package guest

import "unsafe"

// The toolhost_v1 input import (abi.ImportInput). A module that never
// calls Answers (or Confirm) does not import it.

//go:wasmimport toolhost_v1 input
func wasmInput(ptr unsafe.Pointer, n int32) int32

func importedInput() []byte {
	n := wasmInput(nil, 0)
	if n <= 0 {
		return nil
	}
	buf := make([]byte, n)
	if wasmInput(unsafe.Pointer(unsafe.SliceData(buf)), n) != n {
		return nil
	}
	return buf
}
