package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// maxDepth bounds nesting (parentheses and chained unary signs) so that a
// hostile expression cannot grow the guest stack toward the memory limit;
// no sensible expression gets near it.
const maxDepth = 200

var constants = map[string]float64{"pi": math.Pi, "e": math.E}

// funcs maps a name to its arity (-1: one or more) and implementation.
// Domain errors are checked by name in call, so each entry stays one line.
var funcs = map[string]struct {
	arity int
	fn    func(args []float64) float64
}{
	"sqrt":  {1, func(a []float64) float64 { return math.Sqrt(a[0]) }},
	"abs":   {1, func(a []float64) float64 { return math.Abs(a[0]) }},
	"floor": {1, func(a []float64) float64 { return math.Floor(a[0]) }},
	"ceil":  {1, func(a []float64) float64 { return math.Ceil(a[0]) }},
	"round": {1, func(a []float64) float64 { return math.Round(a[0]) }},
	"ln":    {1, func(a []float64) float64 { return math.Log(a[0]) }},
	"log10": {1, func(a []float64) float64 { return math.Log10(a[0]) }},
	"exp":   {1, func(a []float64) float64 { return math.Exp(a[0]) }},
	"sin":   {1, func(a []float64) float64 { return math.Sin(a[0]) }},
	"cos":   {1, func(a []float64) float64 { return math.Cos(a[0]) }},
	"tan":   {1, func(a []float64) float64 { return math.Tan(a[0]) }},
	"min":   {-1, func(a []float64) float64 { return slices.Min(a) }},
	"max":   {-1, func(a []float64) float64 { return slices.Max(a) }},
}

// evalError carries a 1-based character position so a caller can point at
// the mistake.
type evalError struct {
	pos int
	msg string
}

func (e *evalError) Error() string { return fmt.Sprintf("%s at position %d", e.msg, e.pos) }

// parser evaluates while it parses: the grammar is small enough that an
// AST would only add code. Errors unwind with panic(*evalError) and are
// recovered in evaluate, which keeps every rule free of error plumbing.
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = primary [ "^" unary ]          right-associative; -2^2 = -4
//	primary = number | name | name "(" expr { "," expr } ")" | "(" expr ")"
type parser struct {
	src   []rune
	pos   int // index into src
	depth int
	vars  map[string]float64
}

func evaluate(expr string, vars map[string]float64) (v float64, err error) {
	p := &parser{src: []rune(expr), vars: vars}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*evalError)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	v = p.expr()
	if p.skipSpace(); p.pos < len(p.src) {
		p.fail(p.pos, "unexpected %q", p.src[p.pos])
	}
	return v, nil
}

func (p *parser) fail(at int, format string, args ...any) {
	panic(&evalError{pos: at + 1, msg: fmt.Sprintf(format, args...)})
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) && unicode.IsSpace(p.src[p.pos]) {
		p.pos++
	}
}

// peek skips spaces and returns the next rune, or 0 at the end.
func (p *parser) peek() rune {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// finite turns NaN and infinities into errors at the operator or function
// that produced them, so the result is always a JSON number.
func (p *parser) finite(v float64, at int, what string) float64 {
	switch {
	case math.IsNaN(v):
		p.fail(at, "%s is not a real number", what)
	case math.IsInf(v, 0):
		p.fail(at, "%s overflows", what)
	}
	return v
}

func (p *parser) expr() float64 {
	v := p.term()
	for {
		switch op := p.peek(); op {
		case '+', '-':
			at := p.pos
			p.pos++
			r := p.term()
			if op == '+' {
				v = p.finite(v+r, at, "the sum")
			} else {
				v = p.finite(v-r, at, "the difference")
			}
		default:
			return v
		}
	}
}

func (p *parser) term() float64 {
	v := p.unary()
	for {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' {
			return v
		}
		at := p.pos
		p.pos++
		r := p.unary()
		switch {
		case op == '*':
			v = p.finite(v*r, at, "the product")
		case r == 0 && op == '/':
			p.fail(at, "division by zero")
		case r == 0:
			p.fail(at, "modulo by zero")
		case op == '/':
			v = p.finite(v/r, at, "the quotient")
		default:
			v = math.Mod(v, r)
		}
	}
}

func (p *parser) unary() float64 {
	if p.depth++; p.depth > maxDepth {
		p.fail(p.pos, "expression nests deeper than %d levels", maxDepth)
	}
	defer func() { p.depth-- }()
	switch p.peek() {
	case '-':
		p.pos++
		return -p.unary()
	case '+':
		p.pos++
		return p.unary()
	}
	return p.power()
}

func (p *parser) power() float64 {
	base := p.primary()
	if p.peek() != '^' {
		return base
	}
	at := p.pos
	p.pos++
	exp := p.unary()
	if base == 0 && exp < 0 {
		p.fail(at, "division by zero (0 to a negative power)")
	}
	return p.finite(math.Pow(base, exp), at, "the power")
}

func (p *parser) primary() float64 {
	c := p.peek()
	start := p.pos
	switch {
	case c == '(':
		p.pos++
		v := p.expr()
		p.expect(')', "to close the '(' at position %d", start+1)
		return v
	case c >= '0' && c <= '9' || c == '.':
		return p.number()
	case c == '_' || unicode.IsLetter(c):
		for p.pos < len(p.src) && (p.src[p.pos] == '_' || unicode.IsLetter(p.src[p.pos]) || unicode.IsDigit(p.src[p.pos])) {
			p.pos++
		}
		name := string(p.src[start:p.pos])
		if p.peek() == '(' {
			return p.call(name, start)
		}
		if v, ok := p.vars[name]; ok {
			return v
		}
		if v, ok := constants[name]; ok {
			return v
		}
		p.fail(start, "unknown identifier %q (known: %s)", name, p.known())
	case c == 0:
		p.fail(p.pos, "unexpected end of expression")
	}
	p.fail(p.pos, "unexpected %q", c)
	return 0
}

func (p *parser) number() float64 {
	start := p.pos
	digits := func() {
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
	}
	digits()
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		digits()
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		digits()
	}
	text := string(p.src[start:p.pos])
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.fail(start, "bad number %q", text)
	}
	return v
}

func (p *parser) call(name string, start int) float64 {
	f, ok := funcs[name]
	if !ok {
		hint := ""
		if name == "log" {
			hint = "; use ln for the natural logarithm or log10"
		}
		p.fail(start, "unknown function %q%s", name, hint)
	}
	p.pos++ // '('
	args := []float64{p.expr()}
	for p.peek() == ',' {
		p.pos++
		args = append(args, p.expr())
	}
	p.expect(')', "to close the call to %s at position %d", name, start+1)
	if f.arity > 0 && len(args) != f.arity {
		p.fail(start, "%s takes %d argument(s), got %d", name, f.arity, len(args))
	}
	switch x := args[0]; {
	case name == "sqrt" && x < 0:
		p.fail(start, "sqrt of a negative number (%g)", x)
	case (name == "ln" || name == "log10") && x <= 0:
		p.fail(start, "%s of a number that is not positive (%g)", name, x)
	}
	return p.finite(f.fn(args), start, name)
}

func (p *parser) expect(r rune, format string, args ...any) {
	if p.peek() != r {
		p.fail(p.pos, "expected %q "+format, append([]any{r}, args...)...)
	}
	p.pos++
}

// known lists the names an identifier may be, so a model can fix a typo.
func (p *parser) known() string {
	names := make([]string, 0, len(p.vars)+len(constants))
	for n := range p.vars {
		names = append(names, n)
	}
	for n := range constants {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
