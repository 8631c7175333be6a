package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// chromium is Debian's chromium, which .ci/run installs.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found: CI must run the console's browser test (.ci/run installs chromium)")
	}
	t.Skip("chromium not found: install it (apt-get install chromium) to run the console in a real browser")
	return ""
}

// TestConsoleInBrowser loads /ui in headless chromium against a live
// server: the page refuses to show anything without a token and says so
// for a wrong one, shows the tools once signed in, and shows a call made
// meanwhile as it finishes and a breaker that opens, with no script error.
func TestConsoleInBrowser(t *testing.T) {
	exe := chromium(t)
	plugins := testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), testwasm.WAT(t, "host/testdata/wat/guesterror.wat"))
	conf := filepath.Join(t.TempDir(), "toolhost.toml")
	if err := os.WriteFile(conf, []byte("[breaker]\nfailures = 1\ncooldown = \"10m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, plugins, "--token-file", tokenFile(t), "--config", conf)
	base := strings.TrimSuffix(srv.url, "/mcp")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var problems []string
	listen := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, fmt.Sprintf("exception: %s %+v", e.ExceptionDetails.Text, e.ExceptionDetails.Exception))
		case *runtime.EventConsoleAPICalled:
			if e.Type == "error" {
				problems = append(problems, fmt.Sprintf("console.error: %v", e.Args))
			}
		}
	})
	if listen != nil {
		t.Fatalf("starting chromium: %v", listen)
	}

	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Minute))
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("the text of %s: %v", sel, err)
		}
		return s
	}

	// Without a token: the sign-in form and no views; a wrong token is
	// refused in the page.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/ui"), chromedp.WaitVisible(chromedp.ID("signin"))); err != nil {
		t.Fatalf("loading /ui: %v", err)
	}
	if noViews, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("view-tools") === null`)); err != nil || !noViews {
		t.Fatalf("without a token the views are shown (%v)", err)
	}
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("token"), "wrong-token-0000000000000000"),
		chromedp.Click(chromedp.ID("signin-button")),
		poll(`document.getElementById("signin-error").textContent.includes("refused")`),
	)
	if err != nil {
		t.Fatalf("a wrong token: %v", err)
	}
	if refusal := text("#signin-error"); !strings.Contains(refusal, "not known") {
		t.Errorf("a wrong token's refusal: %q", refusal)
	}

	// Signed in: the tools, and the live stream following.
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("token"), aliceToken),
		chromedp.Click(chromedp.ID("signin-button")),
		chromedp.WaitVisible(chromedp.ID("view-tools")),
		poll(`document.getElementById("calls-live").textContent === "live"`),
	)
	if err != nil {
		t.Fatalf("signing in: %v", err)
	}
	if who := text("#who"); who != "signed in as alice" {
		t.Errorf("the header says %q, want signed in as alice", who)
	}
	if tools := text("#view-tools"); !strings.Contains(tools, "wat.echo") || !strings.Contains(tools, "serving") {
		t.Errorf("the tools view lacks wat.echo, serving:\n%s", tools)
	}
	if href, err := chromedp.Run(ctx, chromedp.Location()); err != nil || strings.Contains(href, aliceToken) {
		t.Errorf("the page's URL %q holds the token (%v)", href, err)
	}

	// A call made elsewhere appears in the calls view as it finishes.
	if out, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + aliceToken}, "call", "wat.echo", `{"text":"hi"}`); code != 0 {
		t.Fatalf("call: exit %d %s %s", code, out, errOut)
	}
	err = chromedp.Do(ctx, poll(`Array.from(document.querySelectorAll("#calls tbody tr")).some(r => r.textContent.includes("wat.echo") && r.textContent.includes("alice"))`))
	if err != nil {
		t.Fatalf("the call did not appear live: %v", err)
	}
	if row := text("#calls tbody tr"); !strings.Contains(row, "ok") {
		t.Errorf("the live call's row %q, want outcome ok", row)
	}

	// A failing tool's breaker opens (one failure, by the config), and the
	// breakers view shows it open at its next refresh.
	srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + aliceToken}, "call", "wat.guesterror", `{}`)
	err = chromedp.Do(ctx, poll(`Array.from(document.querySelectorAll("#view-breakers tbody tr")).some(r => r.textContent.includes("wat.guesterror") && r.textContent.includes("open"))`))
	if err != nil {
		t.Fatalf("the open breaker did not appear: %v\n%s", err, text("#view-breakers"))
	}
	// The chart, refreshed with the other views, counts alice's two calls
	// in the last minute and draws them.
	err = chromedp.Do(ctx, poll(`(() => { const c = document.querySelectorAll("#view-chart .chart-summary tbody td");
		return c.length > 1 && c[1].textContent === "2" && document.querySelector("#view-chart svg polyline.rate") !== null; })()`))
	if err != nil {
		t.Fatalf("the chart did not count the calls: %v\n%s", err, text("#view-chart"))
	}
	if dir := os.Getenv("TOOLHOST_CONSOLE_SCREENSHOTS"); dir != "" {
		// docs/console.png is made so:
		// TOOLHOST_CONSOLE_SCREENSHOTS=docs go test ./cmd/toolhost -run TestConsoleInBrowser
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(filepath.Join(testwasm.Root(t), dir, "console.png"), png, 0o644)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("in the page: %s", p)
	}
}
