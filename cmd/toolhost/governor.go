package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/governor"
)

func newGovernorCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "governor",
		Short: "Ask a running server's rate governor: status, acquire, report",
		Long: `governor speaks to the JSON-RPC 2.0 endpoint /rpc beside /mcp, for agents that
call an upstream API themselves and must share its quota with toolhost's tools:
acquire before each call, report each 429. See docs/GOVERNOR.md.`,
	}
	cmd.AddCommand(newGovernorStatusCmd(), newGovernorAcquireCmd(), newGovernorReportCmd())
	return cmd
}

func newGovernorStatusCmd() *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print every quota's state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var res governor.StatusResult
			if err := rpcCall(cmd, server, governor.MethodStatus, nil, &res); err != nil {
				return err
			}
			if asJSON {
				b, _ := json.MarshalIndent(res, "", "  ")
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n", safeJSON(b))
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "QUOTA\tMODE\tUSED/WINDOW\tAVAILABLE\tWAITING\tLIMIT\tBLOCKED UNTIL\tEPOCH\tAGENTS")
			for _, s := range res.Quotas {
				blocked := "-"
				if s.BlockedUntil != nil {
					blocked = s.BlockedUntil.Format(time.RFC3339Nano)
				}
				fmt.Fprintf(w, "%s\t%s\t%d/%d in %v\t%.1f\t%d\t%d per %v, burst %d\t%s\t%d\t%s\n", safeLine(s.Quota), safeLine(string(s.Mode)), s.Used, s.Capacity,
					time.Duration(s.WindowMS)*time.Millisecond, s.Available, s.Waiting, s.Limit.Capacity,
					time.Duration(s.Limit.IntervalMS)*time.Millisecond, s.Limit.Burst, blocked, s.Epoch, safeLine(topAgents(s.Agents, 3)))
			}
			return w.Flush()
		},
	}
	addServerFlag(cmd, &server)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the governor.status result as JSON")
	return cmd
}

func newGovernorAcquireCmd() *cobra.Command {
	var server string
	var p governor.AcquireParams
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "acquire --quota NAME [--priority CLASS] [--cost N] [--wait DURATION]",
		Short: "Draw tokens from a quota, waiting in line; exit 0 when granted",
		Long: `acquire draws --cost tokens from --quota at --priority, waiting in line for at
most --wait. Granted: the grant as JSON on stdout, exit 0. Refused (the quota
could not grant in time): the envelope {"kind":"rate_limited",...,
"retry_after_ms"} on stderr, exit 1.`,
		Example: `  toolhost governor acquire --quota github --priority interactive --wait 5s && gh api ...`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("wait") {
				ms := wait.Milliseconds()
				p.WaitMS = &ms
			}
			return rpcPrint[governor.AcquireResult](cmd, server, governor.MethodAcquire, p)
		},
	}
	addServerFlag(cmd, &server)
	cmd.Flags().StringVar(&p.Quota, "quota", "", "the quota to draw from (required)")
	cmd.Flags().StringVar(&p.Priority, "priority", "normal", "critical, interactive, normal or background")
	cmd.Flags().Int64Var(&p.Cost, "cost", 1, "tokens to draw")
	cmd.Flags().StringVar(&p.Agent, "agent", "", "who draws (echoed in the result)")
	cmd.Flags().DurationVar(&wait, "wait", 0, "longest wait in line (default: the server's max_wait; 0s: now or never)")
	_ = cmd.MarkFlagRequired("quota")
	return cmd
}

func newGovernorReportCmd() *cobra.Command {
	var server string
	var p governor.ReportParams
	var retryAfter time.Duration
	cmd := &cobra.Command{
		Use:   "report --quota NAME --status CODE [--retry-after DURATION]",
		Short: "Tell the governor what an upstream answered (a 429 blocks the quota)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p.RetryAfterMS = retryAfter.Milliseconds()
			return rpcPrint[governor.State](cmd, server, governor.MethodReport, p)
		},
	}
	addServerFlag(cmd, &server)
	cmd.Flags().StringVar(&p.Quota, "quota", "", "the quota the answer concerns (required)")
	cmd.Flags().IntVar(&p.Status, "status", 0, "the HTTP status the upstream answered (required)")
	cmd.Flags().DurationVar(&retryAfter, "retry-after", 0, "the upstream's Retry-After")
	_ = cmd.MarkFlagRequired("quota")
	_ = cmd.MarkFlagRequired("status")
	return cmd
}

// rpcCall makes one JSON-RPC call to the server's /rpc. A JSON-RPC error is
// written as an envelope on stderr and becomes exit code 1.
// rpcPrint calls method and prints its result, decoded as R, as one JSON
// line on stdout.
func rpcPrint[R any](cmd *cobra.Command, server, method string, params any) error {
	var res R
	if err := rpcCall(cmd, server, method, params, &res); err != nil {
		return err
	}
	b, _ := json.Marshal(res)
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", safeJSON(b))
	return nil
}

func rpcCall(cmd *cobra.Command, server, method string, params, result any) error {
	fail := func(de *dispatcher.DispatchError) error {
		writeEnvelope(cmd.ErrOrStderr(), de)
		return &exitError{code: 1}
	}
	u, err := rpcURL(server)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient().Do(req)
	if err != nil {
		return fail(clientFault(fmt.Errorf("cannot reach toolhost at %s (is `toolhost serve` running?): %w", u, err)))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != http.StatusOK {
		return fail(clientFault(fmt.Errorf("%s: %s: %s", u, resp.Status, strings.TrimSpace(string(raw)))))
	}
	var out struct {
		Result json.RawMessage    `json:"result"`
		Error  *governor.RPCError `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fail(clientFault(fmt.Errorf("%s: not a JSON-RPC response: %v", u, err)))
	}
	if e := out.Error; e != nil {
		// Without data, the kind follows from the code, as the envelope's
		// code follows from its kind.
		kind := dispatcher.KindInternal
		switch e.Code {
		case dispatcher.CodeInvalidParams:
			kind = dispatcher.KindSchema
		case dispatcher.CodeMethodNotFound:
			kind = dispatcher.KindNotFound
		}
		de := &dispatcher.DispatchError{Kind: kind, Message: e.Message, JSONRPCCode: e.Code}
		if e.Data != nil {
			de.Kind, de.Message, de.RetryAfterMS = dispatcher.Kind(e.Data.Kind), e.Data.Message, e.Data.RetryAfterMS
		}
		return fail(de)
	}
	return json.Unmarshal(out.Result, result)
}

// rpcURL turns the MCP endpoint (…/mcp) into the JSON-RPC endpoint beside
// it (…/rpc).
func rpcURL(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", fmt.Errorf("--server %q: %w", server, err)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp") + "/rpc"
	u.RawQuery = ""
	return u.String(), nil
}

// topAgents is the table's summary of a quota's agents: the n that used
// the most (names quoted, so that spaces and an anonymous "" read
// plainly), then how many more; --json has them all.
func topAgents(agents map[string]governor.AgentUsage, n int) string {
	if len(agents) == 0 {
		return "-"
	}
	names := slices.Collect(maps.Keys(agents))
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(agents[b].Used, agents[a].Used), strings.Compare(a, b))
	})
	var parts []string
	for _, name := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%q=%d", name, agents[name].Used))
	}
	if len(names) > n {
		parts = append(parts, fmt.Sprintf("+%d more", len(names)-n))
	}
	return strings.Join(parts, " ")
}
