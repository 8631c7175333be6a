;; An Extism plugin that imports alloc with the wrong signature.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "list_tools") (result i32) (i32.const 0))
  (func (export "call_tool") (result i32) (i32.const 0)))
