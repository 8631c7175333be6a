// textkit: string and list tools in AssemblyScript, on abi/assemblyscript.
import {
  Tool, Value, Outcome, Level, register, ok, schemaError, log,
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
  const counts = new Map<string, i32>();
  for (let i = 0; i < items.items.length; i++) {
    const it = items.items[i];
    if (!it.isString()) return schemaError("items[" + i.toString() + "] is not a string");
    const k = fold ? it.s.toLowerCase() : it.s;
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
  const list = Value.array();
  for (let i = 0; i < keys.length; i++) {
    list.push(Value.object().set("value", Value.string(keys[i])).set("count", Value.number(<f64>n[i])));
  }
  log(Level.Debug, keys.length.toString() + " distinct of " + items.items.length.toString());
  return ok(Value.object().set("total", Value.number(<f64>items.items.length)).set("distinct", list));
});
