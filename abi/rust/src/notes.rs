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
}

impl Call {
    /// A call of the tool `name` (for native tests with
    /// [`Module::dispatch_call`](crate::Module::dispatch_call)).
    pub fn new(name: &str) -> Call {
        Call {
            name: name.to_string(),
            #[cfg(not(target_arch = "wasm32"))]
            notes: Vec::new(),
        }
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
