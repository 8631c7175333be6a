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
import { rawDispatcher } from './rawdispatch.mjs';

const spec = JSON.parse(process.argv[2]);
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const modern = spec.revision >= '2026-07-28';
const clientInfo = { name: 'toolhost-conformance-v2', version: '1.0.0' };
const clientCapabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

// The host's own request path at 2026-07-28 (rawdispatch.mjs), which
// ext-tasks needs for the task lifecycle requests. A tools/call asks for a
// task (toolhost/task): text_count's timeout is too short for
// toolhost to offer it as one, and the point is tasks/get.
const rawDispatch = rawDispatcher(spec.url, spec.revision);

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
