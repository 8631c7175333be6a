package abi_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCReader builds abi/c/reader_test.c natively with the host's clang
// (AddressSanitizer and UBSan on, so that a read past the end of the
// arguments or undefined behaviour fails the run) and runs it: the C
// SDK's JSON reader against escapes, surrogate pairs, the nesting bound,
// truncated input, bad numbers, trailing data, duplicate keys and
// invalid UTF-8. Without clang it skips, except in CI.
func TestCReader(t *testing.T) {
	bin := buildCReaderTest(t)
	cmd := exec.Command(bin)
	// The test keeps its inputs to the end on purpose.
	cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reader_test: %v\n%s", err, out)
	}
	// "ok N": every check ran (a program that returned early would print
	// fewer).
	last := strings.TrimSpace(string(out))
	n, err := strconv.Atoi(strings.TrimPrefix(last, "ok "))
	if !strings.HasPrefix(last, "ok ") || err != nil || n < 250 {
		t.Fatalf("reader_test printed %q, want \"ok N\" with N >= 250", last)
	}
}

// TestCReaderAgreesWithGo: the C reader accepts exactly the texts Go's
// encoding/json accepts as valid UTF-8 JSON, over 20,000 seeded mutations
// (bytes replaced, inserted, deleted; texts cut) of a few documents, and
// walks every one it accepts with every getter, under the sanitizers.
func TestCReaderAgreesWithGo(t *testing.T) {
	bin := buildCReaderTest(t)
	seeds := []string{
		`{"text":"say \"hi\" now","top":3,"min_length":1}`,
		`{"a":[1,-2.5e3,"x\u00e9\ud83d\ude00\\",true,false,null,{"b":{}}],"c":"é"}`,
		`[[[[{"k":[0,1e-9,"\n\t\/"]}]]]]`,
		`"caf\u00E9 😀"`,
		`-0.5E+10`,
	}
	const alphabet = "{}[]\",:\\/u0123456789abcdefABCDEF.eE+-tfnrl \t\n\x00\x1f\xff\xc3\xa9\xed\xa0\x80\xf0\x9f"
	r := rand.New(rand.NewPCG(22, 3))
	var recs [][]byte
	for range 20000 {
		b := []byte(seeds[r.IntN(len(seeds))])
		for range 1 + r.IntN(3) {
			i := r.IntN(len(b) + 1)
			switch c := alphabet[r.IntN(len(alphabet))]; r.IntN(4) {
			case 0:
				if i < len(b) {
					b[i] = c
				}
			case 1:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			case 2:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			case 3:
				b = b[:i]
			}
		}
		recs = append(recs, b)
	}
	var in bytes.Buffer
	for _, b := range recs {
		in.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(b))))
		in.Write(b)
	}
	path := filepath.Join(t.TempDir(), "records")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, path)
	cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reader_test %s: %v\n%s", path, err, out)
	}
	got := strings.TrimSpace(string(out))
	if len(got) != len(recs) {
		t.Fatalf("reader_test answered %d records of %d", len(got), len(recs))
	}
	valid := 0
	for i, b := range recs {
		want := utf8.Valid(b) && json.Valid(b)
		if want {
			valid++
		}
		if (got[i] == '1') != want {
			t.Errorf("%q: C reader accepts it: %v, Go: %v", b, got[i] == '1', want)
		}
	}
	// Both kinds must be well represented, or the comparison says little.
	if valid < len(recs)/20 || valid > len(recs)*19/20 {
		t.Fatalf("%d of %d mutations are valid JSON: the corpus is lopsided", valid, len(recs))
	}
	t.Logf("%d of %d mutations valid", valid, len(recs))
}

// buildCReaderTest compiles abi/c/reader_test.c natively, with the
// sanitizers when clang has their runtimes.
func buildCReaderTest(t *testing.T) string {
	t.Helper()
	clang, err := exec.LookPath("clang")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("clang not found (.ci/run installs it)")
		}
		t.Skip("clang not found; install clang (Debian) to run the C reader's tests")
	}
	bin := filepath.Join(t.TempDir(), "reader_test")
	args := []string{"-std=c11", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
		// The wasm import and export attributes mean nothing natively.
		"-Wno-unknown-attributes", "-Wno-ignored-attributes",
		"-I", "c", "-o", bin, filepath.Join("c", "reader_test.c")}
	sanitized := append([]string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}, args...)
	if out, err := exec.Command(clang, sanitized...).CombinedOutput(); err != nil {
		// A clang without the sanitizer runtimes still runs the checks.
		t.Logf("clang with sanitizers: %v\n%s\nbuilding without them", err, out)
		if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
			t.Fatalf("clang: %v\n%s", err, out)
		}
	}
	return bin
}
