;; A valid Extism plugin built as a WASI command (as TinyGo's default
;; target makes them), on hyper-mcp's v1 interface: _start traps if it is
;; ever called, __wasm_call_ctors sets a flag that call requires, as
;; Extism runs a command's constructors and never its _start.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output (param i64 i64)))
  (memory (export "memory") 1)
  (global $ready (mut i32) (i32.const 0))
  (data (i32.const 0) "{\22tools\22:[{\22name\22:\22cmd.ready\22}]}")
  (data (i32.const 64) "{\22content\22:[{\22type\22:\22text\22,\22text\22:\22ready\22}]}")
  ;; emit copies [ptr, ptr+len) of linear memory into a kernel block and
  ;; sets it as the output.
  (func $emit (param $ptr i32) (param $len i32)
    (local $off i64) (local $i i32)
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (call $store (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (call $output (local.get $off) (i64.extend_i32_u (local.get $len))))
  (func (export "_start") unreachable)
  (func (export "__wasm_call_ctors") (global.set $ready (i32.const 1)))
  (func (export "describe") (result i32)
    (call $emit (i32.const 0) (i32.const 32))
    (i32.const 0))
  (func (export "call") (result i32)
    (if (i32.eqz (global.get $ready)) (then unreachable))
    (call $emit (i32.const 64) (i32.const 44))
    (i32.const 0)))
