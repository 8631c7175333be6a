#!/usr/bin/env bash
# The storm of docs/GOVERNOR.md against a fleet (docs/SCALING.md): nine
# agents, MCP clients of the load balancer, over FLEET_REPLICAS replicas
# (3) that share the upstream's quota through Redis. Fails when the
# upstream saw more grants than the quota allows or answered one 429.
# `make fleet-storm` runs it; STORM_FLAGS adds toolhost-storm flags. The
# fleet runs in bin/fleet-storm/run and is stopped at the end, whatever
# happens.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=bin/fleet-storm
replicas=${FLEET_REPLICAS:-3}
mkdir -p "$dir/plugins"
go build -o bin/toolhost-storm ./cmd/toolhost-storm
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o "$dir/plugins/egress.wasm" ./host/testdata/egress
# shellcheck disable=SC2086
bin/toolhost-storm --fleet-config --replicas "$replicas" ${STORM_FLAGS:-} >"$dir/toolhost.toml"

export FLEET_DIR=$dir/run FLEET_PLUGINS=$dir/plugins FLEET_CONFIG=$dir/toolhost.toml FLEET_REPLICAS=$replicas
trap 'scripts/fleet.sh stop' EXIT
scripts/fleet.sh start
# shellcheck disable=SC2086
bin/toolhost-storm --fleet "http://127.0.0.1:${FLEET_PORT:-7330}/mcp" --replicas "$replicas" ${STORM_FLAGS:-}
