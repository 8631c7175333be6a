package plan

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/toolhost/toolhost/dispatcher"
)

// Rules returns the deterministic rule planner, for tests and demos over
// the example tools (text, hash, math). For a goal text G it plans, with
// ids from Input.NextID:
//
//   - on the first call, four steps: text.count of G; text.slug of G;
//     hash.sha256 of that slug; math.eval of words per line from the count;
//   - after not_found or circuit_open (error X: a tool is missing or
//     cooling down), three steps that route around hashing: text.count of
//     G (reused when it already ran), text.case of G to kebab-case, and
//     words per line;
//   - after schema or invalid_plan (error Y: the plan itself is wrong),
//     two steps that give up gracefully: text.count of G and G in title
//     case;
//   - after any other error, nothing (the session ends with no_plan).
//
// Its output depends only on the goal, the last error's kind and NextID.
func Rules() Planner {
	return PlannerFunc(func(_ context.Context, in Input) ([]Step, error) {
		n := max(in.NextID, 1)
		g := in.Goal
		if in.LastError == nil {
			return []Step{
				rulesStep(n, "text.count", "word and line counts of the goal", obj{"text": g}),
				rulesStep(n+1, "text.slug", "a URL-safe name for the goal", obj{"text": g}),
				rulesStep(n+2, "hash.sha256", "a stable digest of that name", obj{"text": refTo(n+1, "/slug")}),
				wordsPerLine(n+3, n),
			}, nil
		}
		switch in.LastError.Kind {
		case ErrorKind(dispatcher.KindNotFound), ErrorKind(dispatcher.KindCircuitOpen):
			return []Step{
				rulesStep(n, "text.count", "word and line counts of the goal", obj{"text": g}),
				rulesStep(n+1, "text.case", "a readable name for the goal, in place of the digest", obj{"text": g, "to": "kebab"}),
				wordsPerLine(n+2, n),
			}, nil
		case ErrorKind(dispatcher.KindSchema), KindInvalidPlan:
			return []Step{
				rulesStep(n, "text.count", "word and line counts of the goal", obj{"text": g}),
				rulesStep(n+1, "text.case", "the goal restated, since the full analysis failed", obj{"text": g, "to": "title"}),
			}, nil
		}
		return nil, nil
	})
}

type obj = map[string]any

func refTo(step int, ptr string) obj {
	return obj{refKey: "/steps/" + strconv.Itoa(step) + "/result" + ptr}
}

func wordsPerLine(id, count int) Step {
	return rulesStep(id, "math.eval", "average words per line",
		obj{"expr": "words / lines", "vars": obj{"words": refTo(count, "/words"), "lines": refTo(count, "/lines")}})
}

func rulesStep(id int, tool, expected string, args obj) Step {
	b, _ := json.Marshal(args) // maps of strings: cannot fail
	return Step{ID: id, ToolName: tool, Args: b, ExpectedOutcome: expected}
}
