// The Vercel AI SDK's MCP client over stdio, against a server that is slow
// to start (slowstart.mjs): it probes with server/discover, falls back to
// initialize, lists the tools and calls one. cmd/toolhost's
// TestAISDKClientSlowStart runs it: argv[2] is JSON {command, args, tool,
// toolArgs}. Prints one JSON line: {tools, result} or {error}.
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';

const spec = JSON.parse(process.argv[2]);
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
let client;
try {
  client = await createMCPClient({
    transport: new Experimental_StdioMCPTransport({ command: 'node', args: ['slowstart.mjs', spec.command, ...spec.args], stderr: 'inherit' }),
  });
  const tools = await client.tools();
  const result = await tools[spec.tool].execute(spec.toolArgs, { toolCallId: 'c1', messages: [] });
  emit({ tools: Object.keys(tools), result });
} catch (e) {
  emit({ error: String(e?.stack ?? e) });
} finally {
  await client?.close();
}
