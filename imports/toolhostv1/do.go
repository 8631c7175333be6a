package toolhostv1

import (
	"context"
	"encoding/json"

	"github.com/toolhost/toolhost/abi"
)

// Do performs one egress request for the call ctx carries (WithCall),
// exactly as http_request does for a toolhost_v1 guest: the module's
// grant, the SSRF checks on every hop, the governor's draw, the header
// injection and the size limits all apply, and a refusal is recorded for
// Blame. It is for other host modules whose guests reach the network
// (imports/extism's http_request). Without a call in ctx, or while the
// module is loading, every request is denied.
func Do(ctx context.Context, req abi.HTTPRequest) (*abi.HTTPResponse, *abi.EgressError) {
	call := callFrom(ctx)
	if call == nil {
		return nil, &abi.EgressError{Kind: abi.EgressDenied, Grant: "module", Message: "egress is available only during a tool call"}
	}
	if call.loading {
		eerr := &abi.EgressError{Kind: abi.EgressDenied, Grant: "module",
			Message: "egress is not available while the module is being loaded, only during a tool call"}
		call.noteRefusal(eerr)
		return nil, eerr
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, invalid("encoding the request: %v", err)
	}
	resp, eerr := call.traced(ctx, raw)
	if eerr != nil {
		call.noteRefusal(eerr)
	}
	return resp, eerr
}

// noteRefusal keeps e as the call's first refusal when the host, not the
// network, turned the request down.
func (c *Call) noteRefusal(e *abi.EgressError) {
	if c.refused == nil && refusal(e) {
		c.refused = e
	}
}
