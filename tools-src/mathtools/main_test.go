package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
	"github.com/toolhost/toolhost/tools-src/internal/tooltest"
)

func TestManifest(t *testing.T) {
	pure := tooltest.Flags{Idempotent: true, ReadOnly: true, TimeoutMS: 5000}
	tooltest.CheckManifest(t, map[string]tooltest.Flags{"math.eval": pure, "math.stats": pure, "math.primes": pure})
}

func TestEval(t *testing.T) {
	ok := func(expr string, want float64) tooltest.Case {
		return tooltest.Case{Name: expr, Tool: "math.eval", Args: fmt.Sprintf(`{"expr":%q}`, expr),
			Want: fmt.Sprintf(`{"value":%v}`, want)}
	}
	fail := func(expr, msg string) tooltest.Case {
		return tooltest.Case{Name: expr, Tool: "math.eval", Args: fmt.Sprintf(`{"expr":%q}`, expr),
			Kind: abi.KindSchema, Msg: msg}
	}
	tooltest.Run(t, []tooltest.Case{
		ok("1 + 2 * 3", 7),
		ok("(1 + 2) * 3", 9),
		ok("10 - 4 - 3", 3), // left-associative
		ok("2 ^ 3 ^ 2", 512),
		ok("-2 ^ 2", -4),
		ok("2 ^ -1", 0.5),
		ok("--3", 3),
		ok("7 % 3", 1),
		ok("-7 % 3", -1),
		ok("1.5e3 + .5", 1500.5),
		ok("0.1 + 0.2", 0.30000000000000004),
		ok("sqrt(16) + abs(-2) + floor(2.7) + ceil(2.1) + round(2.5)", 4+2+2+3+3),
		ok("max(1, 7, 3) - min(4, -2)", 9),
		ok("ln(e) + log10(1000)", 4),
		ok("round(sin(pi/2) * 1000) + cos(0) + tan(0)", 1001),
		ok("exp(0)", 1),
		ok(" ( ( 1 ) ) ", 1),
		{Name: "variables", Tool: "math.eval", Args: `{"expr":"2*x + y_1","vars":{"x":3,"y_1":-1}}`, Want: `{"value":5}`},
		fail("1 / 0", "division by zero at position 3"),
		fail("5 % (2 - 2)", "modulo by zero at position 3"),
		fail("0 ^ -1", "division by zero (0 to a negative power) at position 3"),
		fail("2 * foo + 1", `unknown identifier "foo" (known: e, pi) at position 5`),
		fail("log(10)", `unknown function "log"; use ln for the natural logarithm or log10 at position 1`),
		fail("sqrt(-4)", "sqrt of a negative number (-4) at position 1"),
		fail("1 + ln(0)", "ln of a number that is not positive (0) at position 5"),
		fail("(-8) ^ (1/3)", "the power is not a real number at position 6"),
		fail("10 ^ 400", "the power overflows at position 4"),
		fail("sqrt(1, 2)", "sqrt takes 1 argument(s), got 2"),
		fail("(1 + 2", `expected ')' to close the '(' at position 1 at position 7`),
		fail("max(1, 2", `expected ')' to close the call to max at position 1`),
		fail("2 3", `unexpected '3' at position 3`),
		fail("2pi", `unexpected 'p' at position 2`),
		fail("1 +", "unexpected end of expression at position 4"),
		fail("1e+", `bad number "1e+" at position 1`),
		fail(strings.Repeat("(", 300)+"1"+strings.Repeat(")", 300), "nests deeper than 200 levels"),
		{Name: "unknown variable lists vars", Tool: "math.eval", Args: `{"expr":"x + z","vars":{"x":1}}`,
			Kind: abi.KindSchema, Msg: `unknown identifier "z" (known: e, pi, x) at position 5`},
		{Name: "var shadows a function", Tool: "math.eval", Args: `{"expr":"1","vars":{"sqrt":1}}`,
			Kind: abi.KindSchema, Msg: `"sqrt" is a function name`},
		{Name: "var shadows a constant", Tool: "math.eval", Args: `{"expr":"1","vars":{"pi":3}}`,
			Kind: abi.KindSchema, Msg: `"pi" is a built-in constant`},
		{Name: "var is not a name", Tool: "math.eval", Args: `{"expr":"1","vars":{"2x":3}}`,
			Kind: abi.KindSchema, Msg: `"2x" is not a name`},
		{Name: "empty expression", Tool: "math.eval", Args: `{"expr":""}`, Rejected: true},
		{Name: "too long", Tool: "math.eval", Args: fmt.Sprintf(`{"expr":"1%s"}`, strings.Repeat("+1", 2048)),
			Rejected: true, Kind: abi.KindSchema, Msg: "longer than 4096"},
		{Name: "var not a number", Tool: "math.eval", Args: `{"expr":"x","vars":{"x":"2"}}`, Rejected: true},
	})
}

func TestStats(t *testing.T) {
	tooltest.Run(t, []tooltest.Case{
		{Name: "one value", Tool: "math.stats", Args: `{"values":[4]}`,
			Want: `{"count":1,"sum":4,"mean":4,"median":4,"min":4,"max":4,"stddev":0}`},
		{Name: "odd count", Tool: "math.stats", Args: `{"values":[2,4,4,4,5,5,7,9,1]}`,
			Check: func(t *testing.T, r []byte) {
				if !strings.Contains(string(r), `"count":9,"sum":41,`) || !strings.Contains(string(r), `"median":4,"min":1,"max":9`) {
					t.Fatalf("got %s", r)
				}
			}},
		{Name: "even count", Tool: "math.stats", Args: `{"values":[2,4,4,4,5,5,7,9]}`,
			Want: fmt.Sprintf(`{"count":8,"sum":40,"mean":5,"median":4.5,"min":2,"max":9,"stddev":2,"sample_stddev":%v}`,
				math.Sqrt(32.0/7))},
		{Name: "accurate on a large offset", Tool: "math.stats", Args: `{"values":[1e9,1000000001,1000000002]}`,
			Check: func(t *testing.T, r []byte) {
				if !strings.Contains(string(r), `"sample_stddev":1}`) {
					t.Fatalf("want sample_stddev exactly 1, got %s", r)
				}
			}},
		{Name: "a spread beyond double precision is an error", Tool: "math.stats", Args: `{"values":[1e308,-1e308]}`,
			Kind: abi.KindSchema, Msg: "overflows"},
		{Name: "empty list", Tool: "math.stats", Args: `{"values":[]}`,
			Rejected: true, Kind: abi.KindSchema, Msg: "at least one number"},
		{Name: "not numbers", Tool: "math.stats", Args: `{"values":["1"]}`, Rejected: true},
	})
}

func TestPrimes(t *testing.T) {
	ok := func(below int, want string) tooltest.Case {
		return tooltest.Case{Name: fmt.Sprint(below), Tool: "math.primes", Args: fmt.Sprintf(`{"below":%d}`, below), Want: want}
	}
	tooltest.Run(t, []tooltest.Case{
		ok(2, `{"count":0,"largest":0}`),
		ok(3, `{"count":1,"largest":2}`),
		ok(30, `{"count":10,"largest":29}`),
		ok(100, `{"count":25,"largest":97}`),
		ok(7919, `{"count":999,"largest":7907}`), // 7919 is the 1000th prime: "below" excludes it
		ok(1_000_000, `{"count":78498,"largest":999983}`),
		{Name: "too large", Tool: "math.primes", Args: `{"below":20000001}`, Rejected: true, Kind: abi.KindSchema, Msg: "below must be between"},
	})
}
