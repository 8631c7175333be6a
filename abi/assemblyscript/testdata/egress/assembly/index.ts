// A test module for the SDK's egress and progress (TestASEgress):
// as.fetch GETs its url through toolhost_v1 and returns the status and
// body, or the Outcome the SDK makes of a refusal or a 429/503.
import { Tool, Value, Outcome, register, ok, schemaError, progress, get } from "../../../assembly/index";
export * from "../../../assembly/exports";

const t = new Tool();
t.name = "as.fetch";
t.inputSchema = `{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`;
register(t, (args: Value): Outcome => {
  const u = args.get("url");
  if (u == null || !u.isString()) return schemaError("url must be a string");
  progress(1, 2, "fetching");
  const r = get(u.s);
  const f = r.failure();
  if (f != null) return f;
  return ok(Value.object().set("status", Value.number(<f64>r.status)).set("body", Value.string(r.body)).set("type", Value.string(r.header("content-type"))));
});
