// OpenAI's Agents SDK: lists a toolhost server's tools through its MCP
// client and converts them as an agent with convertSchemasToStrict does.
// A tool whose schema strict mode cannot take stays non-strict (the SDK
// only logs a warning), so each tool's strict flag is printed.
// cmd/toolhost's TestOpenAIAgentsStrict runs it: argv[2] is the /mcp URL.
import { MCPServerStreamableHttp, getAllMcpTools } from '@openai/agents-core';

const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const server = new MCPServerStreamableHttp({ url: process.argv[2], name: 'toolhost' });
try {
  await server.connect();
  const tools = await getAllMcpTools({ mcpServers: [server], convertSchemasToStrict: true });
  emit({ tools: tools.map((t) => ({ name: t.name, strict: t.strict, parameters: t.parameters })) });
} catch (e) {
  emit({ error: String(e?.stack ?? e) });
} finally {
  await server.close();
}
