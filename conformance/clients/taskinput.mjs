// The TypeScript MCP SDK v2 with its Tasks client (@modelcontextprotocol/ext-tasks)
// answering the input request of a tool that runs as a task: at 2026-07-28
// the task enters input_required, tasks/get shows its inputRequests and the
// client answers with tasks/update; at 2025-11-25 the client calls
// tasks/result, where toolhost sends elicitation/create naming the task.
// ext-tasks routes each request to onInputRequest and follows the task to
// its end. It calls spec.tool with spec.args once per answer in
// spec.answers. cmd/toolhost's TestWebDeleteAsksFirst runs it: argv[2] is
// JSON {url, revision, tool, args, answers}.
// Prints one JSON line: {results: [{asked, message, scope, delivery, taskId, kind, isError, structured}]} or {error}.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createApplicationInputHandler, createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

const spec = JSON.parse(process.argv[2]);
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const modern = spec.revision >= '2026-07-28';
const clientInfo = { name: 'toolhost-taskinput-v2', version: '1.0.0' };
const clientCapabilities = { elicitation: { form: {} }, ...(modern ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {}) };

// rawDispatch is ts2.mjs's: the request path ext-tasks needs at 2026-07-28,
// one POST per request; a tools/call asks for a task (toolhost/task).
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
  if (process.env.TS2_DEBUG) process.stderr.write(JSON.stringify(request) + ' -> ' + res.status + ' ' + text.slice(0, 400) + '\n');
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const msgs = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    return msgs.find((m) => m.id === request.id) ?? msgs.at(-1);
  }
  return JSON.parse(text);
}

async function callWith(answer) {
  const client = new Client(clientInfo, {
    capabilities: clientCapabilities,
    versionNegotiation: { mode: modern ? { pin: spec.revision } : 'legacy' },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(spec.url)));
  const seen = { asked: 0, message: '', scope: '', delivery: '', taskId: '' };
  const refuse = () => { throw new Error('not asked for'); };
  const session = createTaskSessionFromClient(client, {
    endpointId: 'toolhost-taskinput-' + spec.revision,
    onInputRequest: createApplicationInputHandler({
      elicitation: async (request, context) => {
        seen.asked++;
        seen.message = String(request.params.message ?? '');
        seen.scope = context.scope;
        seen.delivery = context.delivery;
        seen.taskId = context.taskId ?? '';
        return answer;
      },
      sampling: refuse,
      roots: refuse,
    }),
    ...(modern ? { rawDispatch, v2RequestFraming: { protocolVersion: spec.revision, clientInfo, clientCapabilities } } : {}),
  });
  try {
    // At 2025-11-25 the client decides: web_delete is offered as a task
    // (taskSupport optional), and preferring one makes it a task.
    const execution = await session.callTool(spec.tool, spec.args, { task: { preference: 'prefer' } });
    const { outcome } = await execution.settle();
    const result = resultFromTaskOutcome(outcome);
    return { ...seen, kind: outcome.kind ?? outcome.status, isError: !!result?.isError, structured: result?.structuredContent ?? null };
  } finally {
    await session.close();
    await client.close();
  }
}

async function main() {
  const results = [];
  for (const answer of spec.answers) results.push(await callWith(answer));
  emit({ results });
}
main().catch((e) => emit({ error: String(e?.stack ?? e) + (e?.cause ? '\ncause: ' + String(e.cause?.stack ?? e.cause) : '') }));
