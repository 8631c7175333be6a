package breaker_test

import (
	"errors"
	"fmt"

	"github.com/toolhost/toolhost/breaker"
)

// A tool that keeps timing out: the second failure opens its breaker, and
// the next call fails at once without running.
func Example() {
	b := breaker.New(breaker.Settings{Failures: 2}, breaker.Options{
		OnChange: func(from, to breaker.State) { fmt.Println("breaker.state", from, "→", to) },
	})
	errTimeout := errors.New("timeout")
	run := func() error { return errTimeout }

	for i := 1; i <= 3; i++ {
		t, ok := b.Allow()
		if !ok {
			fmt.Printf("call %d: circuit_open (attempts 0)\n", i)
			continue
		}
		err := run()
		outcome := breaker.Success
		if errors.Is(err, errTimeout) { // the caller classifies
			outcome = breaker.Failure
		}
		b.Record(t, outcome)
		fmt.Printf("call %d: %v\n", i, err)
	}
	fmt.Println(b.State(), !b.RetryAt().IsZero())
	// Output:
	// call 1: timeout
	// breaker.state closed → open
	// call 2: timeout
	// call 3: circuit_open (attempts 0)
	// open true
}

// A Set gives each tool its own breaker, with per-tool overrides.
func ExampleSet() {
	s := breaker.NewSet(breaker.Settings{Failures: 3}, map[string]breaker.Settings{
		"flaky": {Failures: 1},
	}, breaker.SetOptions{
		OnChange: func(tool string, from, to breaker.State) { fmt.Println(tool, from, "→", to) },
	})
	for _, tool := range []string{"flaky", "steady"} {
		t, _ := s.For(tool).Allow()
		s.For(tool).Record(t, breaker.Failure)
	}
	fmt.Println(s.For("flaky").State(), s.For("steady").State())
	// Output:
	// flaky closed → open
	// open closed
}
