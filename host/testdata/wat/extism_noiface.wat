;; An Extism plugin with neither of hyper-mcp's interfaces.
(module
  (import "extism:host/env" "input_length" (func $len (result i64)))
  (memory (export "memory") 1)
  (func (export "count") (result i32) (i32.const 0)))
