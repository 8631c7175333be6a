#!/usr/bin/env python3
"""One start of `toolhost serve` (make bench-start; docs/BENCHMARKS.md,
"Lazy start"). Times, from the process start: the first line saying it
listens (the "listening" line, or "serving MCP" when every module was
listed at once), the "serving MCP" line (every tool listed), then two
calls of text.count with `toolhost call` (wall time of the CLI process:
its start, initialize and the call), and prints one JSON line with the
attempts the server's audit log counted for each call. $CALL_TIMEOUT is
passed to `toolhost call --timeout` (the per-attempt timeout).

Usage: bench-start.py BIN PLUGINS CACHE_DIR [serve flags...]"""
import json, os, re, subprocess, sys, time

bin_, plugins, cache = sys.argv[1:4]
t0 = time.monotonic()
p = subprocess.Popen([bin_, "serve", "--addr", "127.0.0.1:0", "--plugins", plugins, "--cache-dir", cache,
                      "--watch=false"] + sys.argv[4:], stderr=subprocess.PIPE, text=True)
listen = ready = url = None
for line in p.stderr:
    if listen is None and ('"msg":"listening' in line or "serving MCP" in line):
        listen = time.monotonic() - t0
    if "serving MCP" in line:
        ready = time.monotonic() - t0
        url = json.loads(line)["url"]
        break
if url is None:
    sys.exit("serve ended before serving")


def call():
    args = [bin_, "call", "--server", url]
    if os.environ.get("CALL_TIMEOUT"):
        args += ["--timeout", os.environ["CALL_TIMEOUT"]]
    s = time.monotonic()
    r = subprocess.run(args + ["text.count", '{"text":"a b c"}'], capture_output=True, text=True)
    return time.monotonic() - s, r.returncode


(c1, rc1), (c2, rc2) = call(), call()
p.terminate()
rest = p.stderr.read()
p.wait()
attempts = re.findall(r'"msg":"call".*?"tool":"text.count".*?"outcome":"(\w+)","attempts":(\d+)', rest)
print(json.dumps({"listen_s": round(listen, 3), "ready_s": round(ready, 3), "call1_s": round(c1, 3), "call1_rc": rc1,
                  "call2_s": round(c2, 3), "call2_rc": rc2, "calls": attempts}))
