// rawDispatcher returns the host's own request path at 2026-07-28, which
// ext-tasks needs for the task lifecycle requests: one POST per JSON-RPC
// request to url, framed (jsonrpc, id) and with the headers the revision
// asks for. A tools/call also asks for a task (_meta["toolhost/task"]).
// ts2.mjs and taskinput.mjs share it; TS2_DEBUG=1 traces each exchange.
export function rawDispatcher(url, revision) {
  let seq = 0;
  return async function rawDispatch(bare, options) {
    const request = { jsonrpc: '2.0', id: `raw-${++seq}`, ...bare };
    if (request.method === 'tools/call') {
      request.params = { ...request.params, _meta: { ...request.params._meta, 'toolhost/task': {} } };
    }
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'Mcp-Protocol-Version': revision, 'Mcp-Method': request.method };
    const name = request.params?.name ?? request.params?.taskId;
    if (name) headers['Mcp-Name'] = name;
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(request), signal: options?.signal });
    const text = await res.text();
    if (process.env.TS2_DEBUG) process.stderr.write(JSON.stringify(request) + ' -> ' + res.status + ' ' + text.slice(0, 400) + '\n');
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const msgs = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
      return msgs.find((m) => m.id === request.id) ?? msgs.at(-1);
    }
    return JSON.parse(text);
  };
}
