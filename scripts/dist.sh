#!/bin/sh
# make dist: release archives of toolhost for linux, darwin and windows on
# amd64 and arm64 in dist/, a SHA256SUMS file over them, and dist/image/,
# the context the Containerfile builds from (no network at image build
# time). Each archive holds the binary, LICENSE, README.md and the example
# plugins (plugins/*.wasm: `make plugins` first; make dist does).
#
# Reproducible: the same commit gives the same bytes. -trimpath drops local
# paths, -buildid= the build id, CGO_ENABLED=0 the host's C toolchain; the
# files in the archives carry the commit's time (SOURCE_DATE_EPOCH), owner
# 0 and a sorted order. -s -w strip the symbol table and DWARF (panics keep
# their stack traces: those come from the pclntab). The tags are make
# build's (BUILDTAGS).
#
# Environment: VERSION (default: git describe), BUILDTAGS, GO, PLATFORMS
# (default: the six below), DIST (default: dist).
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
DIST=${DIST:-dist}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
BUILDTAGS=${BUILDTAGS:-grpcnotrace}
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH

set -- plugins/*.wasm
[ -e "$1" ] || { echo "dist: no plugins/*.wasm (run make plugins)" >&2; exit 1; }

rm -rf "$DIST"
mkdir -p "$DIST/stage" "$DIST/image/plugins" "$DIST/image/cache"
for p in $PLATFORMS; do
	os=${p%/*} arch=${p#*/}
	name=toolhost_${VERSION}_${os}_${arch}
	dir=$DIST/stage/$name
	exe=toolhost; [ "$os" = windows ] && exe=toolhost.exe
	mkdir -p "$dir/plugins"
	echo "dist: $name"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -tags "$BUILDTAGS" \
		-ldflags "-s -w -buildid= -X main.version=$VERSION" -o "$dir/$exe" ./cmd/toolhost
	cp LICENSE README.md "$dir/"
	cp plugins/*.wasm "$dir/plugins/"
	find "$dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
	if [ "$os" = windows ]; then
		(cd "$DIST/stage" && find "$name" -print | LC_ALL=C sort | zip -q -X -D -@ "../$name.zip")
	else
		tar -C "$DIST/stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
			-cf - "$name" | gzip -n -9 > "$DIST/$name.tar.gz"
	fi
	if [ "$os" = linux ]; then
		mkdir -p "$DIST/image/linux_$arch"
		cp "$dir/toolhost" "$DIST/image/linux_$arch/toolhost"
	fi
done
cp plugins/*.wasm "$DIST/image/plugins/"
cp Containerfile "$DIST/image/"
(cd "$DIST" && sha256sum -- *.tar.gz *.zip > SHA256SUMS)
cat "$DIST/SHA256SUMS"
