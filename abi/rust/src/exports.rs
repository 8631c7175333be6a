//! The ABI's exports. [`export!`](crate::export) writes them into the tool's
//! crate (a `#[no_mangle]` function in a dependency is not reliably exported
//! from a cdylib) and they call the functions here.
//!
//! Memory, as docs/ABI.md requires: each buffer `toolhost_alloc` hands out
//! is kept until the next `toolhost_call` returns, and each response (and
//! the manifest) until the next call starts, long enough for the host to
//! copy it out; so a warm instance does not grow.

use std::cell::RefCell;

use crate::{Call, Module};

#[derive(Default)]
struct State {
    module: Option<Module>,
    inbox: Vec<Vec<u8>>,
    manifest: Vec<u8>,
    last: Vec<u8>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn pack(b: &[u8]) -> i64 {
    if b.is_empty() {
        return 0;
    }
    (((b.as_ptr() as usize as u64) << 32) | (b.len() as u32 as u64)) as i64
}

/// Not public API: what [`export!`](crate::export) calls.
#[doc(hidden)]
pub mod __private {
    use super::*;

    fn with_module<T>(build: fn() -> Module, f: impl FnOnce(&mut State) -> T) -> T {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            if s.module.is_none() {
                s.module = Some(build());
            }
            f(&mut s)
        })
    }

    pub fn alloc(size: i32) -> i32 {
        let buf = vec![0u8; size.max(1) as usize];
        let p = buf.as_ptr() as usize as i32;
        STATE.with(|s| s.borrow_mut().inbox.push(buf));
        p
    }

    pub fn describe(build: fn() -> Module) -> i64 {
        with_module(build, |s| {
            if s.manifest.is_empty() {
                s.manifest = s.module.as_ref().unwrap().manifest();
            }
            pack(&s.manifest)
        })
    }

    /// # Safety
    /// The pointers are ranges the host wrote into buffers from `alloc`.
    pub unsafe fn call(
        build: fn() -> Module,
        name_ptr: i32,
        name_len: i32,
        args_ptr: i32,
        args_len: i32,
    ) -> i64 {
        let bytes = |p: i32, n: i32| -> Vec<u8> {
            if n <= 0 {
                return Vec::new();
            }
            std::slice::from_raw_parts(p as usize as *const u8, n as usize).to_vec()
        };
        let name = String::from_utf8_lossy(&bytes(name_ptr, name_len)).into_owned();
        let args = bytes(args_ptr, args_len);
        // The module is taken out of the state while it runs, so that a
        // tool may allocate (and the egress and note calls may run) freely.
        let module = with_module(build, |s| {
            s.inbox.clear();
            s.last = Vec::new();
            s.module.take().unwrap()
        });
        let resp = module.dispatch_call(&mut Call::new(&name), &args);
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            s.module = Some(module);
            s.last = resp;
            pack(&s.last)
        })
    }
}

/// Writes the ABI's exports for the module that `build` returns (a
/// `fn() -> toolhost::Module`, called once per instance, on its first
/// describe or call). Use it once, in the crate's `lib.rs`.
#[macro_export]
macro_rules! export {
    ($build:path) => {
        #[no_mangle]
        pub extern "C" fn toolhost_abi_version() -> i32 {
            $crate::ABI_VERSION
        }
        #[no_mangle]
        pub extern "C" fn toolhost_alloc(size: i32) -> i32 {
            $crate::__private::alloc(size)
        }
        #[no_mangle]
        pub extern "C" fn toolhost_describe() -> i64 {
            $crate::__private::describe($build)
        }
        /// # Safety
        /// Called by the host with ranges of buffers from toolhost_alloc.
        #[no_mangle]
        pub unsafe extern "C" fn toolhost_call(
            name_ptr: i32,
            name_len: i32,
            args_ptr: i32,
            args_len: i32,
        ) -> i64 {
            $crate::__private::call($build, name_ptr, name_len, args_ptr, args_len)
        }
    };
}
