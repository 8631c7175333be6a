package wasmcheck

import (
	"fmt"
	"slices"
)

// CustomSection returns the payload of the module's custom section called
// name, or false when it has none. It reads only the section headers (and
// the names of custom sections), so it costs nothing next to a compile; a
// module that declares one section named name twice is an error (a
// producer appended without replacing), as is a header that runs past the
// end. Bytes that are not a WebAssembly module have no section.
func CustomSection(wasm []byte, name string) ([]byte, bool, error) {
	secs, err := customSections(wasm, name)
	if err != nil || len(secs) == 0 {
		return nil, false, err
	}
	if len(secs) > 1 {
		return nil, false, fmt.Errorf("%w: %d custom sections named %q; a module may have one", errMalformed, len(secs), name)
	}
	return secs[0].payload, true, nil
}

// WithoutCustomSection returns wasm without its custom sections called
// name (wasm itself when it has none).
func WithoutCustomSection(wasm []byte, name string) ([]byte, error) {
	secs, err := customSections(wasm, name)
	if err != nil || len(secs) == 0 {
		return wasm, err
	}
	out := make([]byte, 0, len(wasm))
	at := 0
	for _, s := range secs {
		out = append(out, wasm[at:s.head]...)
		at = s.end
	}
	return append(out, wasm[at:]...), nil
}

// WithCustomSection returns wasm with its custom sections called name
// replaced by one holding payload, appended at the end (where a custom
// section may always go). A module's meaning does not change: custom
// sections are not executed.
func WithCustomSection(wasm []byte, name string, payload []byte) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, fmt.Errorf("%w: no WebAssembly header", errMalformed)
	}
	out, err := WithoutCustomSection(wasm, name)
	if err != nil {
		return nil, err
	}
	body := leb(nil, uint32(len(name)))
	body = append(body, name...)
	body = append(body, payload...)
	out = slices.Clip(out)
	out = append(out, 0)
	out = leb(out, uint32(len(body)))
	return append(out, body...), nil
}

// customSection is one custom section: where its header starts, where it
// ends, and its payload after the name.
type customSection struct {
	head, end int
	payload   []byte
}

// customSections finds the custom sections called name.
func customSections(wasm []byte, name string) ([]customSection, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, nil
	}
	var out []customSection
	top := &wreader{b: wasm, off: 8}
	for top.off < len(top.b) {
		head := top.off
		id, sec, err := top.section()
		if err != nil {
			return nil, err
		}
		if id != 0 {
			continue
		}
		n, err := sec.str()
		if err != nil {
			return nil, fmt.Errorf("%w: custom section: %v", errMalformed, err)
		}
		if n == name {
			out = append(out, customSection{head: head, end: top.off, payload: sec.b[sec.off:]})
		}
	}
	return out, nil
}
