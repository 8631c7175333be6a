//! The Rust SDK for toolhost tools: the guest side of toolhost's guest ABI,
//! version 1 (docs/ABI.md).
//!
//! A tool is a typed function from arguments (`serde::Deserialize`) to a
//! result (`serde::Serialize`), with the input and output schemas the host
//! reads from the manifest. The SDK writes the four exports
//! (`toolhost_abi_version`, `toolhost_alloc`, `toolhost_describe`,
//! `toolhost_call`) through [`export!`], owns the buffers it hands the host,
//! and turns an [`Error`] into the ABI's error response.
//!
//! ```ignore
//! use toolhost::{schema, Call, Error, Module, Tool};
//!
//! fn count(_call: &mut Call, args: serde_json::Value) -> Result<usize, Error> {
//!     let text = args["text"].as_str().ok_or_else(|| Error::schema("text must be a string"))?;
//!     Ok(text.split_whitespace().count())
//! }
//!
//! fn module() -> Module {
//!     Module::new().tool(
//!         Tool::new("text.count", schema::object().required("text", schema::string()))
//!             .read_only(true)
//!             .handler(count),
//!     )
//! }
//!
//! toolhost::export!(module);
//! ```
//!
//! A module may also offer resources and prompts beside its tools
//! ([`Module::resource`], [`Module::resource_template`],
//! [`Module::prompt`], [`Module::dynamic`]): their handlers return
//! [`Contents`] and a [`PromptResult`], and the SDK serves the host's
//! `resources/read` and `prompts/get` calls with them.
//!
//! Build as a `cdylib` for `wasm32-wasi` (Rust 1.63 to 1.77) or
//! `wasm32-wasip1` (later Rust): a reactor, which the host never starts
//! with `_start`. A guest instance runs one call at a time on one thread,
//! so nothing here is meant for concurrent use.

mod exports;
pub mod http;
mod input;
mod notes;
mod offers;
pub mod schema;

use std::fmt;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

pub use exports::__private;
pub use notes::{Call, Level};
pub use offers::{
    Contents, Dynamic, Listing, Message, Prompt, PromptArgs, PromptResult, Resource,
    ResourceTemplate, Uri,
};

/// The ABI version this SDK speaks.
pub const ABI_VERSION: i32 = 1;

/// The kind of a tool error: how the host's dispatcher treats it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// May succeed if tried again (an upstream 429 or 503): retried with backoff.
    Transient,
    /// The caller's arguments cannot be used: never retried.
    Schema,
    /// The tool failed in a way retrying will not fix: never retried.
    Internal,
}

impl Kind {
    /// The kind's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Transient => "transient",
            Kind::Schema => "schema",
            Kind::Internal => "internal",
        }
    }
}

/// A tool error with an ABI kind. Any `std::error::Error` converts into an
/// internal one, so `?` works on I/O and JSON errors. `Error` itself does not
/// implement `std::error::Error` (as anyhow's does not), which is what makes
/// that conversion possible.
#[derive(Debug)]
pub struct Error {
    kind: Kind,
    message: String,
    retry_after_ms: Option<u64>,
    response: Option<Box<http::Response>>,
    http: Option<http::HttpError>,
    input: Option<Value>,
}

impl Error {
    fn new(kind: Kind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            retry_after_ms: None,
            response: None,
            http: None,
            input: None,
        }
    }
    /// Asks the user before the tool goes on (docs/ABI.md, "Input
    /// requests"): `requests` is a JSON object of requests by id, each
    /// `{"mode": "form", "message", "schema"}` or `{"mode": "url",
    /// "message", "url"}`; `state` comes back with the answers
    /// ([`Call::answers`]). Return it as the tool's error: it is not one.
    pub fn ask(requests: Value, state: Option<&str>) -> Error {
        let mut e = Error::new(Kind::Internal, "the tool needs input from the user");
        let mut input = json!({ "requests": requests });
        if let Some(s) = state {
            input["state"] = Value::from(s);
        }
        e.input = Some(input);
        e
    }
    /// Asks the user to confirm `message` (one checkbox, id "confirm");
    /// [`Call::confirmed`] reads the answer.
    pub fn ask_confirm(message: &str) -> Error {
        Error::ask(input::confirm_request(message), None)
    }
    /// A transient error: the host retries the call with backoff.
    pub fn transient(message: impl Into<String>) -> Error {
        Error::new(Kind::Transient, message)
    }
    /// A transient error with the delay an upstream asked for; the host
    /// waits at least that long before its next attempt.
    pub fn transient_after(message: impl Into<String>, retry_after_ms: u64) -> Error {
        let mut e = Error::new(Kind::Transient, message);
        e.retry_after_ms = Some(retry_after_ms);
        e
    }
    /// A schema error: the caller must change its arguments.
    pub fn schema(message: impl Into<String>) -> Error {
        Error::new(Kind::Schema, message)
    }
    /// An internal error.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(Kind::Internal, message)
    }
    /// The error's kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }
    /// The message the caller (and a model) reads.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The delay an upstream asked for, in milliseconds.
    pub fn retry_after_ms(&self) -> Option<u64> {
        self.retry_after_ms
    }
    /// For an upstream's 429 or 503 from [`http::send`]: the answer itself.
    pub fn response(&self) -> Option<&http::Response> {
        self.response.as_deref()
    }
    /// For a request the host refused or that failed: its egress error.
    pub fn http(&self) -> Option<&http::HttpError> {
        self.http.as_ref()
    }

    fn to_response(&self) -> Value {
        if let Some(input) = &self.input {
            return json!({ "input": input });
        }
        let mut e = Map::new();
        e.insert("kind".into(), Value::from(self.kind.as_str()));
        e.insert("message".into(), Value::from(self.message.as_str()));
        if let (Kind::Transient, Some(ms)) = (self.kind, self.retry_after_ms) {
            e.insert("retry_after_ms".into(), Value::from(ms));
        }
        json!({ "error": e })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

impl<E: std::error::Error> From<E> for Error {
    fn from(e: E) -> Error {
        Error::internal(e.to_string())
    }
}

/// Whether the host may serve a caller's calls from one warm instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instances {
    /// Every call gets a new instance (the default).
    Fresh,
    /// The tool keeps no state between calls that it relies on.
    Reuse,
}

type Handler = Box<dyn Fn(&mut Call, &[u8]) -> Result<Vec<u8>, Error>>;

/// A tool being described; [`Tool::handler`] makes it a [`ToolDef`].
pub struct Tool {
    spec: Map<String, Value>,
}

/// A complete tool: its manifest entry and its function.
pub struct ToolDef {
    spec: Map<String, Value>,
    handler: Handler,
}

impl Tool {
    /// A tool called `name` whose arguments match `input_schema` (an object
    /// schema: [`schema::object`], or any `serde_json::Value`).
    ///
    /// Panics (at describe, so the module fails to load with the message on
    /// stderr) when the name does not match `^[A-Za-z0-9_.-]{1,128}$` or the
    /// schema is not `"type": "object"`.
    pub fn new(name: &str, input_schema: impl Into<Value>) -> Tool {
        assert!(valid_name(name), "toolhost: invalid tool name {:?}", name);
        let input = input_schema.into();
        assert!(
            input.get("type") == Some(&Value::from("object")),
            "toolhost: tool {}: input schema must have \"type\": \"object\"",
            name
        );
        let mut spec = Map::new();
        spec.insert("name".into(), Value::from(name));
        spec.insert("input_schema".into(), input);
        spec.insert("idempotent".into(), Value::Bool(false));
        spec.insert("read_only".into(), Value::Bool(false));
        Tool { spec }
    }
    fn set(mut self, key: &str, v: Value) -> Tool {
        self.spec.insert(key.into(), v);
        self
    }
    /// A short human-readable name.
    pub fn title(self, title: &str) -> Tool {
        self.set("title", Value::from(title))
    }
    /// What the tool does and when to use it; models read it.
    pub fn description(self, d: &str) -> Tool {
        self.set("description", Value::from(d))
    }
    /// The result's schema (an object schema; wrap other results).
    pub fn output_schema(self, s: impl Into<Value>) -> Tool {
        self.set("output_schema", s.into())
    }
    /// The timeout of each attempt, in milliseconds (default 30000).
    pub fn timeout_ms(self, ms: u32) -> Tool {
        self.set("timeout_ms", Value::from(ms))
    }
    /// Calling twice with the same arguments has the effect of calling once.
    pub fn idempotent(self, v: bool) -> Tool {
        self.set("idempotent", Value::Bool(v))
    }
    /// The tool changes nothing outside itself.
    pub fn read_only(self, v: bool) -> Tool {
        self.set("read_only", Value::Bool(v))
    }
    /// The tool may destroy or overwrite what it changes (MCP's default:
    /// false for a read-only tool, true otherwise).
    pub fn destructive(self, v: bool) -> Tool {
        self.set("destructive", Value::Bool(v))
    }
    /// The instance policy (default [`Instances::Fresh`]).
    pub fn instances(self, i: Instances) -> Tool {
        let s = match i {
            Instances::Fresh => "fresh",
            Instances::Reuse => "reuse",
        };
        self.set("instances", Value::from(s))
    }
    /// Adds an MCP icon object (`{"src": "https://…"}`).
    pub fn icon(mut self, icon: Value) -> Tool {
        push_icon(&mut self.spec, icon);
        self
    }
    /// The tool's function: it decodes the arguments into `A` (a decoding
    /// failure is a schema error) and encodes the `R` it returns.
    pub fn handler<A, R, F>(self, f: F) -> ToolDef
    where
        A: DeserializeOwned,
        R: Serialize,
        F: Fn(&mut Call, A) -> Result<R, Error> + 'static,
    {
        let handler: Handler = Box::new(move |call, raw| {
            let raw: &[u8] = if raw.iter().all(u8::is_ascii_whitespace) {
                b"{}"
            } else {
                raw
            };
            let args: A = serde_json::from_slice(raw)
                .map_err(|e| Error::schema(format!("arguments: {}", e)))?;
            let r = f(call, args)?;
            serde_json::to_vec(&r).map_err(|e| Error::internal(format!("encoding result: {}", e)))
        });
        ToolDef {
            spec: self.spec,
            handler,
        }
    }
}

fn valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

/// The tools (and resources and prompts) of one module. Build it in the
/// function given to [`export!`].
#[derive(Default)]
pub struct Module {
    tools: Vec<ToolDef>,
    offers: offers::Offers,
    timeout_ms: Option<u32>,
}

impl Module {
    /// An empty module.
    pub fn new() -> Module {
        Module::default()
    }
    /// Adds a tool. Panics on a name already added.
    pub fn tool(mut self, t: ToolDef) -> Module {
        let name = t.spec["name"].clone();
        assert!(
            self.tools.iter().all(|d| d.spec["name"] != name),
            "toolhost: tool {} added twice",
            name
        );
        self.tools.push(t);
        self
    }
    /// The module's default timeout in milliseconds (the manifest's
    /// top-level `timeout_ms`): of each tool that sets none, and of each
    /// resource read, prompt get and dynamic listing, which have none of
    /// their own.
    pub fn timeout_ms(mut self, ms: u32) -> Module {
        self.timeout_ms = Some(ms);
        self
    }
    /// Offers the resource `r`, read by `read`. Panics on a URI added
    /// twice.
    pub fn resource<F>(mut self, r: Resource, read: F) -> Module
    where
        F: Fn(&mut Call, &Uri) -> Result<Vec<Contents>, Error> + 'static,
    {
        let uri = r.to_json()["uri"].as_str().unwrap_or("").to_string();
        assert!(
            !self.offers.has_uri(&uri),
            "toolhost: resource {} added twice",
            uri
        );
        self.offers.resources.push((r, Box::new(read)));
        self
    }
    /// Offers the resources whose URIs `t` matches, read by `read`, which
    /// finds the template's variables in its [`Uri`]. A static resource's
    /// URI is looked up before any template. Panics on a template added
    /// twice.
    pub fn resource_template<F>(mut self, t: ResourceTemplate, read: F) -> Module
    where
        F: Fn(&mut Call, &Uri) -> Result<Vec<Contents>, Error> + 'static,
    {
        let tmpl = t.to_json()["uriTemplate"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(
            !self.offers.has_template(&tmpl),
            "toolhost: resource template {} added twice",
            tmpl
        );
        self.offers.templates.push((t, Box::new(read)));
        self
    }
    /// Offers the prompt `p`, filled in by `get`. Panics on a name added
    /// twice.
    pub fn prompt<F>(mut self, p: Prompt, get: F) -> Module
    where
        F: Fn(&mut Call, &PromptArgs) -> Result<PromptResult, Error> + 'static,
    {
        let name = p.to_json()["name"].as_str().unwrap_or("").to_string();
        assert!(
            !self.offers.has_prompt(&name),
            "toolhost: prompt {} added twice",
            name
        );
        self.offers.prompts.push((p, Box::new(get)));
        self
    }
    /// Declares the module's dynamic offers (`"dynamic_offers": true`).
    pub fn dynamic(mut self, d: Dynamic) -> Module {
        self.offers.dynamic = Some(d);
        self
    }
    /// The manifest JSON, as `toolhost_describe` returns it.
    pub fn manifest(&self) -> Vec<u8> {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|t| Value::Object(t.spec.clone()))
            .collect();
        let mut m = Map::new();
        m.insert("abi".into(), Value::from(ABI_VERSION));
        m.insert("tools".into(), Value::Array(tools));
        if let Some(ms) = self.timeout_ms {
            m.insert("timeout_ms".into(), Value::from(ms));
        }
        self.offers.describe(&mut m);
        serde_json::to_vec(&m).expect("manifest encodes")
    }
    /// Runs the tool `name` on the arguments JSON and returns the response
    /// document, as `toolhost_call` does. Exported for native tests.
    pub fn dispatch(&self, name: &str, args: &[u8]) -> Vec<u8> {
        self.dispatch_call(&mut Call::new(name), args)
    }
    /// `dispatch` with a call the caller keeps (native tests read its notes).
    pub fn dispatch_call(&self, call: &mut Call, args: &[u8]) -> Vec<u8> {
        let name = call.name().to_string();
        let out = match self
            .tools
            .iter()
            .find(|t| t.spec["name"] == Value::from(name.as_str()))
        {
            Some(t) => (t.handler)(call, args),
            None => match self.offers.dispatch(call, &name, args) {
                Some(out) => out,
                None => Err(Error::schema(format!("this module has no tool {:?}", name))),
            },
        };
        match out {
            Ok(result) => {
                let mut b = Vec::with_capacity(result.len() + 11);
                b.extend_from_slice(b"{\"result\":");
                b.extend_from_slice(&result);
                b.push(b'}');
                b
            }
            Err(e) => serde_json::to_vec(&e.to_response()).expect("error encodes"),
        }
    }
}

/// Appends icon to the `icons` array of a manifest entry (a tool's, a
/// resource's or a prompt's), creating the array on first use.
pub(crate) fn push_icon(spec: &mut Map<String, Value>, icon: Value) {
    let icons = spec
        .entry("icons")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(a) = icons {
        a.push(icon);
    }
}
