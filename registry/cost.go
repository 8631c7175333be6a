package registry

import (
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxSchemaVisits bounds what validating one value of the arguments may
// cost: the number of times the validator may apply a subschema to it. A
// schema that could cost more is refused at load. Nested anyOf, oneOf or
// allOf whose branches share a $ref, and a recursive $ref that more than
// one branch follows, multiply at every level: such an input schema made
// 52 bytes of arguments cost 57 s of CPU against a 100 ms tool.
const MaxSchemaVisits = 1000

// costLevels bounds how deep the estimate follows a recursive schema
// before it calls the cost unbounded; a well-formed recursive schema (a
// tree, a list) settles into a repeating pattern within a few levels.
const costLevels = 1024

// costPeriod is the longest repeating pattern the estimate recognises.
const costPeriod = 8

// costNode is one subschema and the subschemas it applies: to the same
// value (inPlace), to one property or item of it (byName, byIndex: at
// most one of these applies to a given child), or to every property or
// item (perProp, perItem).
type costNode struct {
	inPlace          []int
	extraSelf        int // in-place references back into a cycle: the validator stops there
	byName, perProp  []int
	byIndex, perItem []int
}

// MaxValidationWork bounds the subschema applications one call's
// arguments may cost, estimated before validation from the number of
// values at each depth and the schema's cost profile. A failing branch
// costs the validator microseconds (it builds an error), so this keeps
// even a validation abandoned at its deadline to about a second or two of
// CPU.
const MaxValidationWork = 1_000_000

// costProfile is a schema's worst-case subschema applications for one
// value at each depth of the arguments: levels[k] for depth k, and for
// depths past the end the largest of the repeating tail.
type costProfile struct {
	levels []int
	tail   int
}

// at returns the cost of one value at depth k.
func (c costProfile) at(k int) int {
	if k < len(c.levels) {
		return c.levels[k]
	}
	return c.tail
}

// work estimates the applications validating values costs, where
// perDepth[k] is how many values the arguments have at depth k.
func (c costProfile) work(perDepth []int) int {
	w := 0
	for k, n := range perDepth {
		w += n * c.at(k)
		if w > MaxValidationWork {
			break
		}
	}
	return w
}

// schemaCost estimates, for the worst value at every depth of the
// arguments, how many subschema applications validating it costs, and
// refuses a schema where that exceeds MaxSchemaVisits or keeps growing
// with depth. It is an upper bound: it assumes every branch is taken.
func schemaCost(tool string, root *jsonschema.Schema) (costProfile, error) {
	g := buildCostGraph(root)
	order, back := g.inPlaceOrder()
	for i, n := range back {
		g.nodes[i].extraSelf = n
	}
	cur := make([]int, len(g.nodes))
	var recent [][]int
	var prof costProfile
	for level := 0; level <= costLevels; level++ {
		next := make([]int, len(g.nodes))
		for _, i := range order { // in-place targets before their users
			n := &g.nodes[i]
			v := 0
			if level == 0 {
				v = 1 + n.extraSelf
			} else {
				v = childCost(n, cur)
			}
			for _, c := range n.inPlace {
				v = sat(v + next[c])
			}
			next[i] = v
		}
		if next[0] > MaxSchemaVisits {
			return costProfile{}, fmt.Errorf("registry: tool %q: input schema: validating one value nested %d levels deep in the arguments could apply %s subschemas to it (the limit is %d): "+
				"anyOf/oneOf/allOf branches that share a $ref, or a recursive $ref followed by several branches, multiply the work at every level; "+
				"factor the shared part out of the branches", tool, level, visits(next[0]), MaxSchemaVisits)
		}
		for i, old := range recent {
			if slices.Equal(old, next) { // it repeats from here on: bounded
				for _, v := range recent[i:] {
					prof.tail = max(prof.tail, v[0])
				}
				return prof, nil
			}
		}
		prof.levels = append(prof.levels, next[0])
		recent = append(recent, next)
		if len(recent) > costPeriod {
			recent = recent[1:]
		}
		cur = next
	}
	return costProfile{}, fmt.Errorf("registry: tool %q: input schema: the cost of validating the arguments still grows at %d levels of nesting; "+
		"a recursive $ref should apply one subschema per level", tool, costLevels)
}

func visits(n int) string {
	if n > MaxSchemaVisits {
		return fmt.Sprintf("more than %d", MaxSchemaVisits)
	}
	return fmt.Sprint(n)
}

// sat adds without passing MaxSchemaVisits+1: the estimate only needs to
// know it is over.
func sat(v int) int { return min(v, MaxSchemaVisits+1) }

// childCost is the most subschema applications a child of a value
// validated against n can get, from the levels below (prev).
func childCost(n *costNode, prev []int) int {
	pick := func(alone, every []int) int {
		v := 0
		for _, c := range alone {
			v = max(v, prev[c])
		}
		for _, c := range every {
			v = sat(v + prev[c])
		}
		return v
	}
	return max(pick(n.byName, n.perProp), pick(n.byIndex, n.perItem))
}

type costGraph struct {
	ids   map[*jsonschema.Schema]int
	nodes []costNode
	all   []*jsonschema.Schema
}

func buildCostGraph(root *jsonschema.Schema) *costGraph {
	g := &costGraph{ids: map[*jsonschema.Schema]int{}}
	g.id(root)
	for i := 0; i < len(g.all); i++ { // g.all grows as edges find schemas
		s := g.all[i]
		var n costNode
		add := func(dst *[]int, ss ...*jsonschema.Schema) {
			for _, c := range ss {
				if c != nil {
					*dst = append(*dst, g.id(c))
				}
			}
		}
		add(&n.inPlace, s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else, s.ContentSchema)
		if s.DynamicRef != nil {
			add(&n.inPlace, s.DynamicRef.Ref)
		}
		add(&n.inPlace, s.AllOf...)
		add(&n.inPlace, s.AnyOf...)
		add(&n.inPlace, s.OneOf...)
		for _, k := range sortedKeys(s.DependentSchemas) {
			add(&n.inPlace, s.DependentSchemas[k])
		}
		for _, k := range sortedKeys(s.Dependencies) {
			if c, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
				add(&n.inPlace, c)
			}
		}
		for _, k := range sortedKeys(s.Properties) {
			add(&n.byName, s.Properties[k])
		}
		for _, c := range s.PatternProperties {
			add(&n.perProp, c)
		}
		if c, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			add(&n.perProp, c)
		}
		add(&n.perProp, s.UnevaluatedProperties, s.PropertyNames)
		add(&n.byIndex, s.PrefixItems...)
		switch it := s.Items.(type) {
		case []*jsonschema.Schema:
			add(&n.byIndex, it...)
		case *jsonschema.Schema:
			add(&n.perItem, it)
		}
		if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
			add(&n.perItem, c)
		}
		add(&n.perItem, s.Items2020, s.Contains, s.UnevaluatedItems)
		g.nodes = append(g.nodes, n)
	}
	// A $dynamicRef or $recursiveRef may resolve, at validation time, to
	// any schema with a matching anchor: count them all.
	dynamic := map[string][]int{}
	var recursive []int
	for j, t := range g.all {
		if t.DynamicAnchor != "" {
			dynamic[t.DynamicAnchor] = append(dynamic[t.DynamicAnchor], j)
		}
		if t.RecursiveAnchor {
			recursive = append(recursive, j)
		}
	}
	for i, s := range g.all {
		var targets []int
		if s.DynamicRef != nil && s.DynamicRef.Anchor != "" {
			targets = append(targets, dynamic[s.DynamicRef.Anchor]...)
		}
		if s.RecursiveRef != nil {
			targets = append(targets, recursive...)
		}
		for _, j := range targets {
			if !slices.Contains(g.nodes[i].inPlace, j) {
				g.nodes[i].inPlace = append(g.nodes[i].inPlace, j)
			}
		}
	}
	return g
}

func (g *costGraph) id(s *jsonschema.Schema) int {
	if i, ok := g.ids[s]; ok {
		return i
	}
	g.ids[s] = len(g.all)
	g.all = append(g.all, s)
	return len(g.all) - 1
}

// inPlaceOrder returns the nodes with every in-place target before the
// node that applies it, and drops the in-place edges that close a cycle
// (the validator reports a reference cycle there and goes no further),
// counting them per node.
func (g *costGraph) inPlaceOrder() (order []int, back []int) {
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, len(g.nodes))
	back = make([]int, len(g.nodes))
	type frame struct{ node, next int }
	for start := range g.nodes {
		if state[start] != unseen {
			continue
		}
		stack := []frame{{start, 0}}
		state[start] = open
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			n := &g.nodes[f.node]
			if f.next == len(n.inPlace) {
				state[f.node] = done
				order = append(order, f.node)
				stack = stack[:len(stack)-1]
				continue
			}
			c := n.inPlace[f.next]
			switch state[c] {
			case open:
				back[f.node]++
				n.inPlace = slices.Delete(n.inPlace, f.next, f.next+1)
			case unseen:
				f.next++ // before the append, which may move the stack
				state[c] = open
				stack = append(stack, frame{c, 0})
			default:
				f.next++
			}
		}
	}
	return order, back
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
