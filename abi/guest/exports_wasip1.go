//go:build wasip1

package guest

import (
	"unsafe"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// Guest memory ownership: buffers handed to the host through toolhost_alloc
// stay referenced in inbox until the next toolhost_call returns, so the Go
// GC cannot free them while the host writes into them. The response of the
// last call (and the manifest) stay referenced until the next call, long
// enough for the host to copy them out.
var (
	inbox    [][]byte
	lastResp []byte
)

// stackGrown is set once an instance's first call has grown the stack
// that every toolhost_call of the instance runs on.
var stackGrown bool

//go:wasmexport toolhost_abi_version
func exportABIVersion() int32 { return abi.Version }

//go:wasmexport toolhost_alloc
func exportAlloc(size int32) int32 {
	if size < 0 {
		return 0
	}
	buf := make([]byte, max(size, 1))
	inbox = append(inbox, buf)
	return addr(buf)
}

//go:wasmexport toolhost_describe
func exportDescribe() int64 {
	return pack(describe())
}

//go:wasmexport toolhost_call
func exportCall(namePtr, nameLen, argsPtr, argsLen int32) int64 {
	if !stackGrown {
		growStack()
		stackGrown = true
	}
	name := string(guestBytes(namePtr, nameLen))
	// The arguments are read where the host wrote them: the buffer is
	// the call's from now on (the host allocates anew for every call),
	// and args keeps it alive once inbox lets it go.
	args := guestBytes(argsPtr, argsLen)
	// inbox keeps its array, so a call's two allocations do not grow a
	// new one each time.
	clear(inbox)
	inbox = inbox[:0]
	lastResp = Dispatch(name, args)
	return pack(lastResp)
}

// guestBytes finds the n bytes at ptr among the buffers toolhost_alloc
// handed out. Looking them up, rather than turning the integer back into a
// pointer, keeps the GC's view of memory exact and means a host passing a
// pointer it never got reads nothing.
func guestBytes(ptr, n int32) []byte {
	if n <= 0 {
		return nil
	}
	for _, buf := range inbox {
		if addr(buf) == ptr && int(n) <= len(buf) {
			return buf[:n]
		}
	}
	return nil
}

func addr(b []byte) int32 {
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

func pack(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	return int64(abi.Pack(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b))))
}

// callStack is what the stack toolhost_call runs on is grown to at once,
// on the instance's first call: decoding the arguments, the tool and
// encoding its result need about that much, and grown on demand that is
// a few doublings deep into the call, each copying the stack and walking
// every frame's tables. In a fresh instance every call is the first: one
// growth at the top, while the stack is shallow, cut about 3% of a fresh
// text.count's CPU (docs/BENCHMARKS.md, "Issue 26, session 15"). Later
// calls find the stack grown (or regrow it on demand, if the GC shrank it).
const callStack = 16 << 10

// growStack needs a frame of callStack bytes, so the runtime grows the
// stack to fit it in one step; keepFrame keeps the compiler from
// dropping the frame.
//
//go:noinline
func growStack() {
	var frame [callStack]byte
	keepFrame(frame[:])
}

//go:noinline
func keepFrame(b []byte) {
	if b[len(b)-1] != 0 {
		panic("guest: growStack's frame is not zero")
	}
}
