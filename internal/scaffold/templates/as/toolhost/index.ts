// A copy of abi/assemblyscript/assembly/index.ts from toolhost, made by make abi-bundle.
// toolhost guest ABI v1 for AssemblyScript (docs/ABI.md, docs/WRITING-AS.md).
// A tool module registers its tools at top level (which runs in
// _initialize: asconfig.json sets --exportStart _initialize) and
// re-exports the ABI entry points: `export * from "<sdk>/assembly/exports"`.
import { Value, Writer, Kind, parse, quote } from "./json";
export { Value, Writer, Kind, parse, quote } from "./json";
import { describeOffers, isOfferCall, dispatchOffer } from "./offers";
export {
  Resource, ResourceTemplate, Prompt, PromptArgument, Uri, Contents, Message,
  contents, promptResult, listing, registerResource, registerResourceTemplate, registerPrompt,
  setDynamic, setModuleTimeout, matchTemplate,
} from "./offers";

/** The ABI version this SDK speaks. */
export const ABI_VERSION: i32 = 1;

/** A tool's declaration in the manifest. Schemas are JSON text. */
export class Tool {
  name: string = "";
  title: string = "";
  description: string = "";
  /** JSON Schema 2020-12 of the arguments, with "type": "object". */
  inputSchema: string = "{\"type\":\"object\"}";
  /** JSON Schema of the result, or "" for none. */
  outputSchema: string = "";
  /** 0 leaves the default (30000). */
  timeoutMs: i32 = 0;
  idempotent: bool = false;
  readOnly: bool = false;
  /** "fresh" (the default, "") or "reuse". */
  instances: string = "";
}

/** What a handler returns: a result, or an error of one of the ABI's kinds. */
export class Outcome {
  result: Value | null = null;
  kind: string = "";
  message: string = "";
  retryAfterMs: i64 = -1;
  /** An input request's requests JSON (see askInput); "" for none. */
  input: string = "";
  /** The state an input request keeps for the call that answers. */
  state: string = "";
}

/** A successful result. */
export function ok(v: Value): Outcome { const o = new Outcome(); o.result = v; return o; }
function fail(kind: string, message: string, retryAfterMs: i64): Outcome {
  const o = new Outcome(); o.kind = kind; o.message = message; o.retryAfterMs = retryAfterMs; return o;
}
/** The arguments are wrong: never retried; the caller should fix them. */
export function schemaError(message: string): Outcome { return fail("schema", message, -1); }
/** A passing failure (an upstream 429 or 503): the dispatcher may retry, no sooner than retryAfterMs when ≥ 0. */
export function transientError(message: string, retryAfterMs: i64 = -1): Outcome { return fail("transient", message, retryAfterMs); }
/** A bug or a broken upstream: never retried. */
export function internalError(message: string): Outcome { return fail("internal", message, -1); }

/** A tool's handler: the parsed arguments (an object) in, an Outcome out. */
export type Handler = (args: Value) => Outcome;

const tools: Tool[] = [];
const handlers: Handler[] = [];

/** Declares a tool and its handler; call at top level of the module. */
export function register(tool: Tool, handler: Handler): void {
  tools.push(tool);
  handlers.push(handler);
}

/** The manifest JSON (what toolhost_describe returns). */
export function manifest(): string {
  const w = new Writer();
  w.raw("{\"abi\":1,\"tools\":[");
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i];
    if (i > 0) w.raw(",");
    w.raw("{\"name\":").string(t.name);
    if (t.title.length > 0) w.raw(",\"title\":").string(t.title);
    if (t.description.length > 0) w.raw(",\"description\":").string(t.description);
    w.raw(",\"input_schema\":").raw(t.inputSchema);
    if (t.outputSchema.length > 0) w.raw(",\"output_schema\":").raw(t.outputSchema);
    if (t.timeoutMs > 0) w.raw(",\"timeout_ms\":").number(<f64>t.timeoutMs);
    w.raw(",\"idempotent\":").raw(t.idempotent ? "true" : "false");
    w.raw(",\"read_only\":").raw(t.readOnly ? "true" : "false");
    if (t.instances.length > 0) w.raw(",\"instances\":").string(t.instances);
    w.raw("}");
  }
  w.raw("]");
  describeOffers(w);
  w.raw("}");
  return w.toString();
}

/** Runs the tool name with the arguments JSON and returns the response JSON; usable in native-style tests. */
export function dispatch(name: string, args: string): string {
  for (let i = 0; i < tools.length; i++) {
    if (tools[i].name != name) continue;
    const v = args.length == 0 ? Value.object() : parse(args);
    if (v == null || !v.isObject()) return respond(schemaError("arguments are not a JSON object"));
    return respond(handlers[i](v));
  }
  if (isOfferCall(name)) {
    const v = args.length == 0 ? Value.object() : parse(args);
    if (v == null || !v.isObject()) return respond(schemaError(name + ": arguments are not a JSON object"));
    return respond(dispatchOffer(name, v));
  }
  return respond(internalError("no tool named " + name + " in this module"));
}

function respond(o: Outcome): string {
  const w = new Writer();
  if (o.input.length > 0) {
    w.raw("{\"input\":{\"requests\":").raw(o.input);
    if (o.state.length > 0) w.raw(",\"state\":").string(o.state);
    return w.raw("}}").toString();
  }
  if (o.kind.length == 0) {
    const r = o.result;
    w.raw("{\"result\":");
    if (r == null) w.raw("null"); else w.value(r);
    return w.raw("}").toString();
  }
  w.raw("{\"error\":{\"kind\":").string(o.kind).raw(",\"message\":").string(o.message);
  if (o.retryAfterMs >= 0) w.raw(",\"retry_after_ms\":").number(<f64>o.retryAfterMs);
  return w.raw("}}").toString();
}

// ---- progress and logs (toolhost_v1.progress, toolhost_v1.log) ----

/** Log levels, MCP's names. */
export enum Level { Debug = 0, Info = 1, Notice = 2, Warning = 3, Error = 4 }

@external("toolhost_v1", "progress")
declare function hostProgress(done: f64, total: f64, ptr: usize, len: usize): i32;
@external("toolhost_v1", "log")
declare function hostLog(level: i32, ptr: usize, len: usize): i32;

/** Reports done of total units (total ≤ 0: unknown). Returns the host's status: 0 accepted, 1 dropped, 2 invalid. */
export function progress(done: f64, total: f64, message: string = ""): i32 {
  const b = String.UTF8.encode(message);
  return hostProgress(done, total, changetype<usize>(b), <usize>b.byteLength);
}

/** Sends one log message at level to the caller and the server log. Returns the host's status. */
export function log(level: Level, message: string): i32 {
  const b = String.UTF8.encode(message);
  return hostLog(<i32>level, changetype<usize>(b), <usize>b.byteLength);
}

// ---- egress (toolhost_v1.http_request, toolhost_v1.http_response) ----

@external("toolhost_v1", "http_request")
declare function hostHTTPRequest(ptr: usize, len: usize): i32;
@external("toolhost_v1", "http_response")
declare function hostHTTPResponse(ptr: usize, len: usize): i32;

/** An HTTP request through the host's governed egress. */
export class Request {
  method: string = "GET";
  url: string = "";
  /** Header names and values, in pairs: headers[0] is a name, headers[1] its value… */
  headers: string[] = [];
  body: string = "";
  constructor(url: string = "") { this.url = url; }
  header(name: string, value: string): Request { this.headers.push(name); this.headers.push(value); return this; }
}

/** An answer (status > 0) or a refusal (errorKind set: denied, too_large, rate_limited, timeout, unavailable, invalid). */
export class Response {
  status: i32 = 0;
  body: string = "";
  /** The base64 body when the upstream's was not UTF-8. */
  bodyBase64: string = "";
  /** The URL that answered, after redirects. */
  url: string = "";
  retryAfterMs: i64 = -1;
  headers: Value = Value.object();
  errorKind: string = "";
  errorGrant: string = "";
  errorMessage: string = "";

  /** The first value of header name (case-insensitive), or "". */
  header(name: string): string {
    const lower = name.toLowerCase();
    for (let i = 0; i < this.headers.keys.length; i++) {
      if (this.headers.keys[i].toLowerCase() != lower) continue;
      const vs = this.headers.items[i];
      if (vs.isArray() && vs.items.length > 0 && vs.items[0].isString()) return vs.items[0].s;
    }
    return "";
  }

  /**
   * The Outcome a tool should return for this response when it is not
   * a success, or null when it is one (2xx): a refusal of rate_limited,
   * timeout or unavailable, and a 429 or 503, are transient (with the
   * upstream's Retry-After); anything else is internal.
   */
  failure(): Outcome | null {
    if (this.errorKind.length > 0) {
      const msg = "egress " + this.errorKind + ": " + this.errorMessage;
      if (this.errorKind == "rate_limited" || this.errorKind == "timeout" || this.errorKind == "unavailable") {
        return transientError(msg, this.retryAfterMs);
      }
      return internalError(msg);
    }
    if (this.status == 429 || this.status == 503) {
      return transientError("upstream answered " + this.status.toString(), this.retryAfterMs);
    }
    if (this.status < 200 || this.status > 299) return internalError("upstream answered " + this.status.toString());
    return null;
  }
}

/** Performs req through the host; it blocks until the answer or the refusal. */
export function fetch(req: Request): Response {
  const w = new Writer();
  w.raw("{\"method\":").string(req.method).raw(",\"url\":").string(req.url);
  if (req.headers.length > 0) {
    w.raw(",\"headers\":{");
    for (let i = 0; i + 1 < req.headers.length; i += 2) {
      if (i > 0) w.raw(",");
      w.string(req.headers[i]).raw(":[").string(req.headers[i + 1]).raw("]");
    }
    w.raw("}");
  }
  if (req.body.length > 0) w.raw(",\"body\":").string(req.body);
  w.raw("}");
  const b = String.UTF8.encode(w.toString());
  const resp = new Response();
  const n = hostHTTPRequest(changetype<usize>(b), <usize>b.byteLength);
  if (n < 0) { resp.errorKind = "invalid"; resp.errorMessage = "request outside memory"; return resp; }
  const buf = new ArrayBuffer(n);
  if (hostHTTPResponse(changetype<usize>(buf), <usize>n) != n) {
    resp.errorKind = "invalid"; resp.errorMessage = "the host held no response"; return resp;
  }
  const v = parse(String.UTF8.decode(buf));
  if (v == null || !v.isObject()) { resp.errorKind = "invalid"; resp.errorMessage = "unreadable response JSON"; return resp; }
  const e = v.get("error");
  if (e != null && e.isObject()) {
    resp.errorKind = str(e.get("kind"));
    resp.errorGrant = str(e.get("grant"));
    resp.errorMessage = str(e.get("message"));
  }
  const st = v.get("status");
  if (st != null && st.isNumber()) resp.status = <i32>st.n;
  resp.body = str(v.get("body"));
  resp.bodyBase64 = str(v.get("body_base64"));
  resp.url = str(v.get("url"));
  const h = v.get("headers");
  if (h != null && h.isObject()) resp.headers = h;
  let ra = v.get("retry_after_ms");
  if (ra == null) ra = e != null ? e.get("retry_after_ms") : null;
  if (ra != null && ra.isNumber()) resp.retryAfterMs = <i64>ra.n;
  return resp;
}

/** fetch of a GET. */
export function get(url: string): Response { return fetch(new Request(url)); }

function str(v: Value | null): string { return v != null && v.isString() ? v.s : ""; }

// ---- argument helpers ----

/** The string member key of args, or def when absent. null when present but not a string. */
export function argString(args: Value, key: string, def: string | null = null): string | null {
  const v = args.get(key);
  if (v == null) return def;
  return v.isString() ? v.s : null;
}

// ---- input requests (toolhost_v1.input; docs/ABI.md, "Input requests") ----

@external("toolhost_v1", "input")
declare function hostInput(ptr: usize, len: usize): i32;

/** Asks the user before the tool goes on: requestsJson is a JSON object of requests by id, each {"mode": "form", "message", "schema"} or {"mode": "url", "message", "url"}; state comes back with the answers. The host asks through the MCP client and calls the tool again with the same arguments, where answers() has them. */
export function askInput(requestsJson: string, state: string = ""): Outcome {
  const o = new Outcome(); o.kind = "input"; o.input = requestsJson; o.state = state; return o;
}

/** Asks the user to confirm message (one checkbox, id "confirm"); confirmed() reads the answer. */
export function askConfirm(message: string): Outcome {
  return askInput("{\"confirm\":{\"mode\":\"form\",\"message\":" + quote(message) +
    ",\"schema\":{\"type\":\"object\",\"properties\":{\"confirm\":{\"type\":\"boolean\",\"title\":\"Confirm\"}},\"required\":[\"confirm\"]}}}");
}

/** This call's {"state", "responses"} when it answers the tool's input request; null on a first call. */
export function answers(): Value | null {
  const n = hostInput(0, 0);
  if (n <= 0) return null;
  const buf = new ArrayBuffer(n);
  if (hostInput(changetype<usize>(buf), <usize>n) != n) return null;
  const v = parse(String.UTF8.decode(buf));
  return v != null && v.isObject() ? v : null;
}

/** askConfirm's answer: 1 accepted and checked, 0 declined, cancelled or unchecked, -1 no answer yet (ask first). */
export function confirmed(): i32 {
  const r = answers();
  if (r == null) return -1;
  const resp = r.get("responses");
  const a = resp != null ? resp.get("confirm") : null;
  if (a == null) return 0;
  const action = a.get("action");
  const content = a.get("content");
  const box = content != null ? content.get("confirm") : null;
  return action != null && action.isString() && action.s == "accept" && box != null && box.kind == Kind.Bool && box.b ? 1 : 0;
}
