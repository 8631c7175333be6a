package extism

import (
	"context"
	"fmt"

	"github.com/toolhost/toolhost/abi"
)

// DefaultMaxVarBytes bounds a plugin's vars (keys and values together)
// when Config.MaxVarBytes is 0: Extism's own default, 1 MiB.
const DefaultMaxVarBytes = 1 << 20

// Config is what one plugin instance's kernel is given.
type Config struct {
	// Config is the plugin's configuration, read with config_get (the
	// operator's; nil: every key is absent).
	Config map[string]string
	// MaxVarBytes bounds the plugin's vars; 0 means DefaultMaxVarBytes.
	MaxVarBytes int
	// Keyring is what get_keyring_secret answers, by hyper-mcp's keyring
	// entry: service, then user, to the secret (the operator's; nil: no
	// entry is mapped, and every read is refused).
	Keyring map[string]map[string]string
	// Name is the plugin's file name, for the messages that tell the
	// operator which config section to change.
	Name string
}

// Kernel is one plugin instance's Extism state, kept on the Go side: the
// kernel memory (blocks the plugin allocates, addressed by offsets; 0 is
// never a block), a call's input, output and error, the last HTTP
// response's status and headers, and the vars, which outlive a call (a
// warm instance keeps them, as an Extism plugin does). A Kernel belongs to
// one instance and is used by the goroutine running it; it is not safe
// for concurrent use.
type Kernel struct {
	cfg  Config
	mem  []byte            // kernel memory; offset o is mem[o-1]
	used map[uint64]uint64 // live blocks: start offset → length
	free []block           // freed blocks, reused first fit
	// limit bounds the kernel memory together with the plugin's linear
	// memory (see Begin).
	limit uint64

	input    uint64 // the input block's offset (0: no input)
	output   []byte
	outSet   bool
	errMsg   string
	errSet   bool
	status   int32
	headers  map[string]string
	vars     map[string][]byte
	varBytes int
	failure  error // what stopped the call in a host function, if anything

	// elicits counts the call's create_elicitation calls; answers are the
	// user's answers the call resumes with (elicit.go), parsed on first use.
	elicits int
	answers map[string]abi.InputAnswer
}

type block struct{ start, size uint64 }

// keptBytes is the most kernel memory an instance keeps between calls.
const keptBytes = 1 << 20

// NewKernel returns the kernel of one new plugin instance.
func NewKernel(cfg Config) *Kernel {
	if cfg.MaxVarBytes <= 0 {
		cfg.MaxVarBytes = DefaultMaxVarBytes
	}
	return &Kernel{cfg: cfg, used: map[uint64]uint64{}, vars: map[string][]byte{}}
}

// Begin starts a call of the plugin: the kernel memory is emptied (as
// Extism resets it before every call) and holds input, the output, error
// and HTTP state are cleared, and limit bounds the kernel memory plus the
// plugin's linear memory from now on. Vars are kept.
func (k *Kernel) Begin(input []byte, limit uint64) error {
	k.mem, k.free = k.mem[:0], k.free[:0]
	if cap(k.mem) > keptBytes {
		k.mem = nil // a warm instance does not keep a big call's kernel memory
	}
	clear(k.used)
	k.output, k.outSet, k.errMsg, k.errSet = nil, false, "", false
	k.status, k.headers, k.failure = 0, nil, nil
	k.elicits, k.answers = 0, nil
	k.limit = limit
	k.input = 0
	if len(input) > 0 {
		off, err := k.alloc(uint64(len(input)), 0)
		if err != nil {
			return err
		}
		copy(k.mem[off-1:], input)
		k.input = off
	}
	return nil
}

// Output returns what the plugin set with output_set, and whether it set
// anything.
func (k *Kernel) Output() ([]byte, bool) { return k.output, k.outSet }

// Error returns what the plugin set with error_set, and whether it did.
func (k *Kernel) Error() (string, bool) { return k.errMsg, k.errSet }

// Failure returns the error with which a host function stopped the
// current call (a refused http_request, an unsupported host function, a
// kernel memory fault), or nil.
func (k *Kernel) Failure() error { return k.failure }

// Bytes returns how many bytes of kernel memory the current call holds.
func (k *Kernel) Bytes() uint64 { return uint64(len(k.mem)) }

// alloc returns the offset of a new block of n zeroed bytes; linear is
// the plugin's linear memory size, counted against the limit.
func (k *Kernel) alloc(n, linear uint64) (uint64, error) {
	for i, b := range k.free {
		if b.size >= n {
			k.free = append(k.free[:i], k.free[i+1:]...)
			clear(k.mem[b.start-1 : b.start-1+b.size])
			k.used[b.start] = n
			return b.start, nil
		}
	}
	size := max(n, 1) // a block of 0 bytes still needs an offset of its own
	// Each term is checked alone first: a length near 2^64 must not wrap.
	if k.limit > 0 && (size > k.limit || linear > k.limit || uint64(len(k.mem))+size+linear > k.limit) {
		return 0, fmt.Errorf("kernel memory: allocating %d bytes would take the plugin's memory (%d bytes of kernel memory, %d of linear memory) over its %d-byte limit",
			n, len(k.mem), linear, k.limit)
	}
	start := uint64(len(k.mem)) + 1
	k.mem = append(k.mem, make([]byte, size)...)
	k.used[start] = n
	return start, nil
}

// release frees the block at off; an offset that is no block is ignored,
// as Extism's kernel does.
func (k *Kernel) release(off uint64) {
	n, ok := k.used[off]
	if !ok {
		return
	}
	delete(k.used, off)
	k.free = append(k.free, block{off, max(n, 1)})
}

// length is the length of the block at off, 0 when off is no block.
func (k *Kernel) length(off uint64) uint64 { return k.used[off] }

// span returns the kernel memory [off, off+n), false when any of it is
// outside the kernel memory.
func (k *Kernel) span(off, n uint64) ([]byte, bool) {
	if off == 0 || off-1 > uint64(len(k.mem)) || n > uint64(len(k.mem))-(off-1) {
		return nil, false
	}
	return k.mem[off-1 : off-1+n], true
}

// blockBytes returns the bytes of the block at off, false when off is no
// block.
func (k *Kernel) blockBytes(off uint64) ([]byte, bool) {
	n, ok := k.used[off]
	if !ok {
		return nil, false
	}
	return k.mem[off-1 : off-1+n], true
}

// setVar sets (value non-nil) or removes the var key within the bound.
func (k *Kernel) setVar(key string, value []byte) error {
	old, had := k.vars[key]
	size := k.varBytes
	if had {
		size -= len(key) + len(old)
	}
	if value == nil {
		delete(k.vars, key)
		k.varBytes = size
		return nil
	}
	if size+len(key)+len(value) > k.cfg.MaxVarBytes {
		return fmt.Errorf("var_set %q: the plugin's vars would hold %d bytes, over the %d-byte limit",
			key, size+len(key)+len(value), k.cfg.MaxVarBytes)
	}
	k.vars[key] = value
	k.varBytes = size + len(key) + len(value)
	return nil
}

type kernelKey struct{}

// With returns ctx carrying k, for the host functions the plugin calls
// while running under ctx.
func With(ctx context.Context, k *Kernel) context.Context {
	return context.WithValue(ctx, kernelKey{}, k)
}

// from returns the kernel ctx carries, or nil.
func from(ctx context.Context) *Kernel {
	k, _ := ctx.Value(kernelKey{}).(*Kernel)
	return k
}
