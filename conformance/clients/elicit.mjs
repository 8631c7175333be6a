// The TypeScript MCP SDK v2 (@modelcontextprotocol/client) answering a
// tool's input request: at 2026-07-28 toolhost answers tools/call with an
// input_required result, the client's elicitation/create handler answers,
// and the SDK retries with inputResponses and the requestState; at
// 2025-11-25 toolhost sends the handler elicitation/create itself. It calls
// spec.tool with spec.args once per answer in spec.answers (a client whose
// handler gives that answer), then once from a client that declared no
// elicitation capability. cmd/toolhost's TestWebDeleteAsksFirst runs it:
// argv[2] is JSON {url, revision, tool, args, answers}.
// Prints one JSON line: {results: [{asked, message, isError, structured, text}], unable: {...}} or {error}.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const spec = JSON.parse(process.argv[2]);
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const clientInfo = { name: 'toolhost-elicit-v2', version: '1.0.0' };

async function callWith(answer) {
  const client = new Client(clientInfo, {
    capabilities: answer ? { elicitation: { form: {} } } : {},
    versionNegotiation: { mode: spec.revision >= '2026-07-28' ? { pin: spec.revision } : 'legacy' },
  });
  let asked = 0;
  let message = '';
  if (answer) {
    client.setRequestHandler('elicitation/create', async (request) => {
      asked++;
      message = request.params.message;
      return answer;
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(spec.url)));
  try {
    const res = await client.callTool({ name: spec.tool, arguments: spec.args });
    return { asked, message, isError: !!res.isError, structured: res.structuredContent ?? null, text: res.content?.[0]?.text ?? '' };
  } finally {
    await client.close();
  }
}

async function main() {
  const results = [];
  for (const answer of spec.answers) results.push(await callWith(answer));
  emit({ results, unable: await callWith(null) });
}
main().catch((e) => emit({ error: String(e?.stack ?? e) + (e?.cause ? "\ncause: " + String(e.cause?.stack ?? e.cause) : "") }));
