//go:build !unix

package compile

import "time"

// cpuTime is unknown here: the wall-clock backstop bounds a compile.
func cpuTime() time.Duration { return 0 }
