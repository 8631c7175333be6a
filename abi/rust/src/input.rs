//! Input requests (docs/ABI.md, "Input requests"): a tool that needs the
//! user's answer first returns [`Error::ask`](crate::Error::ask) (or
//! [`Error::ask_confirm`](crate::Error::ask_confirm)); the host asks the
//! user through the MCP client and calls the tool again with the same
//! arguments, where [`Call::answers`](crate::Call::answers) returns the
//! answers and the state it kept. A module that never reads answers does
//! not import `toolhost_v1.input`.

use serde_json::{json, Value};

/// The schema of `Error::ask_confirm`'s form: one required checkbox.
pub(crate) fn confirm_request(message: &str) -> Value {
    json!({"confirm": {"mode": "form", "message": message, "schema": {
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "title": "Confirm"}},
        "required": ["confirm"]}}})
}

/// Whether a resume document says the user accepted and checked confirm.
pub(crate) fn confirmed(resume: &Value) -> bool {
    let a = &resume["responses"]["confirm"];
    a["action"] == "accept" && a["content"]["confirm"] == true
}

/// Reads the call's resume document from the host: None on a first call.
#[cfg(target_arch = "wasm32")]
pub(crate) fn host_resume() -> Option<Value> {
    let n = unsafe { imports::input(std::ptr::null_mut(), 0) };
    if n <= 0 {
        return None;
    }
    let mut buf = vec![0u8; n as usize];
    if unsafe { imports::input(buf.as_mut_ptr(), n) } != n {
        return None;
    }
    serde_json::from_slice(&buf).ok()
}

#[cfg(target_arch = "wasm32")]
mod imports {
    #[link(wasm_import_module = "toolhost_v1")]
    extern "C" {
        pub fn input(buf_ptr: *mut u8, buf_len: i32) -> i32;
    }
}

#[cfg(test)]
mod tests {
    use crate::{schema, Call, Error, Module, Tool};
    use serde_json::{json, Value};

    fn remove(call: &mut Call, _args: Value) -> Result<&'static str, Error> {
        match call.confirmed() {
            None => Err(Error::ask_confirm("Delete it?")),
            Some(true) => Ok("deleted"),
            Some(false) => Ok("kept"),
        }
    }

    fn module() -> Module {
        Module::new().tool(Tool::new("files.rm", schema::object()).handler(remove))
    }

    // The first call asks (the {"input": ...} response the host checks);
    // the call that answers gets the user's choice.
    #[test]
    fn confirm_asks_then_reads_the_answer() {
        let m = module();
        let first: Value = serde_json::from_slice(&m.dispatch("files.rm", b"{}")).unwrap();
        assert_eq!(first["input"]["requests"]["confirm"]["mode"], "form");
        assert_eq!(
            first["input"]["requests"]["confirm"]["message"],
            "Delete it?"
        );
        assert!(first.get("error").is_none());
        for (answer, want) in [
            (
                json!({"action": "accept", "content": {"confirm": true}}),
                "deleted",
            ),
            (
                json!({"action": "accept", "content": {"confirm": false}}),
                "kept",
            ),
            (json!({"action": "decline"}), "kept"),
            (json!({"action": "cancel"}), "kept"),
        ] {
            let mut call = Call::answered("files.rm", json!({"responses": {"confirm": answer}}));
            let got = m.dispatch_call(&mut call, b"{}");
            assert_eq!(
                String::from_utf8(got).unwrap(),
                format!("{{\"result\":\"{}\"}}", want)
            );
        }
    }

    #[test]
    fn ask_carries_the_state() {
        let e = Error::ask(
            json!({"login": {"mode": "url", "message": "Sign in", "url": "https://example.com/"}}),
            Some("s"),
        );
        assert_eq!(
            e.to_response(),
            json!({"input": {"requests": {"login": {"mode": "url", "message": "Sign in", "url": "https://example.com/"}}, "state": "s"}})
        );
    }
}
