// The TypeScript MCP SDK v2 with its Tasks client (@modelcontextprotocol/ext-tasks)
// answering the input request of a tool that runs as a task: at 2026-07-28
// the task enters input_required, tasks/get shows its inputRequests and the
// client answers with tasks/update; at 2025-11-25 the client calls
// tasks/result, where toolhost sends elicitation/create naming the task.
// ext-tasks routes each request to onInputRequest and follows the task to
// its end. It calls spec.tool with spec.args once per answer in
// spec.answers. cmd/toolhost's TestWebDeleteAsksInTask runs it: argv[2] is
// JSON {url, revision, tool, args, answers}.
// Prints one JSON line: {results: [{asked, message, scope, delivery, taskId, kind, isError, structured}]} or {error}.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createApplicationInputHandler, createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { rawDispatcher } from './rawdispatch.mjs';

const spec = JSON.parse(process.argv[2]);
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const modern = spec.revision >= '2026-07-28';
const clientInfo = { name: 'toolhost-taskinput-v2', version: '1.0.0' };
const clientCapabilities = { elicitation: { form: {} }, ...(modern ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {}) };

// The host's own request path at 2026-07-28 (rawdispatch.mjs), which
// ext-tasks needs for the task lifecycle requests. A tools/call asks for a
// task (toolhost/task).
const rawDispatch = rawDispatcher(spec.url, spec.revision);

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
