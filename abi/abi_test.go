package abi_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi"
)

func TestPackUnpack(t *testing.T) {
	tests := []struct {
		ptr, length uint32
		packed      uint64
	}{
		{0, 0, 0},
		{0, 1, 1},
		{1, 0, 1 << 32},
		{1, 1, 1<<32 | 1},
		{0x12345678, 0x9abcdef0, 0x123456789abcdef0},
		{math.MaxUint32, 0, 0xffffffff00000000},
		{0, math.MaxUint32, 0x00000000ffffffff},
		{math.MaxUint32, math.MaxUint32, math.MaxUint64},
		{1 << 31, 1 << 31, 0x8000000080000000},
	}
	for _, tt := range tests {
		if got := abi.Pack(tt.ptr, tt.length); got != tt.packed {
			t.Errorf("Pack(%#x, %#x) = %#x, want %#x", tt.ptr, tt.length, got, tt.packed)
		}
		ptr, length := abi.Unpack(tt.packed)
		if ptr != tt.ptr || length != tt.length {
			t.Errorf("Unpack(%#x) = (%#x, %#x), want (%#x, %#x)", tt.packed, ptr, length, tt.ptr, tt.length)
		}
	}
}

// The i64 a guest returns comes back from wazero as a uint64 of the signed
// value; every bit pattern must unpack and repack to itself.
func TestUnpackPackIsIdentity(t *testing.T) {
	for _, v := range []uint64{0, 1, math.MaxUint64, 1 << 63, 0xdeadbeefcafebabe, uint64(math.MaxInt64)} {
		if got := abi.Pack(abi.Unpack(v)); got != v {
			t.Errorf("Pack(Unpack(%#x)) = %#x", v, got)
		}
	}
}

func TestValidToolName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"a", true},
		{"text.count", true},
		{"A-Z_a-z.0-9", true},
		{"...", true},
		{"-", true},
		{"_", true},
		{strings.Repeat("x", abi.MaxToolNameLen), true},
		{strings.Repeat("x", abi.MaxToolNameLen+1), false},
		{"", false},
		{"has space", false},
		{" lead", false},
		{"trail ", false},
		{"tab\t", false},
		{"new\nline", false},
		{"slash/name", false},
		{"colon:name", false},
		{"plus+", false},
		{"star*", false},
		{"quote\"", false},
		{"nul\x00", false},
		{"café", false},
		{"名前", false},
		{"emoji😀", false},
		{"\xff", false},
		{"ａ", false}, // fullwidth a
	}
	for _, tt := range tests {
		if got := abi.ValidToolName(tt.name); got != tt.want {
			t.Errorf("ValidToolName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestErrorKindValid(t *testing.T) {
	for _, k := range []abi.ErrorKind{abi.KindTransient, abi.KindSchema, abi.KindInternal} {
		if !k.Valid() {
			t.Errorf("%q.Valid() = false", k)
		}
	}
	for _, k := range []abi.ErrorKind{"", "timeout", "Transient", "SCHEMA", "internal "} {
		if k.Valid() {
			t.Errorf("%q.Valid() = true", k)
		}
	}
}

func TestContractErrorMessage(t *testing.T) {
	var err error = &abi.ContractError{What: "manifest", Reason: "no tools"}
	if got := err.Error(); got != "manifest: no tools" {
		t.Errorf("Error() = %q", got)
	}
	var ce *abi.ContractError
	if !errors.As(err, &ce) || ce.What != "manifest" {
		t.Errorf("errors.As failed: %v", err)
	}
}

// contractError asserts err is a *abi.ContractError about what whose
// message contains every one of want.
func contractError(t *testing.T, err error, what string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want a %s contract error containing %q", what, want)
	}
	var ce *abi.ContractError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *abi.ContractError", err, err)
	}
	if ce.What != what {
		t.Errorf("What = %q, want %q (error %v)", ce.What, what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestLogLevel(t *testing.T) {
	for l, want := range map[abi.LogLevel]string{abi.LogDebug: "debug", abi.LogInfo: "info", abi.LogNotice: "notice",
		abi.LogWarning: "warning", abi.LogError: "error", -1: "error", 5: "error", 99: "error"} {
		if got := l.String(); got != want {
			t.Errorf("LogLevel(%d).String() = %q, want %q", l, got, want)
		}
		if valid := l >= 0 && l <= 4; l.Valid() != valid {
			t.Errorf("LogLevel(%d).Valid() = %v", l, l.Valid())
		}
	}
}
