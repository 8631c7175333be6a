//go:build wasip1

package guest

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// The toolhost_v1 egress imports (abi.ImportHTTPRequest and
// abi.ImportHTTPResponse). A module that never calls Client.Do does not
// import them: the linker drops what is unreachable.

//go:wasmimport toolhost_v1 http_request
func hostHTTPRequest(ptr unsafe.Pointer, n int32) int32

//go:wasmimport toolhost_v1 http_response
func hostHTTPResponse(ptr unsafe.Pointer, n int32) int32

func hostRoundTrip(req []byte) ([]byte, error) {
	n := hostHTTPRequest(unsafe.Pointer(unsafe.SliceData(req)), int32(len(req)))
	runtime.KeepAlive(req)
	if n <= 0 {
		return nil, errors.New("egress: the host could not read the request")
	}
	buf := make([]byte, n)
	if got := hostHTTPResponse(unsafe.Pointer(unsafe.SliceData(buf)), n); got != n {
		return nil, fmt.Errorf("egress: the host returned %d of %d result bytes", got, n)
	}
	return buf, nil
}
