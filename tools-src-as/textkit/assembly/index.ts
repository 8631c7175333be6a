// textkit: string and list tools in AssemblyScript, on abi/assemblyscript.
// Beside them it offers the rules it follows as a resource
// (textkit://rules) and a prompt (textkit.group) that tallies a list the
// way textkit.uniq does before it asks a model to group the values.
import {
  Tool, Value, Outcome, Level, register, ok, schemaError, log,
  Resource, Prompt, Uri, Contents, Message, contents, promptResult, registerResource, registerPrompt,
} from "../../../abi/assemblyscript/assembly/index";
export * from "../../../abi/assemblyscript/assembly/exports";

// textkit.slug: a URL slug of a title (lower case ASCII letters and
// digits, other runs made one dash), at most max_len characters.
const slug = new Tool();
slug.name = "textkit.slug";
slug.title = "Slugify";
slug.description = "Makes a URL slug of a text: lower-case letters and digits, runs of anything else one dash, cut at max_len.";
slug.inputSchema = `{"type":"object","properties":{"text":{"type":"string"},"max_len":{"type":"integer","minimum":1,"maximum":200}},"required":["text"]}`;
slug.outputSchema = `{"type":"object","properties":{"slug":{"type":"string"},"cut":{"type":"boolean"}},"required":["slug","cut"]}`;
slug.idempotent = true;
slug.readOnly = true;
slug.instances = "reuse";
slug.timeoutMs = 2000;
register(slug, (args: Value): Outcome => {
  const t = args.get("text");
  if (t == null || !t.isString()) return schemaError("text must be a string");
  let max = 80;
  const m = args.get("max_len");
  if (m != null) {
    if (!m.isNumber() || m.n < 1 || m.n > 200 || m.n != Math.floor(m.n)) return schemaError("max_len must be an integer from 1 to 200");
    max = <i32>m.n;
  }
  const s = t.s.toLowerCase();
  const parts: string[] = [];
  let dash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)) {
      if (dash && parts.length > 0) parts.push("-");
      dash = false;
      parts.push(String.fromCharCode(c));
    } else {
      dash = true;
    }
  }
  let out = parts.join("");
  if (out.length == 0) return schemaError("text has no letters or digits to make a slug of");
  let cut = false;
  if (out.length > max) {
    out = out.substring(0, max);
    while (out.endsWith("-")) out = out.substring(0, out.length - 1);
    cut = true;
    log(Level.Info, "slug cut at " + max.toString() + " characters");
  }
  return ok(Value.object().set("slug", Value.string(out)).set("cut", Value.bool(cut)));
});

// textkit.uniq: the distinct strings of a list, sorted, with counts.
const uniq = new Tool();
uniq.name = "textkit.uniq";
uniq.title = "Distinct strings";
uniq.description = "Returns the distinct strings of a list with how often each occurs, sorted ascending or by count (most first).";
uniq.inputSchema = `{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"},"maxItems":100000},"order":{"enum":["alpha","count"]},"ignore_case":{"type":"boolean"}},"required":["items"]}`;
uniq.outputSchema = `{"type":"object","properties":{"total":{"type":"integer"},"distinct":{"type":"array","items":{"type":"object","properties":{"value":{"type":"string"},"count":{"type":"integer"}}}}},"required":["total","distinct"]}`;
uniq.idempotent = true;
uniq.readOnly = true;
uniq.instances = "reuse";
register(uniq, (args: Value): Outcome => {
  const items = args.get("items");
  if (items == null || !items.isArray()) return schemaError("items must be an array of strings");
  let byCount = false;
  const order = args.get("order");
  if (order != null) {
    if (!order.isString() || (order.s != "alpha" && order.s != "count")) return schemaError("order must be \"alpha\" or \"count\"");
    byCount = order.s == "count";
  }
  const ic = args.get("ignore_case");
  const fold = ic != null && ic.b;
  const values: string[] = [];
  for (let i = 0; i < items.items.length; i++) {
    const it = items.items[i];
    if (!it.isString()) return schemaError("items[" + i.toString() + "] is not a string");
    values.push(it.s);
  }
  const t = tally(values, fold, byCount);
  const keys = t.keys;
  const n = t.counts;
  const list = Value.array();
  for (let i = 0; i < keys.length; i++) {
    list.push(Value.object().set("value", Value.string(keys[i])).set("count", Value.number(<f64>n[i])));
  }
  log(Level.Debug, keys.length.toString() + " distinct of " + items.items.length.toString());
  return ok(Value.object().set("total", Value.number(<f64>items.items.length)).set("distinct", list));
});

// A tally of distinct strings: keys ascending, or by count (most first,
// ties in alphabetical order), with their counts.
class Tally {
  keys: string[] = [];
  counts: i32[] = [];
}

function tally(values: string[], fold: bool, byCount: bool): Tally {
  const counts = new Map<string, i32>();
  for (let i = 0; i < values.length; i++) {
    const k = fold ? values[i].toLowerCase() : values[i];
    counts.set(k, counts.has(k) ? counts.get(k) + 1 : 1);
  }
  const keys = counts.keys();
  keys.sort((a: string, b: string): i32 => a < b ? -1 : a > b ? 1 : 0);
  const n = new Array<i32>(keys.length);
  for (let i = 0; i < keys.length; i++) n[i] = counts.get(keys[i]);
  if (byCount) {
    // By count, most first; a stable insertion sort keeps ties in alphabetical order.
    for (let i = 1; i < keys.length; i++) {
      const k = keys[i]; const c = n[i];
      let j = i - 1;
      while (j >= 0 && n[j] < c) { keys[j + 1] = keys[j]; n[j + 1] = n[j]; j--; }
      keys[j + 1] = k; n[j + 1] = c;
    }
  }
  const t = new Tally();
  t.keys = keys;
  t.counts = n;
  return t;
}

// textkit://rules: what the tools do with text, for a client or a model
// to read before it calls them.
const rules = new Resource("textkit://rules", "rules");
rules.title = "How textkit treats text";
rules.description = "The rules of textkit.slug and textkit.uniq.";
rules.mimeType = "text/plain";
registerResource(rules, (uri: Uri): Outcome => contents([Contents.text(uri.uri,
  "textkit.slug lowercases the text, keeps the ASCII letters and digits, makes every run of anything else one dash " +
  "(none at either end), and cuts the slug at max_len characters (default 80) without a dash at its end.\n" +
  "textkit.uniq counts each distinct string of a list exactly (ignore_case: after lowercasing), and orders them " +
  "alphabetically by UTF-16 code units, or by count, most frequent first and ties alphabetically.\n", "text/plain")]));

// textkit.group: the distinct lines of a list with their counts, then
// the request to group them.
const group = new Prompt("textkit.group");
group.title = "Group a list";
group.description = "Asks for a list's values to be grouped into categories, with the distinct values counted first.";
group.argument("lines", "the values, one a line", true).argument("ignore_case", "\"true\" to count values that differ only in case as one");
registerPrompt(group, (args: Value): Outcome => {
  const lines = args.get("lines");
  if (lines == null) return schemaError("the argument lines is required");
  const ic = args.get("ignore_case");
  if (ic != null && ic.s != "true" && ic.s != "false") return schemaError("ignore_case must be \"true\" or \"false\"");
  const values: string[] = [];
  const raw = lines.s.split("\n");
  for (let i = 0; i < raw.length; i++) {
    const v = raw[i].trim();
    if (v.length > 0) values.push(v);
  }
  if (values.length == 0) return schemaError("lines holds no values");
  const t = tally(values, ic != null && ic.s == "true", true);
  const parts: string[] = [];
  for (let i = 0; i < t.keys.length; i++) parts.push("- " + t.keys[i] + " (" + t.counts[i].toString() + ")");
  return promptResult([Message.user(
    "These " + values.length.toString() + " values hold " + t.keys.length.toString() + " distinct ones, most frequent first:\n" +
    parts.join("\n") + "\n\nGroup the distinct values into a few categories. Name each category and list its values " +
    "with their counts; put a value that fits none under \"other\".")],
    "group " + t.keys.length.toString() + " distinct values");
});
