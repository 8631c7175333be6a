// A test module for the SDK's input requests (TestInputFromASGuest):
// as.confirm asks for confirmation and answers what confirmed() said;
// as.state asks with a state and echoes what answers() gave back.
import { Tool, Value, Outcome, register, ok, askConfirm, askInput, answers, confirmed } from "../../../assembly/index";
export * from "../../../assembly/exports";

const c = new Tool();
c.name = "as.confirm";
register(c, (args: Value): Outcome => {
  const yes = confirmed();
  if (yes < 0) return askConfirm("Delete \"it\"?");
  return ok(Value.bool(yes == 1));
});

const s = new Tool();
s.name = "as.state";
register(s, (args: Value): Outcome => {
  const r = answers();
  if (r == null) return askInput(`{"login":{"mode":"url","message":"Sign in","url":"https://example.com/login"}}`, "step \"2\"");
  const st = r.get("state");
  const resp = r.get("responses");
  const login = resp != null ? resp.get("login") : null;
  const action = login != null ? login.get("action") : null;
  return ok(Value.object()
    .set("action", Value.string(action != null && action.isString() ? action.s : ""))
    .set("state", Value.string(st != null && st.isString() ? st.s : "")));
});
