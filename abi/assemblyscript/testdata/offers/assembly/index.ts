// A test module for the SDK's resources and prompts beyond textkit's
// (TestASGuestDynamicOffers): a template whose variables the handler
// reads, a binary content, and offers listed by code.
import {
  Tool, Value, Outcome, register, ok, schemaError,
  Resource, ResourceTemplate, Prompt, Uri, Contents, Message,
  contents, promptResult, listing, registerResource, registerResourceTemplate, setDynamic, setModuleTimeout,
} from "../../../assembly/index";
export * from "../../../assembly/exports";

const echo = new Tool();
echo.name = "asoffers.echo";
register(echo, (args: Value): Outcome => ok(args));

setModuleTimeout(3000);

const logo = new Resource("asoffers://logo", "logo");
logo.mimeType = "image/png";
logo.size = 5;
registerResource(logo, (uri: Uri): Outcome => {
  const b = new Uint8Array(5);
  b[0] = 0x89; b[1] = 0x50; b[2] = 0x4e; b[3] = 0x47; b[4] = 0x0d;
  return contents([Contents.blob(uri.uri, b, "image/png")]);
});

registerResourceTemplate(new ResourceTemplate("asoffers://day/{date}/{+rest}", "day"), (uri: Uri): Outcome => {
  const d = uri.variable("date");
  const r = uri.variable("rest");
  if (d == null || r == null) return schemaError("no variables");
  return contents([Contents.text(uri.uri, "day " + d + ", then " + r)]);
});

setDynamic(
  (): Outcome => {
    const p = new Prompt("asoffers.later");
    p.argument("who", "", true);
    return listing([new Resource("asoffers://later", "later")], [], [p]);
  },
  (uri: Uri): Outcome => uri.uri == "asoffers://later" ? contents([Contents.text(uri.uri, "listed by code")]) : schemaError("no resource " + uri.uri),
  (name: string, args: Value): Outcome => {
    const who = args.get("who");
    return promptResult([Message.user("hello " + (who != null ? who.s : "?")), Message.assistant("hi")], name);
  },
);
