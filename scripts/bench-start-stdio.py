#!/usr/bin/env python3
"""One start of `toolhost serve --stdio` (make bench-start; docs/BENCHMARKS.md,
"Cold start"). Writes initialize at once, as a client that starts the
server does, and times from the process start: the initialize answer, the
first tools/list answer (and how many tools it lists), and a text.count
call sent right after it (its answer, which waits for the module's
compile on a cold cache). Prints one JSON line.

Usage: bench-start-stdio.py BIN PLUGINS CACHE_DIR [serve flags...]"""
import json, subprocess, sys, time

bin_, plugins, cache = sys.argv[1:4]
t0 = time.monotonic()
p = subprocess.Popen([bin_, "serve", "--stdio", "--plugins", plugins, "--cache-dir", cache, "--watch=false"] + sys.argv[4:],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)


def send(msg):
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()


def answer(id_):
    for line in p.stdout:
        msg = json.loads(line)
        if msg.get("id") == id_:
            return msg
    sys.exit("serve ended before answering %d" % id_)


send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                                       "clientInfo": {"name": "bench", "version": "0"}}})
answer(0)
init = time.monotonic() - t0
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
tools = len(answer(1)["result"]["tools"])
listed = time.monotonic() - t0
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "text_count", "arguments": {"text": "a b c"}}})
res = answer(2)
called = time.monotonic() - t0
p.stdin.close()
p.wait()
print(json.dumps({"initialize_s": round(init, 3), "first_list_s": round(listed, 3), "first_list_tools": tools,
                  "call_s": round(called, 3), "call_ok": "result" in res and not res["result"].get("isError", False)}))
