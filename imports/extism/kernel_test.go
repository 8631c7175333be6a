package extism

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi"
)

func TestKernelBlocks(t *testing.T) {
	k := NewKernel(Config{})
	if err := k.Begin([]byte("input!"), 1<<20); err != nil {
		t.Fatal(err)
	}
	if k.input == 0 || k.length(k.input) != 6 {
		t.Fatalf("input block %d of %d bytes", k.input, k.length(k.input))
	}
	a, err := k.alloc(10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a == 0 || k.length(a) != 10 {
		t.Fatalf("alloc(10) = %d, length %d", a, k.length(a))
	}
	if k.length(a+1) != 0 || k.length(0) != 0 || k.length(math.MaxUint64) != 0 {
		t.Error("length of an offset that starts no block is not 0")
	}
	b, _ := k.span(a, 10)
	copy(b, "0123456789")
	k.release(a)
	k.release(a) // twice, and an offset that is no block: ignored
	k.release(12345)
	c, _ := k.alloc(4, 0)
	if c != a {
		t.Errorf("alloc after free = %d, want the freed block %d again", c, a)
	}
	if got, _ := k.blockBytes(c); string(got) != "\x00\x00\x00\x00" {
		t.Errorf("reused block holds %q, want zeroes", got)
	}
	for _, tc := range []struct{ off, n uint64 }{{0, 1}, {uint64(len(k.mem)) + 1, 1}, {1, uint64(len(k.mem)) + 1}, {2, math.MaxUint64}} {
		if _, ok := k.span(tc.off, tc.n); ok {
			t.Errorf("span(%d, %d) is inside %d bytes of kernel memory", tc.off, tc.n, len(k.mem))
		}
	}
	// Begin empties the kernel memory; vars are kept.
	if err := k.setVar("n", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := k.Begin(nil, 1<<20); err != nil {
		t.Fatal(err)
	}
	if k.Bytes() != 0 || k.input != 0 || k.length(a) != 0 {
		t.Errorf("after Begin: %d bytes, input %d", k.Bytes(), k.input)
	}
	if string(k.vars["n"]) != "1" {
		t.Error("Begin dropped the vars")
	}
}

func TestKernelLimit(t *testing.T) {
	k := NewKernel(Config{})
	if err := k.Begin(nil, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := k.alloc(600, 300); err != nil {
		t.Fatal(err)
	}
	for _, n := range []uint64{101, math.MaxUint64, math.MaxUint64 - 500} {
		if _, err := k.alloc(n, 300); err == nil || !strings.Contains(err.Error(), "1000-byte limit") {
			t.Errorf("alloc(%d) over the limit: %v", n, err)
		}
	}
	if _, err := k.alloc(100, 300); err != nil {
		t.Errorf("alloc up to the limit: %v", err)
	}
	if err := k.Begin(make([]byte, 2000), 1000); err == nil {
		t.Error("an input over the limit was accepted")
	}
}

func TestKernelVarLimit(t *testing.T) {
	k := NewKernel(Config{MaxVarBytes: 10})
	if err := k.setVar("ab", []byte("12345678")); err != nil {
		t.Fatal(err)
	}
	if err := k.setVar("c", []byte("1")); err == nil {
		t.Error("a var past the limit was accepted")
	}
	if err := k.setVar("ab", []byte("1")); err != nil {
		t.Errorf("replacing a var with a smaller value: %v", err)
	}
	if err := k.setVar("c", []byte("1234")); err != nil {
		t.Errorf("a var within the limit after a replacement: %v", err)
	}
	if err := k.setVar("ab", nil); err != nil || k.varBytes != 5 {
		t.Errorf("removing: %v, %d bytes left, want 5", err, k.varBytes)
	}
}

func TestManifest(t *testing.T) {
	raw, err := Manifest([]byte(`{"tools":[{"name":"a","description":"A.","annotations":{"title":"The A","readOnlyHint":true,"destructiveHint":false}},
		{"name":"b","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"outputSchema":{"type":"object"}}]}`), Offers{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := abi.ParseManifest(raw)
	if err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	tools := m.Resolve()
	if len(tools) != 2 {
		t.Fatalf("tools = %+v", tools)
	}
	a, b := tools[0], tools[1]
	if a.Title != "The A" || !a.ReadOnly || a.Destructive || a.Idempotent || a.Instances != abi.InstancesReuse || string(a.InputSchema) != `{"type":"object"}` {
		t.Errorf("a = %+v", a)
	}
	if b.ReadOnly || !b.Destructive || string(b.OutputSchema) != `{"type":"object"}` {
		t.Errorf("b = %+v", b)
	}
	for _, bad := range []string{`[]`, `{"tools":[{"name":"bad name!"}]}`} {
		raw, err := Manifest([]byte(bad), Offers{})
		if err == nil {
			_, err = abi.ParseManifest(raw)
		}
		if err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func TestResult(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{`{"content":[{"type":"text","text":"hi"}]}`, `"hi"`, ""},
		{`{"content":[{"type":"text","text":"{}"}],"structuredContent":{"n":1}}`, `{"n":1}`, ""},
		{`{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
			`[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]`, ""},
		{`{"content":[]}`, `[]`, ""},
		{`{"content":[{"type":"text","text":"bad"},{"type":"text","text":"input"}],"isError":true}`, "", "bad\ninput"},
		{`{"isError":true}`, "", "the plugin reported an error"},
	} {
		got, err := Result([]byte(tc.in))
		var ae *abi.Error
		switch {
		case tc.err != "":
			if !errors.As(err, &ae) || ae.Kind != abi.KindInternal || ae.Message != tc.err {
				t.Errorf("Result(%s) = %v, want internal %q", tc.in, err, tc.err)
			}
		case err != nil || string(got) != tc.want:
			t.Errorf("Result(%s) = %s, %v, want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := Result([]byte(`"nope"`)); err == nil {
		t.Error("a result that is no CallToolResult was accepted")
	}
}

func TestCallInput(t *testing.T) {
	if got := string(V1.CallInput("t", []byte(`{"a":1}`))); got != `{"params":{"name":"t","arguments":{"a":1}}}` {
		t.Errorf("v1 = %s", got)
	}
	if got := string(V2.CallInput("t", nil)); got != `{"request":{"name":"t"},"context":{"id":0,"_meta":{}}}` {
		t.Errorf("v2 = %s", got)
	}
	if V1.ListInput() != nil || string(V2.ListInput()) != `{"context":{"id":0,"_meta":{}}}` {
		t.Error("list inputs")
	}
}
