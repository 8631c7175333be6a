// Drives toolhost's MCP Tasks (2025-11-25, experimental in the SDK) with
// the official TypeScript MCP SDK client: cmd/toolhost's
// TestTypeScriptTasks runs it against a server; argv[2] is the /mcp URL.
// Each step prints one JSON line on stdout.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const describeError = (e) => ({ name: e?.name ?? 'Error', code: e?.code, message: String(e?.message ?? e) });

async function main() {
  const client = new Client({ name: 'toolhost-tasks', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
  const { tools } = await client.listTools();
  emit({ step: 'connect', tasks: client.getServerCapabilities()?.tasks ?? null,
    taskSupport: Object.fromEntries(tools.map((t) => [t._meta?.['toolhost/name'] ?? t.name, t.execution?.taskSupport ?? null])) });
  const wire = (name) => tools.find((t) => t._meta?.['toolhost/name'] === name)?.name ?? name;

  // A task that runs to its end: created, polled, result.
  const kinds = [];
  let result = null;
  for await (const m of client.experimental.tasks.callToolStream(
    { name: wire('text.count'), arguments: { text: 'a b c' } }, undefined, { task: {} })) {
    kinds.push(m.type === 'taskStatus' ? `status:${m.task.status}` : m.type);
    if (m.type === 'result') result = m.result;
    if (m.type === 'error') result = { error: describeError(m.error) };
  }
  emit({ step: 'complete', kinds, result });

  // A task cancelled while its guest runs.
  let taskId = null;
  const stream = client.experimental.tasks.callToolStream(
    { name: wire('sleep'), arguments: { ms: 25000 } }, undefined, { task: {} });
  for await (const m of stream) {
    if (m.type === 'taskCreated') {
      taskId = m.task.taskId;
      break;
    }
  }
  const cancelled = await client.experimental.tasks.cancelTask(taskId);
  const after = await client.experimental.tasks.getTask(taskId);
  emit({ step: 'cancel', cancelled: cancelled.status, after: after.status });

  try {
    await client.experimental.tasks.getTask('no-such-task');
    emit({ step: 'unknown', error: null });
  } catch (e) {
    emit({ step: 'unknown', error: describeError(e) });
  }
  await client.close();
}

main().catch((e) => {
  emit({ step: 'fatal', error: describeError(e) });
  process.exit(1);
});
