package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

func newEventsCmd() *cobra.Command {
	var server string
	var types []string
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Follow a running server's event stream",
		Long: `events prints the server's structured events live, one JSON object per line:
dispatch.attempt, dispatch.retry, dispatch.result, breaker.state, and more as
features add them. It follows GET /events (Server-Sent Events) beside /mcp
until interrupted.`,
		Example: `  toolhost events
  toolhost events --type dispatch.retry --type breaker.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			u, err := eventsURL(server, types)
			if err != nil {
				return err
			}
			req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, u, nil)
			if err != nil {
				return err
			}
			resp, err := httpClient().Do(req)
			if err != nil {
				return fmt.Errorf("cannot reach toolhost at %s (is `toolhost serve` running?): %w", u, err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				// The body says which limit refused the stream (429, 400).
				body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
				return fmt.Errorf("%s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
			}
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			dropped := false
			for sc.Scan() {
				line := sc.Text()
				switch {
				case line == "event: dropped":
					dropped = true
				case strings.HasPrefix(line, "data: ") && dropped:
					// The events stay parseable on stdout; the gap is news for the human.
					fmt.Fprintf(cmd.ErrOrStderr(), "toolhost: this stream fell behind; %s events dropped so far\n", safeLine(strings.TrimPrefix(line, "data: ")))
					dropped = false
				case strings.HasPrefix(line, "data: "):
					fmt.Fprintf(cmd.OutOrStdout(), "%s\n", safeJSON([]byte(strings.TrimPrefix(line, "data: "))))
				}
			}
			if cmd.Context().Err() != nil {
				return nil
			}
			return sc.Err()
		},
	}
	addServerFlag(cmd, &server)
	cmd.Flags().StringArrayVar(&types, "type", nil, "only events whose type starts with this (repeatable)")
	return cmd
}

// eventsURL turns the MCP endpoint (…/mcp) into the events endpoint beside
// it (…/events).
func eventsURL(server string, types []string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", fmt.Errorf("--server %q: %w", server, err)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp") + "/events"
	q := url.Values{}
	for _, t := range types {
		q.Add("type", t)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
