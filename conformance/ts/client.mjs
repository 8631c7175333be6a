// Drives a toolhost server with the official TypeScript MCP SDK client, the
// client inside most editors and the MCP Inspector. cmd/toolhost's
// TestTypeScriptClient runs it; it is not meant to be run by hand (but
// `node client.mjs '{"transport":"http","url":"http://127.0.0.1:7331/mcp"}'`
// works against `make run`).
//
// argv[2] is a JSON scenario:
//   transport  "http" (url) or "stdio" (command, args)
//   calls      [{tool, args, meta}]      each called once, in order
//   cancels    [{tool, args, meta}]      each called, then aborted when the
//                                         test writes "abort" on stdin
//   listChange true: wait for the test to change the plugins folder and for
//              notifications/tools/list_changed, then list again
//   plan       {args}: call toolhost.plan and count progress notifications
//   progress   {tool, args}: set the log level to info, call the tool with a
//              progress token, and report its progress and log messages
//
// Every step prints one JSON line on stdout; the test reads them in order
// and answers "await-*" steps on stdin. Tools are named by manifest name in
// the scenario and called by the wire name the server lists for them
// (_meta["toolhost/name"] maps one to the other), as a real client would.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import readline from 'node:readline';

const spec = JSON.parse(process.argv[2]);
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');

// Lines from the test, one awaited at a time.
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function awaitLine(step, extra = {}) {
  emit({ step, ...extra });
  const { value, done } = await lines.next();
  if (done) throw new Error(`stdin closed while waiting for ${step}`);
  return value;
}

function describeError(e) {
  return { name: e?.name ?? 'Error', code: e?.code, message: String(e?.message ?? e) };
}

let changed = null; // resolves when tools/list_changed arrives
let onChanged = () => {};

async function main() {
  const client = new Client({ name: 'toolhost-conformance', version: '1.0.0' }, {
    capabilities: {},
  });
  client.setNotificationHandler(
    (await import('@modelcontextprotocol/sdk/types.js')).ToolListChangedNotificationSchema,
    () => onChanged(),
  );
  const transport = spec.transport === 'stdio'
    ? new StdioClientTransport({ command: spec.command, args: spec.args, stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(spec.url));
  await client.connect(transport);
  emit({
    step: 'connect',
    server: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    protocolVersion: transport.protocolVersion ?? null,
  });

  // tools/list: the SDK validates the result against its own schema and
  // throws when any tool is malformed, so getting here is the test.
  let tools;
  try {
    tools = (await client.listTools()).tools;
  } catch (e) {
    emit({ step: 'list', error: describeError(e) });
    throw e;
  }
  emit({
    step: 'list',
    tools: tools.map((t) => ({
      name: t.name,
      manifest: t._meta?.['toolhost/name'] ?? t.name,
      annotations: t.annotations ?? null,
      hasOutputSchema: t.outputSchema !== undefined,
    })),
  });
  const wire = (name) => tools.find((t) => t.name === name || t._meta?.['toolhost/name'] === name)?.name ?? name;

  for (const c of spec.calls ?? []) {
    try {
      const r = await client.callTool({ name: wire(c.tool), arguments: c.args ?? {}, _meta: c.meta });
      emit({
        step: 'call', tool: c.tool, isError: r.isError ?? false,
        structured: r.structuredContent ?? null,
        text: (r.content ?? []).filter((x) => x.type === 'text').map((x) => x.text).join(''),
        error: r._meta?.['toolhost/error'] ?? null,
      });
    } catch (e) {
      emit({ step: 'call', tool: c.tool, thrown: describeError(e) });
    }
  }

  for (const c of spec.cancels ?? []) {
    const ac = new AbortController();
    const pending = client.callTool({ name: wire(c.tool), arguments: c.args ?? {}, _meta: c.meta },
      undefined, { signal: ac.signal, timeout: 120000 });
    const settled = pending.then((r) => ({ result: r }), (e) => ({ thrown: describeError(e) }));
    await awaitLine('await-abort', { tool: c.tool });
    ac.abort('the test cancelled it');
    const out = await settled;
    emit({ step: 'cancel', tool: c.tool, ...(out.result ? { result: out.result } : { thrown: out.thrown }) });
  }

  if (spec.listChange) {
    changed = new Promise((resolve) => { onChanged = resolve; });
    await awaitLine('await-change');
    await changed;
    const after = (await client.listTools()).tools;
    emit({ step: 'list_changed', tools: after.map((t) => t._meta?.['toolhost/name'] ?? t.name) });
  }

  if (spec.progress) {
    const { LoggingMessageNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const logs = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); });
    await client.setLoggingLevel('info');
    const { r, all, late } = await callCountingProgress(client, wire(spec.progress.tool), spec.progress.args);
    emit({
      step: 'progress', tool: spec.progress.tool, isError: r.isError ?? false,
      structured: r.structuredContent ?? null, progress: all.length, late: late.length, last: all.at(-1) ?? null,
      increasing: all.every((p, i) => i === 0 || p.progress > all[i - 1].progress),
      logs: logs.map((l) => ({ logger: l.logger, level: l.level, data: l.data })),
    });
  }

  if (spec.plan) {
    const { r, all } = await callCountingProgress(client, wire('toolhost.plan'), spec.plan.args);
    emit({ step: 'plan', isError: r.isError ?? false, progress: all.length, error: r._meta?.['toolhost/error'] ?? null });
  }

  // A call after everything else: the server is still serving this client.
  const last = await client.callTool({ name: wire('text.count'), arguments: { text: 'still here' } });
  emit({ step: 'alive', isError: last.isError ?? false });
  await client.close();
  emit({ step: 'done' });
}

main().then(() => process.exit(0), (e) => {
  emit({ step: 'fatal', error: describeError(e) });
  process.exit(1);
});

// callCountingProgress calls a tool and returns its result with every
// progress notification the server sent for it. This SDK runs
// notification handlers a microtask late but handles a response at once,
// so a progress notification read together with its request's response
// (stdio reads both in one chunk) finds its handler gone and is reported
// through onerror as an "unknown token" (typescript-sdk#2580). The server
// did send it, before the response: it is counted, as late.
async function callCountingProgress(client, name, args) {
  const seen = [];
  const late = [];
  const onerror = client.onerror;
  client.onerror = (e) => {
    const m = /unknown token: (\{.*\})$/s.exec(String(e?.message ?? ''));
    if (m) late.push(JSON.parse(m[1]).params); else onerror?.(e);
  };
  try {
    const r = await client.callTool({ name, arguments: args }, undefined, {
      onprogress: (p) => { seen.push(p); },
      timeout: 120000,
    });
    await new Promise((resolve) => setImmediate(resolve)); // let a late one surface
    return { r, all: [...seen, ...late], late };
  } finally {
    client.onerror = onerror;
  }
}
