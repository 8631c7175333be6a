//go:build !wasip1

package guest

import (
	"fmt"
	"reflect"
	"strings"
)

// checkForeignHooks refuses a type whose schema hooks take or return
// another package's schema type (invopop/jsonschema's, from before the SDK
// had its own): the SDK cannot call them, and ignoring them would publish
// a schema the tool's author did not write. It runs natively only, where a
// tool's tests call Manifest: looking methods up by name makes Go's linker
// keep every exported method of every reachable type, which in a module
// meant 20% more data segments for every fresh instance to apply.
func checkForeignHooks(t reflect.Type) {
	for _, name := range []string{"JSONSchema", "JSONSchemaExtend"} {
		m, ok := t.MethodByName(name)
		if !ok {
			continue
		}
		if name == "JSONSchema" && t.Implements(customSchemaType) || name == "JSONSchemaExtend" && t.Implements(extendSchemaType) {
			continue
		}
		var params, results []string
		for i := 1; i < m.Type.NumIn(); i++ { // In(0) is the receiver
			params = append(params, m.Type.In(i).String())
		}
		for i := range m.Type.NumOut() {
			results = append(results, m.Type.Out(i).String())
		}
		sig := strings.TrimSpace(fmt.Sprintf("%s(%s) %s", name, strings.Join(params, ", "), strings.Join(results, ", ")))
		panic(fmt.Sprintf("guest: %v has method %s; the SDK's schema hooks use *guest.JSONSchema: "+
			"JSONSchema() *guest.JSONSchema or JSONSchemaExtend(*guest.JSONSchema)", t, sig))
	}
}
