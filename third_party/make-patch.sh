#!/usr/bin/env bash
# Regenerates third_party/wazero.patch: the whole difference between wazero
# v1.12.0 — the files of it that third_party/wazero holds, with its import
# path renamed to this fork's — and third_party/wazero. Run it after editing
# the fork; host's TestWazeroPatchApplied checks the tree carries the patch.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=github.com/tetratelabs/wazero
NEW=github.com/toolhost/toolhost/third_party/wazero
src=$(GOFLAGS=-mod=mod go mod download -json "$OLD@v1.12.0" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "make-patch: cannot download $OLD@v1.12.0" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$tmp" init -q
(cd third_party/wazero && find . -type f) | while read -r f; do
  [ -f "$src/$f" ] || continue
  mkdir -p "$tmp/third_party/wazero/$(dirname "$f")"
  cp "$src/$f" "$tmp/third_party/wazero/$f"
  chmod u+w "$tmp/third_party/wazero/$f"
  case "$f" in *.go) sed -i -e "s#\"$OLD\([/\"]\)#\"$NEW\1#g" -e "s#^\(//go:linkname [^ ]*\) $OLD/#\1 $NEW/#" "$tmp/third_party/wazero/$f" ;; esac
done
git -C "$tmp" add -A && git -C "$tmp" -c user.name=x -c user.email=x@x commit -qm baseline
cp -r third_party/wazero/. "$tmp/third_party/wazero/"
git -C "$tmp" add -A
git -C "$tmp" diff --cached --binary > third_party/wazero.patch
echo "third_party/wazero.patch: $(grep -c '^diff --git' third_party/wazero.patch) files"
