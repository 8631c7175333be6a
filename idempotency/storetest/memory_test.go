package storetest_test

import (
	"testing"
	"time"

	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/idempotency/storetest"
)

// The in-memory store keeps the contract; its "replicas" are one store.
func TestMemoryContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, n int) []idempotency.Store {
		m := idempotency.NewMemory(0)
		out := make([]idempotency.Store, n)
		for i := range out {
			out[i] = m
		}
		return out
	})
}

// The in-memory store keeps the task contract.
func TestMemoryTasksContract(t *testing.T) {
	storetest.RunTasks(t, func(t *testing.T, n int) []idempotency.Tasks {
		m := idempotency.NewMemory(0)
		out := make([]idempotency.Tasks, n)
		for i := range out {
			out[i] = m
		}
		return out
	})
}

// The in-memory store keeps the per-caller bounds' contract.
func TestMemoryLimitsContract(t *testing.T) {
	storetest.RunLimits(t, func(t *testing.T, n int, limits idempotency.Limits, ttl time.Duration) []idempotency.Store {
		m := idempotency.NewMemoryWith(idempotency.MemoryOptions{TTL: ttl, Limits: limits})
		out := make([]idempotency.Store, n)
		for i := range out {
			out[i] = m
		}
		return out
	})
}

// The in-memory store keeps the per-caller bounds' contract on tasks.
func TestMemoryTaskLimitsContract(t *testing.T) {
	storetest.RunTaskLimits(t, func(t *testing.T, n int, limits idempotency.Limits) []idempotency.Tasks {
		m := idempotency.NewMemoryWith(idempotency.MemoryOptions{Limits: limits})
		out := make([]idempotency.Tasks, n)
		for i := range out {
			out[i] = m
		}
		return out
	})
}

// A Fallback of two in-memory stores keeps the task contract, inputs
// included: every call reaches the store that holds the task.
func TestFallbackTasksContract(t *testing.T) {
	storetest.RunTasks(t, func(t *testing.T, n int) []idempotency.Tasks {
		f := &idempotency.Fallback{Primary: idempotency.NewMemory(0), Local: idempotency.NewMemory(0)}
		out := make([]idempotency.Tasks, n)
		for i := range out {
			out[i] = f
		}
		return out
	})
}
