// The TypeScript MCP SDK v2 (@modelcontextprotocol/client) and its Tasks
// client (@modelcontextprotocol/ext-tasks) against toolhost over
// Streamable HTTP, at one revision: "2025-11-25" (the legacy initialize
// handshake) or "2026-07-28" (server/discover, pinned). It lists the tools
// (the SDK validates them), calls a tool, and runs a call as a task for a
// success and a tool failure through ext-tasks (which, at 2026-07-28,
// checks the result embedded in tasks/get). cmd/toolhost's
// TestTypeScriptV2Client runs it: argv[2] is JSON {url, revision}.
// Prints one JSON line: {era, tools, call, tasks} or {error}.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

const spec = JSON.parse(process.argv[2]);
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const modern = spec.revision >= '2026-07-28';
const clientInfo = { name: 'toolhost-conformance-v2', version: '1.0.0' };
const clientCapabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

// rawDispatch is the host's own request path at 2026-07-28, which ext-tasks
// needs for the task lifecycle requests: one POST per JSON-RPC request,
// framed (jsonrpc, id) and with the headers the revision asks for. A
// tools/call also asks for a task (_meta["toolhost/task"]): text_count's
// timeout is too short for toolhost to offer it as one, and the point is
// tasks/get.
let seq = 0;
async function rawDispatch(bare, options) {
  const request = { jsonrpc: '2.0', id: `raw-${++seq}`, ...bare };
  if (request.method === 'tools/call') {
    request.params = { ...request.params, _meta: { ...request.params._meta, 'toolhost/task': {} } };
  }
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    'Mcp-Protocol-Version': spec.revision, 'Mcp-Method': request.method };
  const name = request.params?.name ?? request.params?.taskId;
  if (name) headers['Mcp-Name'] = name;
  const res = await fetch(spec.url, { method: 'POST', headers, body: JSON.stringify(request), signal: options?.signal });
  const text = await res.text();
  if (process.env.TS2_DEBUG) process.stderr.write(JSON.stringify(request) + " -> " + res.status + " " + text.slice(0, 300) + "\n");
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const msgs = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    return msgs.find((m) => m.id === request.id) ?? msgs.at(-1);
  }
  return JSON.parse(text);
}

async function main() {
  const client = new Client(clientInfo, {
    capabilities: modern ? clientCapabilities : {},
    versionNegotiation: { mode: modern ? { pin: spec.revision } : 'legacy' },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(spec.url)));
  const { tools } = await client.listTools();
  const call = await client.callTool({ name: 'text_count', arguments: { text: 'a b c' } });
  const session = createTaskSessionFromClient(client, {
    endpointId: 'toolhost-' + spec.revision,
    ...(modern ? { rawDispatch, v2RequestFraming: { protocolVersion: spec.revision, clientInfo, clientCapabilities } } : {}),
  });
  const tasks = [];
  try {
    for (const [name, args] of [['text_count', { text: 'one two' }], ['text_count', {}]]) {
      const execution = await session.callTool(name, args);
      const { outcome } = await execution.settle();
      const result = resultFromTaskOutcome(outcome);
      tasks.push({ name, kind: outcome.kind ?? outcome.status, isError: !!result?.isError, structured: result?.structuredContent ?? null });
    }
  } finally {
    await session.close();
  }
  emit({ era: modern ? 'modern' : 'legacy', tools: tools.map((t) => t.name), call: call.structuredContent, tasks });
  await client.close();
}
main().catch((e) => emit({ error: String(e?.stack ?? e) + (e?.cause ? "\ncause: " + String(e.cause?.stack ?? e.cause) : "") }));
