#!/bin/bash
# make bench-start: serve's start to listening and to every tool listed, and
# the first call after it, on the example plugins, interleaved rounds of:
# BEFORE (a toolhost binary to compare with, e.g. one built from main; its
# default flags) and the current bin/toolhost, each on a cold cache (an
# empty folder) and a warm one (a copy of one cache filled once), and a
# first call with --timeout 50ms. Prints one JSON line per start
# (scripts/bench-start.py); the stdio rounds time initialize, the first
# tools/list and a call at once (scripts/bench-start-stdio.py). Cold is an
# empty --cache-dir: no compiled code and no describe cache entry.
set -eu
# ARMS=cold runs only the cold-start arms of issue 20 (now cold over HTTP
# and stdio, now warm over both, BEFORE cold over stdio).
NEW=${NEW:-bin/toolhost} P=${PLUGINS:-plugins} ROUNDS=${ROUNDS:-5} BEFORE=${BEFORE:-} ARMS=${ARMS:-all}
W0=$(mktemp -d)
trap 'rm -rf "$W0"' EXIT
python3 scripts/bench-start.py "$NEW" "$P" "$W0" --lazy=false >/dev/null # every module compiled and described
run() { # label mode bin [flags]
	local label=$1 mode=$2 C script=scripts/bench-start.py
	shift 2
	case "$label" in *stdio*) script=scripts/bench-start-stdio.py ;; esac
	C=$(mktemp -d)
	if [ "$mode" = warm ]; then cp -a "$W0/." "$C/"; fi
	echo -n "$label: "
	python3 "$script" "$1" "$P" "$C" "${@:2}"
	rm -rf "$C"
}
for r in $(seq "$ROUNDS"); do
	echo "round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ "$ARMS" = cold ]; then
		run "now, cold" cold "$NEW"
		run "now, cold, stdio" cold "$NEW"
		run "now, warm, stdio" warm "$NEW"
		run "now, warm" warm "$NEW"
		if [ -n "$BEFORE" ]; then run "before, cold, stdio" cold "$BEFORE"; fi
		continue
	fi
	if [ -n "$BEFORE" ]; then
		run "before, cold" cold "$BEFORE"
		run "before, cold, stdio" cold "$BEFORE"
		run "before, warm" warm "$BEFORE"
		run "before --lazy, warm" warm "$BEFORE" --lazy
		CALL_TIMEOUT=50ms run "before --lazy, warm, call --timeout 50ms" warm "$BEFORE" --lazy
	fi
	run "now, cold" cold "$NEW"
	run "now, cold, stdio" cold "$NEW"
	run "now, warm, stdio" warm "$NEW"
	run "now --lazy=false, cold" cold "$NEW" --lazy=false
	run "now, warm" warm "$NEW"
	run "now --lazy=false, warm" warm "$NEW" --lazy=false
	CALL_TIMEOUT=50ms run "now, warm, call --timeout 50ms" warm "$NEW"
done
