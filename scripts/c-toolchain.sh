#!/bin/sh
# Checks every part of the C toolchain that `make plugins-c` and the C
# tests use, and says which are missing: clang, wasm-ld, wasi-libc's
# headers and libc, and the wasm32 compiler-rt builtins. Silent with exit 0 when all are there;
# otherwise one line per missing part, with its Debian package, and exit 1.
CLANG=${CLANG:-clang}
missing=0
miss() { echo "C toolchain: $1 (apt-get install $2)"; missing=1; }

if ! command -v "$CLANG" >/dev/null 2>&1; then
	miss "$CLANG not found" clang
	# Without clang the parts below cannot be asked about; name them all.
	command -v wasm-ld >/dev/null 2>&1 || miss "wasm-ld not found" lld
	echo "C toolchain: also needs wasi-libc and libclang-rt-dev-wasm32 (not checked without clang)"
	exit 1
fi
command -v wasm-ld >/dev/null 2>&1 || miss "wasm-ld not found (clang links wasm32 with it)" lld
# Ask clang itself, so that its own search paths decide.
if ! printf '#include <string.h>\n' | "$CLANG" --target=wasm32-wasi -E -x c - -o /dev/null >/dev/null 2>&1; then
	miss "wasi-libc headers not found (clang --target=wasm32-wasi cannot include <string.h>)" wasi-libc
else
	sysroot_libc=$("$CLANG" --target=wasm32-wasi -print-file-name=libc.a)
	[ -f "$sysroot_libc" ] || miss "wasi-libc's libc.a not found for wasm32-wasi" wasi-libc
fi
builtins=$("$CLANG" --target=wasm32-wasi -print-libgcc-file-name 2>/dev/null)
[ -n "$builtins" ] && [ -f "$builtins" ] || miss "compiler-rt builtins for wasm32 not found (${builtins:-clang printed no path})" libclang-rt-dev-wasm32
exit $missing
