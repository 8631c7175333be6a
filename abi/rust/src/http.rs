//! Governed egress (docs/ABI.md, "Governed egress"): HTTP through the
//! host's toolhost_v1 `http_request` and `http_response` imports, as far as
//! the operator's grant for the module allows.
//!
//! Errors, as the Go SDK's: a 429 or 503 answer is a transient [`Error`]
//! carrying the upstream's Retry-After and the answer
//! ([`Error::response`]); a refused or failed request is an [`Error`]
//! carrying an [`HttpError`] ([`Error::http`]), transient for
//! `rate_limited`, `timeout` and `unavailable`, internal otherwise.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use crate::Error;

/// Header names to their values.
pub type Headers = BTreeMap<String, Vec<String>>;

/// An outbound request.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The method; empty means GET.
    pub method: String,
    /// An absolute http or https URL.
    pub url: String,
    pub headers: Headers,
    pub body: Vec<u8>,
}

impl Request {
    /// A request with no headers.
    pub fn new(method: &str, url: &str) -> Request {
        Request {
            method: method.into(),
            url: url.into(),
            ..Request::default()
        }
    }
    /// Adds a header value.
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers
            .entry(name.into())
            .or_default()
            .push(value.into());
        self
    }
    /// Sets the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Request {
        self.body = body.into();
        self
    }
}

/// An upstream's answer (every status is an answer).
#[derive(Clone, Debug, Default)]
pub struct Response {
    pub status: u16,
    pub headers: Headers,
    pub body: Vec<u8>,
    /// The URL that answered, after redirects (empty from an older host).
    pub url: String,
    /// The upstream's Retry-After, in milliseconds.
    pub retry_after_ms: Option<u64>,
}

impl Response {
    /// The body as UTF-8 text.
    pub fn text(&self) -> Result<&str, Error> {
        std::str::from_utf8(&self.body)
            .map_err(|_| Error::internal("egress: the answer's body is not UTF-8"))
    }
    /// The first value of a header (names compared without case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.first())
            .map(|s| s.as_str())
    }
}

/// A request that got no answer: refused by the host or failed.
#[derive(Clone, Debug)]
pub struct HttpError {
    /// `denied`, `too_large`, `rate_limited`, `timeout`, `unavailable` or `invalid`.
    pub kind: String,
    /// For `denied` and `too_large`: the grant missing or exceeded.
    pub grant: String,
    pub message: String,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.grant.is_empty() {
            write!(f, "egress {}: {}", self.kind, self.message)
        } else {
            write!(
                f,
                "egress {} (grant {}): {}",
                self.kind, self.grant, self.message
            )
        }
    }
}

/// Sends a GET.
pub fn get(url: &str) -> Result<Response, Error> {
    send(&Request::new("GET", url))
}

/// Sends a POST with the given Content-Type.
pub fn post(url: &str, content_type: &str, body: impl Into<Vec<u8>>) -> Result<Response, Error> {
    send(
        &Request::new("POST", url)
            .header("Content-Type", content_type)
            .body(body),
    )
}

/// Sends `req` through the host and returns the answer; see the module
/// documentation for the errors.
pub fn send(req: &Request) -> Result<Response, Error> {
    let mut w = Map::new();
    if !req.method.is_empty() {
        w.insert("method".into(), Value::from(req.method.as_str()));
    }
    w.insert("url".into(), Value::from(req.url.as_str()));
    w.insert("headers".into(), serde_json::to_value(&req.headers)?);
    if !req.body.is_empty() {
        match std::str::from_utf8(&req.body) {
            Ok(s) => w.insert("body".into(), Value::from(s)),
            Err(_) => w.insert("body_base64".into(), Value::from(base64_encode(&req.body))),
        };
    }
    let out = round_trip(&serde_json::to_vec(&Value::Object(w))?)?;
    decode(&out)
}

fn decode(out: &[u8]) -> Result<Response, Error> {
    let v: Value = serde_json::from_slice(out)
        .map_err(|e| Error::internal(format!("egress: the host's answer is not JSON: {}", e)))?;
    let retry = v.get("retry_after_ms").and_then(Value::as_u64);
    if let Some(e) = v.get("error") {
        let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let he = HttpError {
            kind: s("kind"),
            grant: s("grant"),
            message: s("message"),
        };
        let retry = e.get("retry_after_ms").and_then(Value::as_u64);
        let mut err = match he.kind.as_str() {
            "rate_limited" | "timeout" | "unavailable" => match retry {
                Some(ms) => Error::transient_after(he.to_string(), ms),
                None => Error::transient(he.to_string()),
            },
            _ => Error::internal(he.to_string()),
        };
        err.http = Some(he);
        return Err(err);
    }
    let mut r = Response {
        status: v.get("status").and_then(Value::as_u64).unwrap_or(0) as u16,
        headers: v
            .get("headers")
            .cloned()
            .map(serde_json::from_value)
            .transpose()?
            .unwrap_or_default(),
        body: Vec::new(),
        url: v
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        retry_after_ms: retry,
    };
    if let Some(b) = v.get("body").and_then(Value::as_str) {
        r.body = b.as_bytes().to_vec();
    } else if let Some(b) = v.get("body_base64").and_then(Value::as_str) {
        r.body = base64_decode(b)
            .ok_or_else(|| Error::internal("egress: the host's body_base64 does not decode"))?;
    }
    if r.status == 429 || r.status == 503 {
        let msg = match retry {
            Some(ms) => format!("upstream answered {}; retry after {} ms", r.status, ms),
            None => format!("upstream answered {}", r.status),
        };
        let mut err = match retry {
            Some(ms) => Error::transient_after(msg, ms),
            None => Error::transient(msg),
        };
        err.response = Some(Box::new(r));
        return Err(err);
    }
    Ok(r)
}

#[cfg(target_arch = "wasm32")]
fn round_trip(req: &[u8]) -> Result<Vec<u8>, Error> {
    #[link(wasm_import_module = "toolhost_v1")]
    extern "C" {
        fn http_request(ptr: *const u8, len: i32) -> i32;
        fn http_response(ptr: *mut u8, len: i32) -> i32;
    }
    let n = unsafe { http_request(req.as_ptr(), req.len() as i32) };
    if n <= 0 {
        return Err(Error::internal(
            "egress: the host could not read the request",
        ));
    }
    let mut buf = vec![0u8; n as usize];
    let got = unsafe { http_response(buf.as_mut_ptr(), n) };
    if got != n {
        return Err(Error::internal(format!(
            "egress: the host returned {} of {} result bytes",
            got, n
        )));
    }
    Ok(buf)
}

#[cfg(not(target_arch = "wasm32"))]
fn round_trip(_req: &[u8]) -> Result<Vec<u8>, Error> {
    Err(Error::internal(
        "egress: no toolhost host here (HTTP from a tool works only inside toolhost)",
    ))
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(b: &[u8]) -> String {
    let mut s = String::with_capacity((b.len() + 2) / 3 * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for &c in s {
        let v = B64.iter().position(|&x| x == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for b in [&b""[..], b"f", b"fo", b"foo", b"foob", b"\xff\x00\x80"] {
            assert_eq!(base64_decode(&base64_encode(b)).unwrap(), b);
        }
        assert_eq!(base64_encode(b"foob"), "Zm9vYg==");
    }

    #[test]
    fn answers_and_refusals() {
        let r = decode(br#"{"status":200,"headers":{"X":["1"]},"body":"hi","url":"https://a/"}"#)
            .unwrap();
        assert_eq!(
            (r.status, r.text().unwrap(), r.header("x")),
            (200, "hi", Some("1"))
        );
        let e = decode(br#"{"status":429,"retry_after_ms":3000,"body":"slow"}"#).unwrap_err();
        assert_eq!(
            (e.kind(), e.retry_after_ms(), e.response().unwrap().status),
            (crate::Kind::Transient, Some(3000), 429)
        );
        let e =
            decode(br#"{"error":{"kind":"denied","grant":"hosts","message":"no"}}"#).unwrap_err();
        assert_eq!(
            (e.kind(), e.http().unwrap().grant.as_str()),
            (crate::Kind::Internal, "hosts")
        );
    }
}
