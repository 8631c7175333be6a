// Package jsonschema stands in for github.com/invopop/jsonschema in the
// SDK's tests: a hook that takes its *Schema must be refused by name, and
// the SDK module links no dependency, not even for a test. The type's
// name as reflect prints it, *jsonschema.Schema, is all that matters.
package jsonschema

// Schema has the name of invopop's schema type.
type Schema struct{}
