package host

import "testing"

// TestLastFatalLine: the line quoted in a Fault's reason is the runtime's
// verdict ("fatal error: ...", "panic: ..."), not a later line of the
// traceback that happens to start with "runtime: ". The inputs are
// abridged from what the misbehave fixture's Go guest really prints.
func TestLastFatalLine(t *testing.T) {
	cases := []struct{ name, out, want string }{
		{"stack overflow",
			"runtime: goroutine stack exceeds 1048576-byte limit\nruntime: sp=0x560368 stack=[0x560000, 0x660000]\n" +
				"fatal error: stack overflow\n\nruntime stack:\nruntime.throw(...)\n" +
				"runtime: g 0: unexpected return pc for runtime.morestack called from 0x2495a8\nstack: frame={sp:0x1}\n",
			"fatal error: stack overflow"},
		{"out of memory",
			"runtime: out of memory: cannot allocate 1048576-byte block (66781184 in use)\nfatal error: out of memory\n\ngoroutine 1 [running]:\n",
			"fatal error: out of memory"},
		{"panic", "panic: assignment to entry in nil map\n\ngoroutine 5 [running]:\nmain.init.func4.1()\n",
			"panic: assignment to entry in nil map"},
		{"runtime line only", "runtime: program exceeds 10000-thread limit\n", "runtime: program exceeds 10000-thread limit"},
		{"nothing fatal", "hello\nworld\n", ""},
		{"empty", "", ""},
	}
	for _, tc := range cases {
		if got := lastFatalLine([]byte(tc.out)); got != tc.want {
			t.Errorf("%s: lastFatalLine = %q, want %q", tc.name, got, tc.want)
		}
	}
}
