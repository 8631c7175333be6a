//go:build wasip1

package guest

import "reflect"

// checkForeignHooks is a no-op in WebAssembly: see its native version.
func checkForeignHooks(reflect.Type) {}
