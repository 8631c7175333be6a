package transport_test

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// stdioRequestIDs are the random request ids of tool results, masked.
var stdioRequestIDs = regexp.MustCompile(`"toolhost/request_id":"[0-9a-f]{16}"`)

var updateStdio = flag.Bool("update-stdio", false, "rewrite transport/testdata/stdio/*.golden from the server's answers")

// TestStdioGolden replays each golden file's requests ("> " lines) and
// compares the answers ("< " lines) byte for byte: the error codes, ids
// and messages clients see for malformed stdio input, and the order of
// requests the SDK's sessions once refused. A "> " line that is a
// well-formed notification gets no answer, so no "< " line follows it.
func TestStdioGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/stdio/*.golden")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// A file whose comment says "# from the first line" starts
			// on a fresh connection; the others after initialize.
			var p *pipes
			if strings.Contains(string(b), "\n# from the first line\n") {
				p = openPipes(t, 0)
			} else {
				p = servePipes(t, 0)
			}
			var out []string
			var want []string
			sc := bufio.NewScanner(strings.NewReader(string(b)))
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "> "):
					out = append(out, line)
					p.send(t, strings.TrimPrefix(line, "> "))
					if strings.Contains(line, `"method":"notifications/`) {
						continue // a notification: no answer
					}
					got, err := p.out.ReadString('\n')
					if err != nil {
						t.Fatalf("after %q: %v", line, err)
					}
					got = stdioRequestIDs.ReplaceAllString(got, `"toolhost/request_id":"REQUEST_ID"`)
					out = append(out, "< "+strings.TrimSuffix(got, "\n"))
				case strings.HasPrefix(line, "< "):
					want = append(want, line)
				default:
					out = append(out, line)
				}
			}
			if *updateStdio {
				if err := os.WriteFile(file, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			var got []string
			for _, l := range out {
				if strings.HasPrefix(l, "< ") {
					got = append(got, l)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d answers, golden file has %d (run with -update-stdio after checking the change)", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("answer %d:\n got %s\nwant %s", i+1, got[i], want[i])
				}
			}
		})
	}
}
