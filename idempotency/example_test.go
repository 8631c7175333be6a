package idempotency_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolhost/toolhost/idempotency"
)

func ExampleMemory() {
	ctx := context.Background()
	store := idempotency.NewMemory(0) // outcomes replayed for DefaultTTL

	first, _ := store.Acquire(ctx, "req-1", "sha256-of-tool-and-args")
	second, _ := store.Acquire(ctx, "req-1", "sha256-of-tool-and-args")
	fmt.Println("first leads:", first.Leader(), "second leads:", second.Leader())

	first.Complete(idempotency.Outcome{Result: []byte(`{"words":3}`), Attempts: 1}, true)
	o, _ := second.Wait(ctx)
	fmt.Printf("second gets: %s\n", o.Result)

	_, err := store.Acquire(ctx, "req-1", "another-request")
	fmt.Println("same key, other request is a conflict:", errors.Is(err, idempotency.ErrConflict))
	// Output:
	// first leads: true second leads: false
	// second gets: {"words":3}
	// same key, other request is a conflict: true
}
