//! Resources and prompts (docs/ABI.md, "Resources and prompts"): what a
//! module offers beside its tools. Static ones are listed in the manifest
//! ([`Module::resource`](crate::Module::resource),
//! [`Module::resource_template`](crate::Module::resource_template),
//! [`Module::prompt`](crate::Module::prompt)); a module that lists more by
//! code sets [`Module::dynamic`](crate::Module::dynamic). The host reads a
//! resource and gets a prompt by calling the module under the reserved
//! names `resources/read` and `prompts/get` (and lists dynamic offers with
//! `offers/list`), which no tool can have; the SDK routes those calls to the
//! handlers here and writes the MCP shapes, so a handler returns
//! [`Contents`] or a [`PromptResult`] and never writes JSON.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::{valid_name, Call, Error};

/// The string arguments of a prompt, by name. The host has checked that
/// every required one is present.
pub type PromptArgs = BTreeMap<String, String>;

/// The URI a read is for, and the values of its template's variables
/// (none for a static resource).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uri {
    uri: String,
    vars: Vec<(String, String)>,
}

impl Uri {
    /// A URI without variables (for native tests of a handler).
    pub fn new(uri: &str) -> Uri {
        Uri {
            uri: uri.to_string(),
            vars: Vec::new(),
        }
    }
    /// The URI itself.
    pub fn as_str(&self) -> &str {
        &self.uri
    }
    /// The value the template's variable `name` matched, as it appears in
    /// the URI (not percent-decoded); for `{a,b}` the name is `a,b`.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One item of a read's result: text, or binary data that the SDK sends
/// as base64.
#[derive(Debug, Clone, PartialEq)]
pub struct Contents {
    uri: String,
    mime_type: Option<String>,
    text: Option<String>,
    blob: Option<Vec<u8>>,
}

impl Contents {
    /// Text content of the resource `uri`.
    pub fn text(uri: &str, text: impl Into<String>) -> Contents {
        Contents {
            uri: uri.to_string(),
            mime_type: None,
            text: Some(text.into()),
            blob: None,
        }
    }
    /// Binary content of the resource `uri`.
    pub fn blob(uri: &str, data: impl Into<Vec<u8>>) -> Contents {
        Contents {
            uri: uri.to_string(),
            mime_type: None,
            text: None,
            blob: Some(data.into()),
        }
    }
    /// The content's MIME type.
    pub fn mime_type(mut self, m: &str) -> Contents {
        self.mime_type = Some(m.to_string());
        self
    }
    fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("uri".into(), Value::from(self.uri.as_str()));
        if let Some(m) = &self.mime_type {
            o.insert("mimeType".into(), Value::from(m.as_str()));
        }
        match (&self.text, &self.blob) {
            (Some(t), _) => o.insert("text".into(), Value::from(t.as_str())),
            (_, Some(b)) => o.insert("blob".into(), Value::from(base64(b))),
            _ => None,
        };
        Value::Object(o)
    }
}

/// One message of a prompt: a role (`user` or `assistant`) and an MCP
/// content block.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    role: &'static str,
    content: Value,
}

impl Message {
    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> Message {
        Message::with_content("user", json!({"type": "text", "text": text.into()}))
    }
    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> Message {
        Message::with_content("assistant", json!({"type": "text", "text": text.into()}))
    }
    /// A message with any MCP content block (an image, an embedded
    /// resource: `{"type": "resource", "resource": {...}}`).
    pub fn with_content(role: &'static str, content: Value) -> Message {
        Message { role, content }
    }
}

/// What a prompt handler returns: its messages, in order, and an optional
/// description.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptResult {
    description: Option<String>,
    messages: Vec<Message>,
}

impl PromptResult {
    /// A result of these messages.
    pub fn new(messages: Vec<Message>) -> PromptResult {
        PromptResult {
            description: None,
            messages,
        }
    }
    /// The result's description.
    pub fn description(mut self, d: impl Into<String>) -> PromptResult {
        self.description = Some(d.into());
        self
    }
    /// Adds a message.
    pub fn message(mut self, m: Message) -> PromptResult {
        self.messages.push(m);
        self
    }
    fn to_json(&self) -> Value {
        let messages: Vec<Value> = self
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect();
        let mut o = Map::new();
        if let Some(d) = &self.description {
            o.insert("description".into(), Value::from(d.as_str()));
        }
        o.insert("messages".into(), Value::Array(messages));
        Value::Object(o)
    }
}

macro_rules! spec_setters {
    ($t:ident) => {
        impl $t {
            fn set(mut self, key: &str, v: Value) -> $t {
                self.spec.insert(key.into(), v);
                self
            }
            /// A short human-readable name.
            pub fn title(self, title: &str) -> $t {
                self.set("title", Value::from(title))
            }
            /// What it is; clients and models read it.
            pub fn description(self, d: &str) -> $t {
                self.set("description", Value::from(d))
            }
            /// Adds an MCP icon object (`{"src": "https://…"}`).
            pub fn icon(mut self, icon: Value) -> $t {
                crate::push_icon(&mut self.spec, icon);
                self
            }
            /// The manifest entry.
            pub fn to_json(&self) -> Value {
                Value::Object(self.spec.clone())
            }
        }
    };
}

/// A resource's listing (MCP Resource): its URI is its identity, unique
/// across the plugins folder and matched by access rules.
#[derive(Debug, Clone)]
pub struct Resource {
    spec: Map<String, Value>,
}
spec_setters!(Resource);

impl Resource {
    /// The resource `uri` (absolute: `notes://todo`), called `name`.
    pub fn new(uri: &str, name: &str) -> Resource {
        let mut spec = Map::new();
        spec.insert("uri".into(), Value::from(uri));
        spec.insert("name".into(), Value::from(name));
        Resource { spec }
    }
    /// The MIME type of its contents.
    pub fn mime_type(self, m: &str) -> Resource {
        self.set("mimeType", Value::from(m))
    }
    /// Its raw size in bytes, if known.
    pub fn size(self, n: u64) -> Resource {
        self.set("size", Value::from(n))
    }
    fn uri(&self) -> &str {
        self.spec["uri"].as_str().unwrap_or("")
    }
}

/// A family of resources (MCP ResourceTemplate): an RFC 6570 template
/// such as `notes://day/{date}`. The SDK matches a read's URI as the Go
/// SDK does: literal text matches itself, an expression a run of
/// characters without `/` (`{+x}`, `{/x}` and `{#x}`: with).
#[derive(Debug, Clone)]
pub struct ResourceTemplate {
    spec: Map<String, Value>,
}
spec_setters!(ResourceTemplate);

impl ResourceTemplate {
    /// The template `uri_template`, called `name`.
    pub fn new(uri_template: &str, name: &str) -> ResourceTemplate {
        let mut spec = Map::new();
        spec.insert("uriTemplate".into(), Value::from(uri_template));
        spec.insert("name".into(), Value::from(name));
        ResourceTemplate { spec }
    }
    /// The MIME type of its resources' contents.
    pub fn mime_type(self, m: &str) -> ResourceTemplate {
        self.set("mimeType", Value::from(m))
    }
    fn template(&self) -> &str {
        self.spec["uriTemplate"].as_str().unwrap_or("")
    }
}

/// A prompt's listing (MCP Prompt). Its name follows the rules of tool
/// names and is unique across the plugins folder.
#[derive(Debug, Clone)]
pub struct Prompt {
    spec: Map<String, Value>,
}
spec_setters!(Prompt);

impl Prompt {
    /// The prompt `name`. Panics (at describe) on a name that does not
    /// match `^[A-Za-z0-9_.-]{1,128}$`.
    pub fn new(name: &str) -> Prompt {
        assert!(valid_name(name), "toolhost: invalid prompt name {:?}", name);
        let mut spec = Map::new();
        spec.insert("name".into(), Value::from(name));
        Prompt { spec }
    }
    /// Adds a string argument; the host refuses a get without a required
    /// one before it calls the module.
    pub fn argument(mut self, name: &str, description: &str, required: bool) -> Prompt {
        let mut a = Map::new();
        a.insert("name".into(), Value::from(name));
        if !description.is_empty() {
            a.insert("description".into(), Value::from(description));
        }
        if required {
            a.insert("required".into(), Value::Bool(true));
        }
        let args = self
            .spec
            .entry("arguments")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(v) = args {
            v.push(Value::Object(a));
        }
        self
    }
    fn name(&self) -> &str {
        self.spec["name"].as_str().unwrap_or("")
    }
}

/// What a module lists by code (the result of [`Dynamic`]'s list).
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Resources beside the manifest's.
    pub resources: Vec<Resource>,
    /// Resource templates beside the manifest's.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Prompts beside the manifest's.
    pub prompts: Vec<Prompt>,
}

impl Listing {
    fn to_json(&self) -> Value {
        let mut o = Map::new();
        let mut put = |k: &str, v: Vec<Value>| {
            if !v.is_empty() {
                o.insert(k.into(), Value::Array(v));
            }
        };
        put(
            "resources",
            self.resources.iter().map(Resource::to_json).collect(),
        );
        put(
            "resource_templates",
            self.resource_templates
                .iter()
                .map(ResourceTemplate::to_json)
                .collect(),
        );
        put(
            "prompts",
            self.prompts.iter().map(Prompt::to_json).collect(),
        );
        Value::Object(o)
    }
}

/// A resource's or a template's read handler.
pub(crate) type ReadFn = Box<dyn Fn(&mut Call, &Uri) -> Result<Vec<Contents>, Error>>;
/// A prompt's handler.
pub(crate) type PromptFn = Box<dyn Fn(&mut Call, &PromptArgs) -> Result<PromptResult, Error>>;
type ListFn = Box<dyn Fn(&mut Call) -> Result<Listing, Error>>;
type GetFn = Box<dyn Fn(&mut Call, &str, &PromptArgs) -> Result<PromptResult, Error>>;

/// What a module lists by code ("dynamic_offers": true): the host calls
/// the list function once each version of the module serves, and routes
/// the reads and gets of what it listed to `read` and `get`. An instance
/// keeps nothing between calls, so the list sees what every call sees:
/// the module's code and data, the clock, and egress if granted.
pub struct Dynamic {
    list: ListFn,
    read: Option<ReadFn>,
    get: Option<GetFn>,
}

impl Dynamic {
    /// Dynamic offers that `list` lists.
    pub fn new<F>(list: F) -> Dynamic
    where
        F: Fn(&mut Call) -> Result<Listing, Error> + 'static,
    {
        Dynamic {
            list: Box::new(list),
            read: None,
            get: None,
        }
    }
    /// Reads a resource the list listed (or one its templates match; the
    /// [`Uri`] has no variables here).
    pub fn read<F>(mut self, f: F) -> Dynamic
    where
        F: Fn(&mut Call, &Uri) -> Result<Vec<Contents>, Error> + 'static,
    {
        self.read = Some(Box::new(f));
        self
    }
    /// Fills in a prompt the list listed.
    pub fn get<F>(mut self, f: F) -> Dynamic
    where
        F: Fn(&mut Call, &str, &PromptArgs) -> Result<PromptResult, Error> + 'static,
    {
        self.get = Some(Box::new(f));
        self
    }
}

/// The offers of one module and their handlers.
#[derive(Default)]
pub(crate) struct Offers {
    pub(crate) resources: Vec<(Resource, ReadFn)>,
    pub(crate) templates: Vec<(ResourceTemplate, ReadFn)>,
    pub(crate) prompts: Vec<(Prompt, PromptFn)>,
    pub(crate) dynamic: Option<Dynamic>,
}

impl Offers {
    /// Adds the offers' fields to the manifest object.
    pub(crate) fn describe(&self, m: &mut Map<String, Value>) {
        let listing = Listing {
            resources: self.resources.iter().map(|r| r.0.clone()).collect(),
            resource_templates: self.templates.iter().map(|t| t.0.clone()).collect(),
            prompts: self.prompts.iter().map(|p| p.0.clone()).collect(),
        };
        if let Value::Object(o) = listing.to_json() {
            m.extend(o);
        }
        if self.dynamic.is_some() {
            m.insert("dynamic_offers".into(), Value::Bool(true));
        }
    }

    pub(crate) fn has_uri(&self, uri: &str) -> bool {
        self.resources.iter().any(|r| r.0.uri() == uri)
    }
    pub(crate) fn has_template(&self, t: &str) -> bool {
        self.templates.iter().any(|x| x.0.template() == t)
    }
    pub(crate) fn has_prompt(&self, name: &str) -> bool {
        self.prompts.iter().any(|p| p.0.name() == name)
    }

    /// Serves a reserved call: None for a tool's name.
    pub(crate) fn dispatch(
        &self,
        call: &mut Call,
        name: &str,
        args: &[u8],
    ) -> Option<Result<Vec<u8>, Error>> {
        let out = match name {
            "resources/read" => self.read(call, args),
            "prompts/get" => self.get(call, args),
            "offers/list" => match &self.dynamic {
                Some(d) => (d.list)(call).map(|l| l.to_json()),
                None => Ok(json!({})),
            },
            _ => return None,
        };
        Some(out.and_then(|v| {
            serde_json::to_vec(&v).map_err(|e| Error::internal(format!("encoding result: {}", e)))
        }))
    }

    fn read(&self, call: &mut Call, args: &[u8]) -> Result<Value, Error> {
        let a: Value = serde_json::from_slice(args)
            .map_err(|e| Error::schema(format!("resources/read: {}", e)))?;
        let uri = a["uri"]
            .as_str()
            .ok_or_else(|| Error::schema("resources/read: uri must be a string"))?;
        let contents = if let Some((_, read)) = self.resources.iter().find(|r| r.0.uri() == uri) {
            read(call, &Uri::new(uri))?
        } else if let Some((vars, read)) = self.templates.iter().find_map(|(t, read)| {
            let mut vars = Vec::new();
            match_template(t.template(), uri, &mut vars).then(|| (vars, read))
        }) {
            read(
                call,
                &Uri {
                    uri: uri.to_string(),
                    vars,
                },
            )?
        } else if let Some(read) = self.dynamic.as_ref().and_then(|d| d.read.as_ref()) {
            read(call, &Uri::new(uri))?
        } else {
            return Err(Error::schema(format!(
                "this module has no resource {:?}",
                uri
            )));
        };
        if contents.is_empty() {
            return Err(Error::internal(format!(
                "the read of {} returned no contents",
                uri
            )));
        }
        let items: Vec<Value> = contents.iter().map(Contents::to_json).collect();
        Ok(json!({ "contents": items }))
    }

    fn get(&self, call: &mut Call, args: &[u8]) -> Result<Value, Error> {
        let a: Value = serde_json::from_slice(args)
            .map_err(|e| Error::schema(format!("prompts/get: {}", e)))?;
        let name = a["name"]
            .as_str()
            .ok_or_else(|| Error::schema("prompts/get: name must be a string"))?;
        let mut pargs = PromptArgs::new();
        if let Some(o) = a["arguments"].as_object() {
            for (k, v) in o {
                let v = v.as_str().ok_or_else(|| {
                    Error::schema(format!("prompts/get: argument {:?} is not a string", k))
                })?;
                pargs.insert(k.clone(), v.to_string());
            }
        }
        let res = if let Some((_, get)) = self.prompts.iter().find(|p| p.0.name() == name) {
            get(call, &pargs)?
        } else if let Some(get) = self.dynamic.as_ref().and_then(|d| d.get.as_ref()) {
            get(call, name, &pargs)?
        } else {
            return Err(Error::schema(format!(
                "this module has no prompt {:?}",
                name
            )));
        };
        Ok(res.to_json())
    }
}

/// Reports whether `uri` is one of `tmpl`'s URIs, appending the values of
/// its expressions to `vars`: each expression takes the longest run that
/// lets the rest match (as `matchTemplate` in abi/guest).
pub(crate) fn match_template(tmpl: &str, uri: &str, vars: &mut Vec<(String, String)>) -> bool {
    let open = match tmpl.find('{') {
        Some(i) => i,
        None => return tmpl == uri,
    };
    if !uri.starts_with(&tmpl[..open]) {
        return false;
    }
    let close = match tmpl[open..].find('}') {
        Some(i) => open + i,
        None => return false,
    };
    let expr = &tmpl[open + 1..close];
    let slash = expr.starts_with(['+', '/', '#']);
    let name = expr.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
    let tail = &uri[open..];
    let mark = vars.len();
    for i in (0..=tail.len()).rev() {
        if !tail.is_char_boundary(i) || (!slash && tail[..i].contains('/')) {
            continue;
        }
        vars.push((name.to_string(), tail[..i].to_string()));
        if match_template(&tmpl[close + 1..], &tail[i..], vars) {
            return true;
        }
        vars.truncate(mark);
    }
    false
}

fn base64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity((b.len() + 2) / 3 * 4);
    for c in b.chunks(3) {
        let v = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        s.push(A[(v >> 18) as usize] as char);
        s.push(A[(v >> 12 & 63) as usize] as char);
        s.push(if c.len() > 1 {
            A[(v >> 6 & 63) as usize] as char
        } else {
            '='
        });
        s.push(if c.len() > 2 {
            A[(v & 63) as usize] as char
        } else {
            '='
        });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Module;

    fn module() -> Module {
        Module::new()
            .timeout_ms(2000)
            .resource(
                Resource::new("notes://todo", "todo").mime_type("text/plain"),
                |_, uri| {
                    Ok(vec![
                        Contents::text(uri.as_str(), "buy \"milk\"").mime_type("text/plain")
                    ])
                },
            )
            .resource(Resource::new("notes://logo", "logo"), |_, uri| {
                Ok(vec![Contents::blob(uri.as_str(), b"\x89PNG\r".to_vec())])
            })
            .resource(Resource::new("notes://empty", "empty"), |_, _| Ok(vec![]))
            .resource_template(
                ResourceTemplate::new("notes://day/{date}/{+rest}", "day"),
                |_, uri| {
                    let text = format!("{} {}", uri.var("date").unwrap(), uri.var("rest").unwrap());
                    Ok(vec![Contents::text(uri.as_str(), text)])
                },
            )
            .prompt(
                Prompt::new("review").argument("lang", "the language", true),
                |_, args| {
                    Ok(PromptResult::new(vec![Message::user(format!(
                        "Review this {} code.",
                        args["lang"]
                    ))])
                    .description(format!("review in {}", args["lang"]))
                    .message(Message::assistant("Paste it.")))
                },
            )
            .dynamic(
                Dynamic::new(|_| {
                    Ok(Listing {
                        resources: vec![Resource::new("memo://a", "a")],
                        ..Listing::default()
                    })
                })
                .read(|_, uri| Ok(vec![Contents::text(uri.as_str(), "memo")]))
                .get(|_, name, _| Ok(PromptResult::new(vec![Message::user(name.to_string())]))),
            )
    }

    fn json(b: &[u8]) -> Value {
        serde_json::from_slice(b).unwrap()
    }

    #[test]
    fn manifest_lists_the_offers() {
        let m = json(&module().manifest());
        assert_eq!(m["timeout_ms"], 2000);
        assert_eq!(m["dynamic_offers"], true);
        assert_eq!(
            m["resources"][0],
            json!({"uri": "notes://todo", "name": "todo", "mimeType": "text/plain"})
        );
        assert_eq!(
            m["resource_templates"][0]["uriTemplate"],
            "notes://day/{date}/{+rest}"
        );
        assert_eq!(
            m["prompts"][0],
            json!({"name": "review", "arguments": [{"name": "lang", "description": "the language", "required": true}]})
        );
        // A module without offers describes itself as before.
        assert_eq!(
            Module::new().manifest(),
            br#"{"abi":1,"tools":[]}"#.to_vec()
        );
    }

    #[test]
    fn reserved_calls_reach_the_handlers() {
        let m = module();
        for (name, args, want) in [
            (
                "resources/read",
                r#"{"uri":"notes://todo"}"#,
                json!({"result": {"contents": [{"uri": "notes://todo", "mimeType": "text/plain", "text": "buy \"milk\""}]}}),
            ),
            (
                "resources/read",
                r#"{"uri":"notes://logo"}"#,
                json!({"result": {"contents": [{"uri": "notes://logo", "blob": "iVBORw0="}]}}),
            ),
            (
                "resources/read",
                r#"{"uri":"notes://day/2026-12-02/a/b"}"#,
                json!({"result": {"contents": [{"uri": "notes://day/2026-12-02/a/b", "text": "2026-12-02 a/b"}]}}),
            ),
            (
                "resources/read",
                r#"{"uri":"memo://a"}"#,
                json!({"result": {"contents": [{"uri": "memo://a", "text": "memo"}]}}),
            ),
            (
                "resources/read",
                r#"{"uri":"notes://empty"}"#,
                json!({"error": {"kind": "internal", "message": "the read of notes://empty returned no contents"}}),
            ),
            (
                "resources/read",
                r#"{"uri":3}"#,
                json!({"error": {"kind": "schema", "message": "resources/read: uri must be a string"}}),
            ),
            (
                "prompts/get",
                r#"{"name":"review","arguments":{"lang":"Go"}}"#,
                json!({"result": {"description": "review in Go", "messages": [
                 {"role": "user", "content": {"type": "text", "text": "Review this Go code."}},
                 {"role": "assistant", "content": {"type": "text", "text": "Paste it."}}]}}),
            ),
            (
                "prompts/get",
                r#"{"name":"other"}"#,
                json!({"result": {"messages": [{"role": "user", "content": {"type": "text", "text": "other"}}]}}),
            ),
            (
                "offers/list",
                "{}",
                json!({"result": {"resources": [{"uri": "memo://a", "name": "a"}]}}),
            ),
        ] {
            assert_eq!(
                json(&m.dispatch(name, args.as_bytes())),
                want,
                "{} {}",
                name,
                args
            );
        }
        let bare = Module::new();
        assert_eq!(
            json(&bare.dispatch("resources/read", br#"{"uri":"notes://todo"}"#)),
            json!({"error": {"kind": "schema", "message": "this module has no resource \"notes://todo\""}})
        );
        assert_eq!(
            json(&bare.dispatch("prompts/get", br#"{"name":"p"}"#))["error"]["kind"],
            "schema"
        );
        assert_eq!(
            json(&bare.dispatch("offers/list", b"{}")),
            json!({"result": {}})
        );
    }

    #[test]
    fn templates_match_as_in_the_go_sdk() {
        for (tmpl, uri, want) in [
            ("notes://{name}", "notes://todo", true),
            ("notes://{name}", "notes://a/b", false),
            ("notes://{+path}", "notes://a/b", true),
            ("notes://{name}.md", "notes://todo.md", true),
            ("notes://{name}.md", "notes://todo.txt", false),
            ("notes://{a}/{b}", "notes://x/y", true),
            ("notes://{a}/{b}", "files://x/y", false),
            ("notes://fixed", "notes://fixed", true),
            ("notes://{name}", "notes://café", true),
        ] {
            let mut vars = Vec::new();
            assert_eq!(
                match_template(tmpl, uri, &mut vars),
                want,
                "{} {}",
                tmpl,
                uri
            );
        }
        let mut vars = Vec::new();
        assert!(match_template(
            "notes://{a}/{b}.md",
            "notes://x/y.md",
            &mut vars
        ));
        assert_eq!(
            vars,
            vec![
                ("a".to_string(), "x".to_string()),
                ("b".to_string(), "y".to_string())
            ]
        );
    }
}

#[cfg(test)]
mod icon_tests {
    use super::Resource;
    use crate::push_icon;
    use serde_json::{json, Map};

    // A resource's icons, like a tool's, accumulate in one array.
    #[test]
    fn icons_accumulate() {
        let r = Resource::new("notes://todo", "todo")
            .icon(json!({"src": "https://a/1.png"}))
            .icon(json!({"src": "https://a/2.png"}));
        assert_eq!(
            r.to_json()["icons"],
            json!([{"src": "https://a/1.png"}, {"src": "https://a/2.png"}])
        );
        let mut spec = Map::new();
        push_icon(&mut spec, json!({"src": "https://a/3.png"}));
        assert_eq!(spec["icons"], json!([{"src": "https://a/3.png"}]));
    }
}
