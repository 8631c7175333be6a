// Resources and prompts (docs/ABI.md, "Resources and prompts"): what a
// module offers beside its tools. Static ones are registered at top
// level, like tools, and listed in the manifest; setDynamic lists more by
// code. The host reads a resource and gets a prompt by calling the module
// under the reserved names "resources/read" and "prompts/get" (and
// "offers/list" for dynamic ones), which no tool can have; the SDK routes
// them to the handlers here and writes MCP's shapes, so a handler returns
// contents([...]) or promptResult([...]) and never writes JSON.
import { Value, Writer } from "./json";
import { Outcome, ok, schemaError, internalError } from "./index";

/** A resource's listing (MCP Resource). Its URI is its identity. */
export class Resource {
  uri: string;
  name: string;
  title: string = "";
  description: string = "";
  mimeType: string = "";
  /** The raw size in bytes; -1 for unknown. */
  size: i64 = -1;
  constructor(uri: string = "", name: string = "") { this.uri = uri; this.name = name; }
}

/** A family of resources (MCP ResourceTemplate): an RFC 6570 template such as "notes://day/{date}". */
export class ResourceTemplate {
  uriTemplate: string;
  name: string;
  title: string = "";
  description: string = "";
  mimeType: string = "";
  constructor(uriTemplate: string = "", name: string = "") { this.uriTemplate = uriTemplate; this.name = name; }
}

/** One string argument of a prompt. */
export class PromptArgument {
  name: string = "";
  description: string = "";
  required: bool = false;
}

/** A prompt's listing (MCP Prompt); its name follows the rules of tool names. */
export class Prompt {
  name: string;
  title: string = "";
  description: string = "";
  arguments: PromptArgument[] = [];
  constructor(name: string = "") { this.name = name; }
  /** Adds an argument; the host refuses a get without a required one before it calls the module. */
  argument(name: string, description: string = "", required: bool = false): Prompt {
    const a = new PromptArgument();
    a.name = name; a.description = description; a.required = required;
    this.arguments.push(a);
    return this;
  }
}

/** The URI a read is for, with the values its template's variables matched (none for a static resource). */
export class Uri {
  uri: string;
  names: string[] = [];
  values: string[] = [];
  constructor(uri: string) { this.uri = uri; }
  /** The value of the template's variable name as it appears in the URI (not percent-decoded), or null. */
  variable(name: string): string | null {
    for (let i = 0; i < this.names.length; i++) if (this.names[i] == name) return this.values[i];
    return null;
  }
}

/** One item of a read's result: text, or bytes the SDK sends as base64. */
export class Contents {
  uri: string = "";
  mimeType: string = "";
  text: string = "";
  blob: Uint8Array | null = null;
  /** Text content of the resource uri. */
  static text(uri: string, text: string, mimeType: string = ""): Contents {
    const c = new Contents(); c.uri = uri; c.text = text; c.mimeType = mimeType; return c;
  }
  /** Binary content of the resource uri. */
  static blob(uri: string, data: Uint8Array, mimeType: string = ""): Contents {
    const c = new Contents(); c.uri = uri; c.blob = data; c.mimeType = mimeType; return c;
  }
}

/** One message of a prompt: role "user" or "assistant", content an MCP content block. */
export class Message {
  role: string;
  content: Value;
  constructor(role: string, content: Value) { this.role = role; this.content = content; }
  static user(text: string): Message { return new Message("user", textBlock(text)); }
  static assistant(text: string): Message { return new Message("assistant", textBlock(text)); }
}

function textBlock(text: string): Value {
  return Value.object().set("type", Value.string("text")).set("text", Value.string(text));
}

/** A read's result: one or more contents. */
export function contents(items: Contents[]): Outcome {
  const list = Value.array();
  for (let i = 0; i < items.length; i++) {
    const c = items[i];
    const o = Value.object().set("uri", Value.string(c.uri));
    if (c.mimeType.length > 0) o.set("mimeType", Value.string(c.mimeType));
    const b = c.blob;
    if (b != null) o.set("blob", Value.string(base64(b)));
    else o.set("text", Value.string(c.text));
    list.push(o);
  }
  return ok(Value.object().set("contents", list));
}

/** A prompt's result: its messages in order, and a description ("" for none). */
export function promptResult(messages: Message[], description: string = ""): Outcome {
  const list = Value.array();
  for (let i = 0; i < messages.length; i++) {
    list.push(Value.object().set("role", Value.string(messages[i].role)).set("content", messages[i].content));
  }
  const o = Value.object();
  if (description.length > 0) o.set("description", Value.string(description));
  return ok(o.set("messages", list));
}

/** A dynamic listing's result: what the module offers beside its manifest. */
export function listing(resources: Resource[], templates: ResourceTemplate[] = [], prompts: Prompt[] = []): Outcome {
  const o = Value.object();
  listInto(o, resources, templates, prompts);
  return ok(o);
}

/** A resource's or a template's read handler. */
export type ReadHandler = (uri: Uri) => Outcome;
/** A prompt's handler: args is the object of its string arguments. */
export type PromptHandler = (args: Value) => Outcome;
/** A dynamic prompt's handler: its name and arguments. */
export type DynamicPromptHandler = (name: string, args: Value) => Outcome;
/** A dynamic listing: listing(...) or an error. */
export type ListHandler = () => Outcome;

const resources: Resource[] = [];
const resourceReads: ReadHandler[] = [];
const templates: ResourceTemplate[] = [];
const templateReads: ReadHandler[] = [];
const prompts: Prompt[] = [];
const promptGets: PromptHandler[] = [];
let dynamic = false;
let dynamicList: ListHandler = (): Outcome => listing([]);
let dynamicRead: ReadHandler = (uri: Uri): Outcome => schemaError("this module has no resource " + uri.uri);
let dynamicGet: DynamicPromptHandler = (name: string, args: Value): Outcome => schemaError("this module has no prompt " + name);
let moduleTimeoutMs: i32 = 0;

/** Offers the resource r, read by read; call at top level of the module. */
export function registerResource(r: Resource, read: ReadHandler): void { resources.push(r); resourceReads.push(read); }

/**
 * Offers the resources whose URIs t matches, read by read, which finds the
 * variables in its Uri. Matching is the Go SDK's: literal text matches
 * itself, an expression a run of characters without '/' ({+x}, {/x} and
 * {#x}: with). A static resource's URI is looked up first.
 */
export function registerResourceTemplate(t: ResourceTemplate, read: ReadHandler): void { templates.push(t); templateReads.push(read); }

/** Offers the prompt p, filled in by get. */
export function registerPrompt(p: Prompt, get: PromptHandler): void { prompts.push(p); promptGets.push(get); }

/**
 * Declares dynamic offers ("dynamic_offers": true): the host calls list
 * once each version of the module serves, and routes reads and gets of
 * what it listed to read and get. An instance keeps nothing between calls.
 */
export function setDynamic(list: ListHandler, read: ReadHandler, get: DynamicPromptHandler): void {
  dynamic = true; dynamicList = list; dynamicRead = read; dynamicGet = get;
}

/** The module's default timeout in ms (the manifest's top-level timeout_ms): of tools that set none, and of every read, get and listing. */
export function setModuleTimeout(ms: i32): void { moduleTimeoutMs = ms; }

/** Writes the manifest's offer fields (each after a comma), for manifest(). */
export function describeOffers(w: Writer): void {
  if (moduleTimeoutMs > 0) w.raw(",\"timeout_ms\":").number(<f64>moduleTimeoutMs);
  const o = Value.object();
  listInto(o, resources, templates, prompts);
  for (let i = 0; i < o.keys.length; i++) w.raw(",").string(o.keys[i]).raw(":").value(o.items[i]);
  if (dynamic) w.raw(",\"dynamic_offers\":true");
}

function listInto(o: Value, rs: Resource[], ts: ResourceTemplate[], ps: Prompt[]): void {
  if (rs.length > 0) {
    const a = Value.array();
    for (let i = 0; i < rs.length; i++) {
      const r = rs[i];
      const v = Value.object().set("uri", Value.string(r.uri)).set("name", Value.string(r.name));
      human(v, r.title, r.description, r.mimeType);
      if (r.size >= 0) v.set("size", Value.number(<f64>r.size));
      a.push(v);
    }
    o.set("resources", a);
  }
  if (ts.length > 0) {
    const a = Value.array();
    for (let i = 0; i < ts.length; i++) {
      const v = Value.object().set("uriTemplate", Value.string(ts[i].uriTemplate)).set("name", Value.string(ts[i].name));
      human(v, ts[i].title, ts[i].description, ts[i].mimeType);
      a.push(v);
    }
    o.set("resource_templates", a);
  }
  if (ps.length > 0) {
    const a = Value.array();
    for (let i = 0; i < ps.length; i++) {
      const p = ps[i];
      const v = Value.object().set("name", Value.string(p.name));
      human(v, p.title, p.description, "");
      if (p.arguments.length > 0) {
        const args = Value.array();
        for (let j = 0; j < p.arguments.length; j++) {
          const pa = p.arguments[j];
          const x = Value.object().set("name", Value.string(pa.name));
          if (pa.description.length > 0) x.set("description", Value.string(pa.description));
          if (pa.required) x.set("required", Value.bool(true));
          args.push(x);
        }
        v.set("arguments", args);
      }
      a.push(v);
    }
    o.set("prompts", a);
  }
}

function human(v: Value, title: string, description: string, mimeType: string): void {
  if (title.length > 0) v.set("title", Value.string(title));
  if (description.length > 0) v.set("description", Value.string(description));
  if (mimeType.length > 0) v.set("mimeType", Value.string(mimeType));
}

/** Whether name is one of the reserved call names. */
export function isOfferCall(name: string): bool {
  return name == "resources/read" || name == "prompts/get" || name == "offers/list";
}

/** Serves a reserved call with its arguments (an object). */
export function dispatchOffer(name: string, args: Value): Outcome {
  if (name == "offers/list") return dynamicList();
  if (name == "prompts/get") {
    const n = args.get("name");
    if (n == null || !n.isString()) return schemaError("prompts/get: name must be a string");
    let a = args.get("arguments");
    if (a == null || !a.isObject()) a = Value.object();
    for (let i = 0; i < a.items.length; i++) {
      if (!a.items[i].isString()) return schemaError("prompts/get: argument " + a.keys[i] + " is not a string");
    }
    for (let i = 0; i < prompts.length; i++) if (prompts[i].name == n.s) return promptGets[i](a);
    return dynamicGet(n.s, a);
  }
  const u = args.get("uri");
  if (u == null || !u.isString()) return schemaError("resources/read: uri must be a string");
  const uri = new Uri(u.s);
  let o: Outcome | null = null;
  for (let i = 0; i < resources.length && o == null; i++) if (resources[i].uri == uri.uri) o = resourceReads[i](uri);
  for (let i = 0; i < templates.length && o == null; i++) {
    if (matchTemplate(templates[i].uriTemplate, uri.uri, uri)) o = templateReads[i](uri);
  }
  if (o == null) o = dynamicRead(uri);
  const res = o.result;
  if (o.kind.length == 0 && res != null) {
    const c = res.get("contents");
    if (c == null || !c.isArray() || c.items.length == 0) return internalError("the read of " + uri.uri + " returned no contents");
  }
  return o;
}

/**
 * Reports whether uri is one of tmpl's URIs, adding the values of its
 * expressions to into: each expression takes the longest run that lets
 * the rest match (as matchTemplate in abi/guest).
 */
export function matchTemplate(tmpl: string, uri: string, into: Uri): bool {
  const open = tmpl.indexOf("{");
  if (open < 0) return tmpl == uri;
  if (!uri.startsWith(tmpl.substring(0, open))) return false;
  const close = tmpl.indexOf("}", open);
  if (close < 0) return false;
  let expr = tmpl.substring(open + 1, close);
  const slash = expr.startsWith("+") || expr.startsWith("/") || expr.startsWith("#");
  if (expr.length > 0 && "+#./;?&".includes(expr.charAt(0))) expr = expr.substring(1);
  const tail = uri.substring(open);
  const rest = tmpl.substring(close + 1);
  const mark = into.names.length;
  for (let i = tail.length; i >= 0; i--) {
    const val = tail.substring(0, i);
    if (!slash && val.includes("/")) continue;
    into.names.push(expr);
    into.values.push(val);
    if (matchTemplate(rest, tail.substring(i), into)) return true;
    into.names.length = mark;
    into.values.length = mark;
  }
  return false;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64(b: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < b.length; i += 3) {
    const n = b.length - i;
    const v: u32 = (<u32>b[i] << 16) | (n > 1 ? <u32>b[i + 1] << 8 : 0) | (n > 2 ? <u32>b[i + 2] : 0);
    parts.push(B64.charAt(v >> 18) + B64.charAt((v >> 12) & 63) + (n > 1 ? B64.charAt((v >> 6) & 63) : "=") + (n > 2 ? B64.charAt(v & 63) : "="));
  }
  return parts.join("");
}
