#!/bin/sh
# make dist-check: after make dist, checks what can be checked here without
# pushing anything: every archive against SHA256SUMS, that each holds its
# binary, LICENSE and the plugins, that the linux binary for this machine
# prints its version with --version, that the image context is complete,
# and (DIST_REPRO=1) that a second build gives the same checksums.
set -eu
cd "$(dirname "$0")/.."
DIST=${DIST:-dist}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
fail() { echo "dist-check: $*" >&2; exit 1; }

(cd "$DIST" && sha256sum --quiet -c SHA256SUMS) || fail "checksums do not match SHA256SUMS"
n=$(wc -l < "$DIST/SHA256SUMS")
[ "$n" -eq 6 ] || fail "SHA256SUMS lists $n archives, want 6"
for f in "$DIST"/*.tar.gz; do
	name=$(basename "$f" .tar.gz)
	list=$(tar -tzf "$f")
	for want in toolhost LICENSE README.md plugins/; do
		echo "$list" | grep -qx "$name/$want" || fail "$f lacks $name/$want"
	done
done
for f in "$DIST"/*.zip; do
	name=$(basename "$f" .zip)
	unzip -l "$f" | grep -q " $name/toolhost.exe$" || fail "$f lacks $name/toolhost.exe"
done

arch=$(go env GOARCH)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xzf "$DIST/toolhost_${VERSION}_linux_${arch}.tar.gz"
got=$("$tmp/toolhost_${VERSION}_linux_${arch}/toolhost" --version)
[ "$got" = "toolhost $VERSION (guest ABI v1)" ] || fail "--version printed '$got', want 'toolhost $VERSION (guest ABI v1)'"
file "$tmp/toolhost_${VERSION}_linux_${arch}/toolhost" | grep -q 'statically linked' || fail "the linux binary is not static"
echo "dist-check: linux/$arch --version: $got"

for want in Containerfile linux_amd64/toolhost linux_arm64/toolhost cache; do
	[ -e "$DIST/image/$want" ] || fail "image context lacks $want"
done
ls "$DIST"/image/plugins/*.wasm >/dev/null 2>&1 || fail "image context has no plugins"

if [ "${DIST_REPRO:-}" = 1 ]; then
	cp "$DIST/SHA256SUMS" "$tmp/first"
	DIST=$tmp/again scripts/dist.sh >/dev/null
	diff "$tmp/first" "$tmp/again/SHA256SUMS" || fail "a second build gave other checksums: not reproducible"
	echo "dist-check: reproducible (a second build gave the same SHA256SUMS)"
fi
echo "dist-check: ok"
