package main

import (
	"context"
	"net/url"

	"github.com/toolhost/toolhost/abi/guest"
)

// web.delete is destructive and irreversible, so it asks the user first
// (an MCP elicitation through toolhost's input requests): the DELETE goes
// out only in the call that carries the user's confirmation.
func init() {
	guest.RegisterContext("web.delete", guest.Options{
		Title: "Delete a web resource",
		Description: "Sends an HTTP DELETE to an https URL, after the user confirms it (the server asks " +
			"them through the MCP client). Returns whether it was sent and the HTTP status. Needs an egress " +
			"grant for the URL's host.",
		TimeoutMS: 30000,
	}, remove)
}

type deleteArgs struct {
	URL string `json:"url" jsonschema:"description=the https URL of the resource to delete,minLength=9,maxLength=4096"`
}

type deleted struct {
	Deleted bool   `json:"deleted" jsonschema:"description=true when the DELETE was sent and answered 2xx"`
	Status  int    `json:"status,omitempty" jsonschema:"description=the HTTP status, when the DELETE was sent"`
	Note    string `json:"note,omitempty" jsonschema:"description=why nothing was deleted"`
}

func remove(ctx context.Context, a deleteArgs) (deleted, error) {
	u, err := url.Parse(a.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return deleted{}, guest.Schemaf("url %q is not an absolute https URL", a.URL)
	}
	ok, err := guest.Confirm(ctx, "Send an HTTP DELETE to "+u.String()+"? This cannot be undone.")
	if err != nil {
		return deleted{}, err // the first call: ask
	}
	if !ok {
		return deleted{Note: "the user did not confirm; nothing was sent"}, nil
	}
	resp, err := client.Do(&guest.Request{Method: "DELETE", URL: u.String()})
	if err != nil {
		return deleted{}, err
	}
	return deleted{Deleted: resp.StatusCode/100 == 2, Status: resp.StatusCode}, nil
}
