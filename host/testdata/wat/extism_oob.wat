;; An Extism plugin whose list_tools reads far outside the kernel memory.
(module
  (import "extism:host/env" "load_u64" (func $load (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "list_tools") (result i32) (drop (call $load (i64.const 999999))) (i32.const 0))
  (func (export "call_tool") (result i32) (i32.const 0)))
