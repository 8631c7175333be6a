// Command mathtools is a toolhost tool module for arithmetic a language
// model should not do in its head: expression evaluation and descriptive
// statistics, in IEEE 754 double precision, and counting primes (the
// example of a tool that reports progress). Build it as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/mathtools.wasm ./tools-src/mathtools
package main

import (
	"math"
	"slices"
	"unicode"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

func init() {
	// Pure functions that answer in milliseconds; 5 s only stops a
	// pathological input early.
	// Pure functions keep nothing between calls: a caller's calls may
	// share a warm instance (docs/ABI.md, "Warm instances").
	pure := guest.Options{Idempotent: true, ReadOnly: true, TimeoutMS: 5000, Instances: abi.InstancesReuse}

	pure.Title = "Evaluate an arithmetic expression"
	pure.Description = "Evaluates an arithmetic expression in double precision and returns its value. " +
		"Operators: + - * / % (remainder, with the sign of the left operand) and ^ (power, " +
		"right-associative, binding tighter than unary minus: -2^2 is -4, 2^3^2 is 512). " +
		"Parentheses group. Functions: sqrt abs floor ceil round (half away from zero) exp " +
		"ln log10 sin cos tan (radians), and min and max of one or more arguments. Constants: pi, e. " +
		"Variables come from vars, e.g. expr \"2*x + y\" with vars {\"x\": 3, \"y\": 1}. " +
		"There is no implicit multiplication (write 2*pi, not 2pi). Division by zero, unknown names " +
		"and results that are not finite real numbers are errors that give the 1-based position."
	guest.Register("math.eval", pure, eval)

	pure.Title = "Describe a list of numbers"
	pure.Description = "Computes count, sum, mean, median, minimum, maximum and the population " +
		"standard deviation of a list of numbers, plus the sample standard deviation (divisor n-1) " +
		"when there are at least two. Use it instead of adding up numbers by hand."
	guest.Register("math.stats", pure, stats)

	pure.Title = "Count primes"
	pure.Description = "Counts the prime numbers less than below (at most 20,000,000) and returns the count " +
		"and the largest of them. It reports its progress as it sieves, and logs a summary."
	guest.RegisterContext("math.primes", pure, primes)
}

func main() {}

type evalArgs struct {
	Expr string             `json:"expr" jsonschema:"minLength=1,maxLength=4096,description=the expression such as (1 + sqrt(x)) / 2"`
	Vars map[string]float64 `json:"vars,omitempty" jsonschema:"description=values of the variables the expression uses"`
}

type evalResult struct {
	Value float64 `json:"value"`
}

func eval(a evalArgs) (evalResult, error) {
	if len(a.Expr) > 4096 {
		return evalResult{}, guest.Schemaf("expr is longer than 4096 bytes")
	}
	for name := range a.Vars {
		if !isName(name) {
			return evalResult{}, guest.Schemaf("vars: %q is not a name (letters, digits and _, not starting with a digit)", name)
		}
		if _, ok := funcs[name]; ok {
			return evalResult{}, guest.Schemaf("vars: %q is a function name", name)
		}
		if _, ok := constants[name]; ok {
			return evalResult{}, guest.Schemaf("vars: %q is a built-in constant", name)
		}
	}
	v, err := evaluate(a.Expr, a.Vars)
	if err != nil {
		return evalResult{}, guest.Schemaf("expr: %v", err)
	}
	return evalResult{Value: v}, nil
}

func isName(s string) bool {
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

type statsArgs struct {
	Values []float64 `json:"values" jsonschema:"minItems=1,maxItems=100000,description=the numbers to describe"`
}

type statsResult struct {
	Count        int      `json:"count"`
	Sum          float64  `json:"sum"`
	Mean         float64  `json:"mean"`
	Median       float64  `json:"median"`
	Min          float64  `json:"min"`
	Max          float64  `json:"max"`
	Stddev       float64  `json:"stddev" jsonschema:"description=population standard deviation (divisor n)"`
	SampleStddev *float64 `json:"sample_stddev,omitempty" jsonschema:"description=sample standard deviation (divisor n-1); absent for one value"`
}

func stats(a statsArgs) (statsResult, error) {
	n := len(a.Values)
	if n == 0 {
		return statsResult{}, guest.Schemaf("values must hold at least one number")
	}
	// Welford's update keeps the mean and variance accurate where the
	// textbook sum of squares would cancel catastrophically.
	var mean, m2, sum float64
	for i, x := range a.Values {
		sum += x
		d := x - mean
		mean += d / float64(i+1)
		m2 += d * (x - mean)
	}
	sorted := slices.Clone(a.Values)
	slices.Sort(sorted)
	median := sorted[n/2]
	if n%2 == 0 {
		median = sorted[n/2-1]/2 + sorted[n/2]/2 // halves first: no overflow near MaxFloat64
	}
	r := statsResult{
		Count: n, Sum: sum, Mean: mean, Median: median,
		Min: sorted[0], Max: sorted[n-1], Stddev: math.Sqrt(m2 / float64(n)),
	}
	if n > 1 {
		s := math.Sqrt(m2 / float64(n-1))
		r.SampleStddev = &s
	}
	for _, v := range []float64{r.Sum, r.Mean, r.Stddev} {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return statsResult{}, guest.Schemaf("values are too large: the sum or spread overflows double precision")
		}
	}
	return r, nil
}
