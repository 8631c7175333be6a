package guest

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// The struct tags the reflector reads (see reflect.go), keyword by
// keyword as invopop/jsonschema v0.14 read them, quirks included: a tag
// without "=" is ignored, numeric keywords split on every "=", and a
// jsonschema_description replaces a description set before it.

// keywordsFromTags applies field f's jsonschema tags to s, its property
// schema; parent is the struct's schema (oneof_required and anyof_required
// add to it).
func (s *JSONSchema) keywordsFromTags(f reflect.StructField, parent *JSONSchema, prop string) {
	s.Description = f.Tag.Get("jsonschema_description")
	tags := s.genericKeywords(splitOnUnescapedCommas(f.Tag.Get("jsonschema")), parent, prop)
	switch s.Type {
	case "integer", "number", "boolean":
		if contains(strings.Split(f.Tag.Get("json"), ",")[1:], "string") {
			s.Type = "string"
		}
	}
	switch s.Type {
	case "string":
		s.stringKeywords(tags)
	case "number", "integer":
		s.numericKeywords(tags)
	case "array":
		s.arrayKeywords(tags)
	case "boolean":
		s.booleanKeywords(tags)
	}
	for _, tag := range splitOnUnescapedCommas(f.Tag.Get("jsonschema_extras")) {
		if k, v, ok := strings.Cut(tag, "="); ok {
			s.setExtra(k, v)
		}
	}
}

// genericKeywords applies the keywords of every type and returns the other
// name=value tags, in order (tags without a value are dropped).
func (s *JSONSchema) genericKeywords(tags []string, parent *JSONSchema, prop string) []string {
	rest := make([]string, 0, len(tags))
	for _, tag := range tags {
		name, val, ok := strings.Cut(tag, "=")
		if !ok {
			continue
		}
		switch name {
		case "title":
			s.Title = val
		case "description":
			s.Description = val
		case "type":
			s.Type = val
		case "anchor":
			s.Anchor = val
		case "oneof_required":
			parent.OneOf = requireIn(parent.OneOf, val, prop)
		case "anyof_required":
			parent.AnyOf = requireIn(parent.AnyOf, val, prop)
		case "oneof_ref", "anyof_ref":
			sub := s
			if s.Items != nil {
				sub = s.Items
			}
			list := sub.alternatives(name == "anyof_ref")
			sub.Ref = ""
			for _, ref := range strings.Split(val, ";") {
				*list = append(*list, &JSONSchema{Ref: ref})
			}
		case "oneof_type", "anyof_type":
			list := s.alternatives(name == "anyof_type")
			s.Type = ""
			for _, ty := range strings.Split(val, ";") {
				*list = append(*list, &JSONSchema{Type: ty})
			}
		default:
			rest = append(rest, tag)
		}
	}
	return rest
}

// alternatives is s's oneOf list, or its anyOf list, made non-nil for
// the tag to add to.
func (s *JSONSchema) alternatives(anyOf bool) *[]*JSONSchema {
	list := &s.OneOf
	if anyOf {
		list = &s.AnyOf
	}
	if *list == nil {
		*list = make([]*JSONSchema, 0, 1)
	}
	return list
}

// requireIn adds prop to the required list of the alternative titled
// group, creating it at the end of alts when there is none.
func requireIn(alts []*JSONSchema, group, prop string) []*JSONSchema {
	var found *JSONSchema
	for _, a := range alts {
		if a.Title == group {
			found = a
		}
	}
	if found == nil {
		found = &JSONSchema{Title: group, Required: []string{}}
		alts = append(alts, found)
	}
	found.Required = append(found.Required, prop)
	return alts
}

func (s *JSONSchema) booleanKeywords(tags []string) {
	for _, tag := range tags {
		kv := strings.Split(tag, "=")
		if len(kv) != 2 || kv[0] != "default" {
			continue
		}
		switch kv[1] {
		case "true":
			s.Default = true
		case "false":
			s.Default = false
		}
	}
}

func (s *JSONSchema) stringKeywords(tags []string) {
	for _, tag := range tags {
		name, val, ok := strings.Cut(tag, "=")
		if !ok {
			continue
		}
		switch name {
		case "minLength":
			s.MinLength = parseUint(val)
		case "maxLength":
			s.MaxLength = parseUint(val)
		case "pattern":
			s.Pattern = val
		case "format":
			s.Format = val
		case "readOnly":
			s.ReadOnly, _ = strconv.ParseBool(val)
		case "writeOnly":
			s.WriteOnly, _ = strconv.ParseBool(val)
		case "default":
			s.Default = val
		case "example":
			s.Examples = append(s.Examples, val)
		case "enum":
			s.Enum = append(s.Enum, val)
		}
	}
}

func (s *JSONSchema) numericKeywords(tags []string) {
	for _, tag := range tags {
		kv := strings.Split(tag, "=")
		if len(kv) != 2 {
			continue
		}
		num, valid := jsonNumber(kv[1])
		switch kv[0] {
		case "multipleOf":
			s.MultipleOf = num
		case "minimum":
			s.Minimum = num
		case "maximum":
			s.Maximum = num
		case "exclusiveMaximum":
			s.ExclusiveMaximum = num
		case "exclusiveMinimum":
			s.ExclusiveMinimum = num
		case "default":
			if valid {
				s.Default = num
			}
		case "example":
			if valid {
				s.Examples = append(s.Examples, num)
			}
		case "enum":
			if valid {
				s.Enum = append(s.Enum, num)
			}
		}
	}
}

func (s *JSONSchema) arrayKeywords(tags []string) {
	var defaults []any
	rest := make([]string, 0, len(tags))
	for _, tag := range tags {
		kv := strings.Split(tag, "=")
		if len(kv) != 2 {
			continue
		}
		switch kv[0] {
		case "minItems":
			s.MinItems = parseUint(kv[1])
		case "maxItems":
			s.MaxItems = parseUint(kv[1])
		case "uniqueItems":
			s.UniqueItems = true
		case "default":
			defaults = append(defaults, kv[1])
		case "format":
			s.Items.Format = kv[1]
		case "pattern":
			s.Items.Pattern = kv[1]
		default:
			rest = append(rest, tag)
		}
	}
	if len(defaults) > 0 {
		s.Default = defaults
	}
	if len(rest) == 0 {
		return
	}
	switch s.Items.Type {
	case "string":
		s.Items.stringKeywords(rest)
	case "number", "integer":
		s.Items.numericKeywords(rest)
	case "boolean":
		s.Items.booleanKeywords(rest)
	}
}

func (s *JSONSchema) setExtra(key, val string) {
	if s.Extras == nil {
		s.Extras = map[string]any{}
	}
	if old, ok := s.Extras[key]; ok {
		switch old := old.(type) {
		case string:
			s.Extras[key] = []string{old, val}
		case []string:
			s.Extras[key] = append(old, val)
		case int:
			s.Extras[key], _ = strconv.Atoi(val)
		case bool:
			s.Extras[key] = val == "true" || val == "t"
		}
		return
	}
	switch {
	case key == "minimum":
		s.Extras[key], _ = strconv.Atoi(val)
	case val == "true":
		s.Extras[key] = true
	case val == "false":
		s.Extras[key] = false
	default:
		s.Extras[key] = val
	}
}

// jsonNumber returns val as a JSON number, or "" and false when it is not
// an integer or a float.
func jsonNumber(val string) (json.Number, bool) {
	if _, err := strconv.ParseInt(val, 10, 64); err == nil {
		return json.Number(val), true
	}
	if _, err := strconv.ParseFloat(val, 64); err == nil {
		return json.Number(val), true
	}
	return "", false
}

func parseUint(val string) *uint64 {
	n, err := strconv.ParseUint(val, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// splitOnUnescapedCommas splits a tag at commas not preceded by a
// backslash (which is dropped), so patterns may hold commas.
func splitOnUnescapedCommas(tag string) []string {
	parts := strings.Split(tag, ",")
	out := []string{parts[0]}
	for _, next := range parts[1:] {
		last := out[len(out)-1]
		if last != "" && last[len(last)-1] == '\\' {
			out[len(out)-1] = last[:len(last)-1] + "," + next
			continue
		}
		out = append(out, next)
	}
	return out
}
