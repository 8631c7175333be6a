package hostmatch

import "testing"

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern    string
		host, port string
		want       bool
	}{
		{"api.example.com", "api.example.com", "443", true},
		{"api.example.com", "API.Example.com.", "", true},
		{"api.example.com", "example.com", "443", false},
		{"api.example.com", "evil-api.example.com", "443", false},
		{"*.example.com", "a.example.com", "80", true},
		{"*.example.com", "a.b.example.com", "80", true},
		{"*.example.com", "example.com", "80", false},
		{"*.example.com", "badexample.com", "80", false},
		{"127.0.0.1", "127.0.0.1", "8080", true},
		{"127.0.0.1:8080", "127.0.0.1", "8080", true},
		{"127.0.0.1:8080", "127.0.0.1", "8081", false},
		{"[::1]", "::1", "1", true},
		{"[::1]:99", "[::1]", "99", true},
		{"localhost", "127.0.0.1", "80", false},
		{"*", "anything.example.org", "443", true},
		{"*", "10.0.0.1", "80", true},
		{"*", "", "443", false},
		{"*:443", "a.example", "443", true},
		{"*:443", "a.example", "8443", false},
	}
	for _, tt := range tests {
		p, err := Parse(tt.pattern)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.pattern, err)
		}
		if got := p.Match(tt.host, tt.port); got != tt.want {
			t.Errorf("%q.Match(%q, %q) = %v, want %v", tt.pattern, tt.host, tt.port, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"", "**", "*.", "*:0", "a.*.com", "https://a.com", "a.com/x", "a.com:0", "a.com:99999", "a.com:http"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

func TestBest(t *testing.T) {
	ps := []Pattern{MustParse("*.example.com"), MustParse("*.api.example.com"), MustParse("v1.api.example.com"), MustParse("*.api.example.com:8443")}
	for _, tt := range []struct {
		host, port string
		want       int
	}{
		{"x.example.com", "443", 0},
		{"v2.api.example.com", "443", 1},
		{"v1.api.example.com", "443", 2},
		{"v2.api.example.com", "8443", 3},
		{"other.org", "443", -1},
	} {
		if got := Best(ps, tt.host, tt.port); got != tt.want {
			t.Errorf("Best(%q, %q) = %d, want %d", tt.host, tt.port, got, tt.want)
		}
	}
}

// TestAnyIsLeastSpecific: "*" matches every host but loses to any other
// pattern that matches.
func TestAnyIsLeastSpecific(t *testing.T) {
	ps := []Pattern{MustParse("*"), MustParse("*.example.com"), MustParse("*:8443")}
	for _, tt := range []struct {
		host, port string
		want       int
	}{
		{"other.org", "443", 0},
		{"a.example.com", "443", 1},
		{"other.org", "8443", 2},
	} {
		if got := Best(ps, tt.host, tt.port); got != tt.want {
			t.Errorf("Best(%q, %q) = %d, want %d", tt.host, tt.port, got, tt.want)
		}
	}
	if s := MustParse("*:443").String(); s != "*:443" {
		t.Errorf("String() = %q", s)
	}
}
