// client.mjs drives the official TypeScript MCP SDK's Streamable HTTP client
// for the scenarios (scenarios/harness/client_ts.go): it connects, prints one
// JSON line, then answers one JSON command per stdin line with one JSON line.
//
//   node client.mjs URL [TOKEN]
//   -> {"ok":true,"sessionId":"..."}
//   {"op":"call","tool":"docmost_update_page","args":{"page_id":"p1"}}
//   -> {"ok":true,"sessionId":"...","isError":false,"text":"..."}
//   {"op":"close"}
//   -> {"ok":true}
//
// A failed call is {"ok":false,"error":"..."}; the process goes on.
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
if (!url) {
  process.stderr.write("usage: node client.mjs URL [TOKEN]\n");
  process.exit(2);
}
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const client = new Client({ name: "mcpchaos-ts-sdk", version: "0.1.0" });
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const message = (e) => String(e?.message ?? e);

try {
  await client.connect(transport);
  out({ ok: true, sessionId: transport.sessionId });
} catch (e) {
  out({ ok: false, error: message(e) });
  process.exit(1);
}

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (e) {
    out({ ok: false, error: `not a JSON command: ${message(e)}` });
    continue;
  }
  if (cmd.op === "close") {
    await client.close().catch(() => {});
    out({ ok: true });
    break;
  }
  try {
    const r = await client.callTool({ name: cmd.tool, arguments: cmd.args ?? {} });
    const text = (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
    out({ ok: true, sessionId: transport.sessionId, isError: !!r.isError, text });
  } catch (e) {
    out({ ok: false, sessionId: transport.sessionId, error: message(e) });
  }
}
process.exit(0);
