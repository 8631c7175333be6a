#!/bin/sh
# Finds a Rust toolchain that can build tools-src-rust offline: a cargo and
# rustc pair (from one directory) whose rustc has the wasm32-wasi or
# wasm32-wasip1 standard library, and serde_json in Debian's crate registry
# (/usr/share/cargo/registry, read through tools-src-rust/.cargo/config.toml).
# Debian's /usr/bin first (rustc 1.63, target wasm32-wasi: what CI installs),
# then whatever is on PATH (rustup's, target wasm32-wasip1 from Rust 1.78).
# On success prints shell assignments (CARGO=… RUSTC=… RUSTDOC=… RUST_TARGET=…)
# and exits 0; otherwise prints one line per missing part, with its Debian
# package, and exits 1.
REGISTRY=${RUST_REGISTRY:-/usr/share/cargo/registry}
missing=""
for dir in /usr/bin $(command -v cargo >/dev/null 2>&1 && dirname "$(command -v cargo)"); do
	[ -x "$dir/cargo" ] && [ -x "$dir/rustc" ] || { missing="$missing
Rust toolchain: no cargo and rustc in $dir (apt-get install rustc cargo)"; continue; }
	sysroot=$("$dir/rustc" --print sysroot 2>/dev/null)
	target=""
	for t in wasm32-wasip1 wasm32-wasi; do
		if ls "$sysroot/lib/rustlib/$t/lib/"libstd-*.rlib >/dev/null 2>&1; then target=$t; break; fi
	done
	if [ -z "$target" ]; then
		missing="$missing
Rust toolchain: $dir/rustc ($("$dir/rustc" --version)) has no wasm32-wasi or wasm32-wasip1 standard library (apt-get install libstd-rust-dev-wasm32, or rustup target add wasm32-wasip1)"
		continue
	fi
	found="CARGO=$dir/cargo RUSTC=$dir/rustc RUSTDOC=$dir/rustdoc RUST_TARGET=$target"
	break
done
if ! ls -d "$REGISTRY"/serde_json-1.* >/dev/null 2>&1; then
	echo "Rust toolchain: serde_json not in $REGISTRY (apt-get install librust-serde-json-dev)" >&2
	exit 1
fi
if [ -z "$found" ]; then
	echo "${missing#?}" >&2
	exit 1
fi
echo "$found"
