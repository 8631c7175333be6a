package dispatcher

import (
	"encoding/json"

	"github.com/toolhost/toolhost/idempotency"
)

// Tasks returns the MCP task state kept beside the idempotency keys (in
// the same store, so it moves to Redis with them), or nil when the
// configured store keeps none.
func (d *Dispatcher) Tasks() idempotency.Tasks {
	t, _ := d.idem.(idempotency.Tasks)
	return t
}

// Fingerprint digests a request as idempotency keys do (tool name and
// arguments in canonical form): the same request gives the same digest.
func Fingerprint(tool string, args json.RawMessage) (string, error) { return fingerprint(tool, args) }

// Replayed reports whether a failure of kind k is kept for replay under
// its idempotency key; the others free the key at once.
func Replayed(k Kind) bool { return kept(k) }
