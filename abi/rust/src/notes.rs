//! Progress and log notes (docs/ABI.md, "Progress and logs"): the
//! toolhost_v1 `progress` and `log` imports. They need no grant, never fail
//! the call, and a module that never calls them does not import them.

/// A log message's level (MCP's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Notice = 2,
    Warning = 3,
    Error = 4,
}

/// The call running now, handed to every tool function: it reports
/// progress and log messages to the call's caller.
#[derive(Debug)]
pub struct Call {
    name: String,
    #[cfg(not(target_arch = "wasm32"))]
    notes: Vec<String>,
    // The answers to the tool's input request: None until read (wasm),
    // Some(None) on a first call.
    resume: Option<Option<serde_json::Value>>,
}

impl Call {
    /// A call of the tool `name` (for native tests with
    /// [`Module::dispatch_call`](crate::Module::dispatch_call)).
    pub fn new(name: &str) -> Call {
        Call {
            name: name.to_string(),
            #[cfg(not(target_arch = "wasm32"))]
            notes: Vec::new(),
            #[cfg(not(target_arch = "wasm32"))]
            resume: Some(None),
            #[cfg(target_arch = "wasm32")]
            resume: None,
        }
    }

    /// A call of `name` that answers the tool's input request with
    /// `resume` (`{"state", "responses"}`), for native tests.
    pub fn answered(name: &str, resume: serde_json::Value) -> Call {
        let mut c = Call::new(name);
        c.resume = Some(Some(resume));
        c
    }

    /// The user's answers and the tool's state (`{"state": "...",
    /// "responses": {"ID": {"action": "accept", "content": {...}}}}`) when
    /// this call answers the tool's input request; None on a first call.
    pub fn answers(&mut self) -> Option<&serde_json::Value> {
        if self.resume.is_none() {
            #[cfg(target_arch = "wasm32")]
            {
                self.resume = Some(crate::input::host_resume());
            }
        }
        self.resume.as_ref().and_then(|r| r.as_ref())
    }

    /// The answer to [`Error::ask_confirm`](crate::Error::ask_confirm):
    /// Some(true) when the user accepted and checked confirm, Some(false)
    /// when they declined, cancelled or left it unchecked, None when this
    /// call answers no request (ask first).
    pub fn confirmed(&mut self) -> Option<bool> {
        self.answers().map(crate::input::confirmed)
    }

    /// The tool's name, as the manifest declares it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reports that `done` of `total` units of work are done (`total` <= 0:
    /// unknown). Each progress must be more than the last; the host drops
    /// one that is not, and sends at most 10 a second (always the last).
    /// Returns the host's status: 0 accepted, 1 dropped, 2 invalid.
    pub fn progress(&mut self, done: f64, total: f64, msg: &str) -> i32 {
        #[cfg(target_arch = "wasm32")]
        {
            unsafe { imports::progress(done, total, msg.as_ptr(), msg.len() as i32) }
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.notes
                .push(format!("progress {}/{} {}", done, total, msg));
            0
        }
    }

    /// Sends `msg` at `level` to the caller (when it asked for that level)
    /// and to the server log. At most 100 messages (64 KiB) per call.
    pub fn log(&mut self, level: Level, msg: &str) -> i32 {
        #[cfg(target_arch = "wasm32")]
        {
            unsafe { imports::log(level as i32, msg.as_ptr(), msg.len() as i32) }
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.notes.push(format!("log {:?} {}", level, msg));
            0
        }
    }

    /// The notes made so far, one line each (native builds only, for tests).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

#[cfg(target_arch = "wasm32")]
mod imports {
    #[link(wasm_import_module = "toolhost_v1")]
    extern "C" {
        pub fn progress(done: f64, total: f64, msg_ptr: *const u8, msg_len: i32) -> i32;
        pub fn log(level: i32, msg_ptr: *const u8, msg_len: i32) -> i32;
    }
}
