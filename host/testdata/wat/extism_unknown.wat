;; An Extism plugin that imports a host function toolhost does not provide.
(module
  (import "extism:host/user" "get_session" (func $s (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "list_tools") (result i32) (i32.const 0))
  (func (export "call_tool") (result i32) (i32.const 0)))
