package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/server"
)

// Build a server from the flags' defaults and a config file, run it on a
// free port, and stop it.
func ExampleBuild() {
	plugins, err := os.MkdirTemp("", "plugins")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(plugins)
	s := server.Default() // what `toolhost serve` runs with when given no flags
	s.Plugins, s.Addr, s.CacheDir, s.Watch = plugins, "127.0.0.1:0", "off", false
	s.File, err = config.Parse("toolhost.toml", []byte("[dispatch]\nconcurrency = 4\nmax_retry_after = \"2s\"\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	srv, err := server.Build(ctx, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()

	resp, err := http.Get("http://" + srv.Addr().String() + "/healthz")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(string(body))

	stop() // as SIGINT does: drain, then Run returns
	fmt.Println(<-done)
	// Output:
	// ok
	// <nil>
}
