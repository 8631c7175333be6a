package host_test

import (
	"context"
	"fmt"

	"github.com/toolhost/toolhost/host"
)

// ExampleModule_Call loads echo.wat, a tool module written by hand in
// WebAssembly text (testdata/wat/echo.wat, assembled by TestMain), and
// calls its one tool.
func ExampleModule_Call() {
	ctx := context.Background()
	rt, err := host.New(ctx, host.Config{CacheDir: "off"})
	if err != nil {
		panic(err)
	}
	defer rt.Close(ctx)

	mod, err := rt.LoadFile(ctx, watPaths["echo"])
	if err != nil {
		panic(err) // a *host.LoadError saying what is wrong with the module
	}
	for _, t := range mod.Tools {
		fmt.Printf("%s: %s (timeout %d ms, idempotent %v)\n", t.Name, t.Description, t.TimeoutMS, t.Idempotent)
	}

	res, err := mod.Call(ctx, "wat.echo", []byte(`{"text":"hello"}`), host.Limits{})
	if err != nil {
		panic(err) // *abi.Error from the tool, *host.Fault, or the context's end
	}
	fmt.Println(string(res))
	// Output:
	// wat.echo: Returns its arguments as the result. (timeout 1000 ms, idempotent true)
	// {"text":"hello"}
}
