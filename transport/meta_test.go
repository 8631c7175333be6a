package transport

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
)

func TestParseOptions(t *testing.T) {
	intp := func(n int) *int { return &n }
	key255 := strings.Repeat("k", MaxIdempotencyKeyLen)
	tests := []struct {
		name    string
		meta    map[string]any
		want    dispatcher.Options
		wantErr string // the key the error must name; "" means no error
	}{
		{"nil meta", nil, dispatcher.Options{}, ""},
		{"empty meta", map[string]any{}, dispatcher.Options{}, ""},
		{"unrelated keys ignored", map[string]any{"progressToken": 1.0, "toolhost/other": "x"}, dispatcher.Options{}, ""},
		{"all four", map[string]any{MetaIdempotencyKey: "k1", MetaTimeoutMS: 2500.0, MetaBudget: 2.0, MetaPriority: "high"},
			dispatcher.Options{IdempotencyKey: "k1", Timeout: 2500 * time.Millisecond, Budget: intp(2), Priority: "high"}, ""},

		{"key", map[string]any{MetaIdempotencyKey: "abc"}, dispatcher.Options{IdempotencyKey: "abc"}, ""},
		{"key 255 bytes", map[string]any{MetaIdempotencyKey: key255}, dispatcher.Options{IdempotencyKey: key255}, ""},
		{"key 256 bytes", map[string]any{MetaIdempotencyKey: key255 + "k"}, dispatcher.Options{}, MetaIdempotencyKey},
		{"key 255 bytes of multibyte runes", map[string]any{MetaIdempotencyKey: strings.Repeat("é", 128)}, dispatcher.Options{}, MetaIdempotencyKey},
		{"key empty", map[string]any{MetaIdempotencyKey: ""}, dispatcher.Options{}, MetaIdempotencyKey},
		{"key number", map[string]any{MetaIdempotencyKey: 5.0}, dispatcher.Options{}, MetaIdempotencyKey},
		{"key null", map[string]any{MetaIdempotencyKey: nil}, dispatcher.Options{}, MetaIdempotencyKey},
		{"key object", map[string]any{MetaIdempotencyKey: map[string]any{}}, dispatcher.Options{}, MetaIdempotencyKey},

		{"timeout 1", map[string]any{MetaTimeoutMS: 1.0}, dispatcher.Options{Timeout: time.Millisecond}, ""},
		{"timeout int", map[string]any{MetaTimeoutMS: 250}, dispatcher.Options{Timeout: 250 * time.Millisecond}, ""},
		{"timeout int64", map[string]any{MetaTimeoutMS: int64(250)}, dispatcher.Options{Timeout: 250 * time.Millisecond}, ""},
		{"timeout largest", map[string]any{MetaTimeoutMS: float64(math.MaxInt64 / int64(time.Millisecond))},
			dispatcher.Options{Timeout: time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond}, ""},
		{"timeout 0", map[string]any{MetaTimeoutMS: 0.0}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout -1", map[string]any{MetaTimeoutMS: -1.0}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout 1.5", map[string]any{MetaTimeoutMS: 1.5}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout overflows Duration", map[string]any{MetaTimeoutMS: float64(math.MaxInt64/int64(time.Millisecond) + 1)}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout int64 overflows Duration", map[string]any{MetaTimeoutMS: int64(math.MaxInt64)}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout huge", map[string]any{MetaTimeoutMS: 1e300}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout +Inf", map[string]any{MetaTimeoutMS: math.Inf(1)}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout NaN", map[string]any{MetaTimeoutMS: math.NaN()}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout string", map[string]any{MetaTimeoutMS: "100"}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout bool", map[string]any{MetaTimeoutMS: true}, dispatcher.Options{}, MetaTimeoutMS},
		{"timeout null", map[string]any{MetaTimeoutMS: nil}, dispatcher.Options{}, MetaTimeoutMS},

		{"budget 0", map[string]any{MetaBudget: 0.0}, dispatcher.Options{Budget: intp(0)}, ""},
		{"budget 2.0", map[string]any{MetaBudget: 2.0}, dispatcher.Options{Budget: intp(2)}, ""},
		{"budget int", map[string]any{MetaBudget: 3}, dispatcher.Options{Budget: intp(3)}, ""},
		{"budget max int32", map[string]any{MetaBudget: float64(math.MaxInt32)}, dispatcher.Options{Budget: intp(math.MaxInt32)}, ""},
		{"budget -1", map[string]any{MetaBudget: -1.0}, dispatcher.Options{}, MetaBudget},
		{"budget 1.5", map[string]any{MetaBudget: 1.5}, dispatcher.Options{}, MetaBudget},
		{"budget beyond int32", map[string]any{MetaBudget: float64(math.MaxInt32) + 1}, dispatcher.Options{}, MetaBudget},
		{"budget string", map[string]any{MetaBudget: "2"}, dispatcher.Options{}, MetaBudget},
		{"budget null", map[string]any{MetaBudget: nil}, dispatcher.Options{}, MetaBudget},

		{"priority", map[string]any{MetaPriority: "batch"}, dispatcher.Options{Priority: "batch"}, ""},
		{"priority empty string", map[string]any{MetaPriority: ""}, dispatcher.Options{}, ""},
		{"priority number", map[string]any{MetaPriority: 1.0}, dispatcher.Options{}, MetaPriority},
		{"priority bool", map[string]any{MetaPriority: false}, dispatcher.Options{}, MetaPriority},
		{"priority null", map[string]any{MetaPriority: nil}, dispatcher.Options{}, MetaPriority},
		{"priority array", map[string]any{MetaPriority: []any{"high"}}, dispatcher.Options{}, MetaPriority},

		{"one bad key spoils the rest", map[string]any{MetaIdempotencyKey: "k", MetaBudget: -3.0}, dispatcher.Options{}, MetaBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseOptions(tt.meta)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("parseOptions accepted %v as %+v", tt.meta, got)
				}
				if !strings.Contains(err.Error(), `"`+tt.wantErr+`"`) {
					t.Errorf("error %q does not name %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseOptions: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseOptions = %+v, want %+v", got, tt.want)
			}
		})
	}
}
