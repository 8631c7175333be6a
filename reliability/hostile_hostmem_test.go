package reliability_test

import (
	"bytes"
	"testing"
)

// TestHostileHostMemory: issue 10 finding 2. Globals, element segments
// and data segments live on the host's heap, per instance, outside the
// linear-memory cap: a million globals cost ~90 MiB per call in flight.
// Each module here is a few hundred kilobytes to a megabyte, and is refused
// at load, naming what would take the memory.
func TestHostileHostMemory(t *testing.T) {
	vec := func(n int, item ...byte) []byte {
		return append(uleb(nil, uint64(n)), bytes.Repeat(item, n)...)
	}
	section := func(id byte, content []byte) []byte {
		return append(uleb([]byte{id}, uint64(len(content))), content...)
	}
	head := []byte("\x00asm\x01\x00\x00\x00\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00") // type () -> (), one function
	code := []byte{10, 4, 1, 2, 0, 0x0b}
	cases := []struct {
		name, want string
		wasm       []byte
	}{
		{"globals", "200000 globals", bytes.Join([][]byte{head, section(6, vec(200000, 0x7f, 1, 0x41, 0, 0x0b)), code}, nil)},
		{"element items", "500000 element items", bytes.Join([][]byte{head, section(9, append([]byte{1, 1, 0}, vec(500000, 0)...)), code}, nil)},
		{"data segments", "1000000 data segments", bytes.Join([][]byte{head, code, section(11, vec(1000000, 1, 1, 7))}, nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hostile(t, rigConfig{}, func(r *rig) {
				reason := r.mustRefuse(tc.name+".wasm", tc.wasm)
				wantIn(t, reason, tc.want)
				wantIn(t, reason, "over the host's limit of 16 MiB")
			})
		})
	}
}
