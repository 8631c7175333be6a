package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type testKey struct{ pkg, test string }

// skip is one skipped test and the last thing it logged (t.Skip's reason).
type skip struct {
	testKey
	reason string
}

// filter turns the event stream back into plain go test output, keeping a
// test's lines until it ends: printed if it failed, dropped otherwise.
type filter struct {
	out     io.Writer
	pending map[testKey][]string
	order   []testKey // pending keys in the order they started
	skips   []skip
}

func newFilter(out io.Writer) *filter {
	return &filter{out: out, pending: map[testKey][]string{}}
}

// logLine is a t.Log/t.Skip line as go test -v prints it: "    file.go:12: text".
var logLine = regexp.MustCompile(`^\s+\S+\.go:\d+: (.*)$`)

// chatter is what -v adds that plain go test does not print.
var chatter = regexp.MustCompile(`^(=== (RUN|PAUSE|CONT|NAME)\s|\s*--- (PASS|SKIP): |PASS$)`)

func (f *filter) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Action == "" {
			fmt.Fprintln(f.out, sc.Text()) // not an event: pass it on as it is
			continue
		}
		f.handle(ev)
	}
	return sc.Err()
}

func (f *filter) handle(ev event) {
	k := testKey{ev.Package, ev.Test}
	switch {
	case ev.Action == "build-output":
		io.WriteString(f.out, ev.Output)
	case ev.Action == "output" && ev.Test != "":
		if _, ok := f.pending[k]; !ok {
			f.order = append(f.order, k)
		}
		f.pending[k] = append(f.pending[k], ev.Output)
	case ev.Action == "output":
		if !chatter.MatchString(strings.TrimRight(ev.Output, "\n")) {
			io.WriteString(f.out, ev.Output)
		}
	case ev.Action == "fail" && ev.Test != "":
		f.flush(k)
	case ev.Action == "fail":
		// The package died (a panic, a timeout): what its running tests
		// printed is the story.
		for _, pk := range f.order {
			if pk.pkg == ev.Package {
				f.flush(pk)
			}
		}
	case ev.Action == "skip" && ev.Test != "":
		f.skips = append(f.skips, skip{k, reason(f.pending[k])})
		delete(f.pending, k)
	case ev.Action == "pass" && ev.Test != "":
		delete(f.pending, k)
	}
}

// flush prints a failed test's lines without -v's chatter.
func (f *filter) flush(k testKey) {
	for _, line := range f.pending[k] {
		if !strings.HasPrefix(line, "=== ") {
			io.WriteString(f.out, line)
		}
	}
	delete(f.pending, k)
}

// reason is the last line the test logged before its --- SKIP line.
func reason(lines []string) string {
	r := ""
	for _, l := range lines {
		if m := logLine.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
			r = m[1]
		}
	}
	if r == "" {
		return "(no reason given)"
	}
	return r
}

// summary prints the skipped tests grouped by reason, most common first.
func (f *filter) summary() {
	if len(f.skips) == 0 {
		fmt.Fprintln(f.out, "skipped: none")
		return
	}
	byReason := map[string][]string{}
	for _, s := range f.skips {
		name := s.pkg[strings.LastIndex(s.pkg, "/")+1:] + "." + s.test
		byReason[s.reason] = append(byReason[s.reason], name)
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if len(byReason[reasons[i]]) != len(byReason[reasons[j]]) {
			return len(byReason[reasons[i]]) > len(byReason[reasons[j]])
		}
		return reasons[i] < reasons[j]
	})
	fmt.Fprintf(f.out, "skipped: %d tests\n", len(f.skips))
	for _, r := range reasons {
		names := byReason[r]
		list := strings.Join(names, ", ")
		if len(names) > 3 {
			list = strings.Join(names[:3], ", ") + fmt.Sprintf(", … %d more", len(names)-3)
		}
		fmt.Fprintf(f.out, "  %2d × %s\n       (%s)\n", len(names), r, list)
	}
}
