package config

import "time"

// TaskOfferAfter is [dispatch] task_offer_after: a tool whose timeout is
// longer is offered to MCP clients as a task (transport.TaskOptions); 0
// (not set, or a nil Config) means the transport's default.
func (c *Config) TaskOfferAfter() time.Duration {
	if c == nil {
		return 0
	}
	return c.Dispatch.TaskOfferAfter
}
