package scaffold_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolhost/toolhost/internal/scaffold"
)

// A Go project named greet, whose make installs into /srv/plugins.
func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "scaffold")
	defer os.RemoveAll(dir)
	written, err := scaffold.Write(scaffold.Options{Name: "greet", Lang: "go", Dir: filepath.Join(dir, "greet"),
		Plugins: "/srv/plugins", Toolhost: "toolhost"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range written {
		fmt.Println(filepath.Base(p))
	}
	// Output:
	// Makefile
	// go.mod
	// main.go
	// main_test.go
}
