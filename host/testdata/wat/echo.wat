;; echo.wat: a complete toolhost ABI v1 tool module written by hand, without
;; any SDK or WASI import, to show the ABI is language-neutral. It declares
;; one tool, wat.echo, whose response is {"result": <the arguments verbatim>}
;; (or {"result":null} for empty arguments).
(module
  (memory (export "memory") 1)

  ;; The manifest, NUL-terminated so describe can measure it.
  (data (i32.const 0)
    "{\"abi\":1,\"idempotent\":true,\"read_only\":true,\"tools\":[{"
    "\"name\":\"wat.echo\",\"title\":\"Echo\","
    "\"description\":\"Returns its arguments as the result.\","
    "\"input_schema\":{\"type\":\"object\"},\"timeout_ms\":1000}]}\00")
  ;; Response pieces.
  (data (i32.const 1024) "{\"result\":")   ;; 10 bytes
  (data (i32.const 1040) "null")           ;; 4 bytes

  ;; The bump allocator's next free byte. Nothing is ever freed: an
  ;; instance serves one call.
  (global $heap (mut i32) (i32.const 4096))

  (func (export "toolhost_abi_version") (result i32)
    (i32.const 1))

  ;; toolhost_alloc: bump, 8-byte aligned, growing memory as needed.
  (func $alloc (export "toolhost_alloc") (param $size i32) (result i32)
    (local $ptr i32)
    (local $end i32)
    (local.set $ptr (global.get $heap))
    (local.set $end
      (i32.and (i32.add (i32.add (local.get $ptr) (local.get $size)) (i32.const 7))
               (i32.const -8)))
    (if (i32.gt_u (local.get $end) (i32.shl (memory.size) (i32.const 16)))
      (then
        (if (i32.lt_s
              (memory.grow
                (i32.sub
                  (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16))
                  (memory.size)))
              (i32.const 0))
          (then unreachable))))
    (global.set $heap (local.get $end))
    (local.get $ptr))

  ;; pack: (ptr << 32) | len
  (func $pack (param $ptr i32) (param $len i32) (result i64)
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
      (i64.extend_i32_u (local.get $len))))

  (func (export "toolhost_describe") (result i64)
    (local $n i32)
    (block $done
      (loop $scan
        (br_if $done (i32.eqz (i32.load8_u (local.get $n))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $scan)))
    (call $pack (i32.const 0) (local.get $n)))

  ;; toolhost_call: {"result": + args + }
  (func (export "toolhost_call")
      (param $name_ptr i32) (param $name_len i32) (param $args_ptr i32) (param $args_len i32)
      (result i64)
    (local $out i32)
    (if (i32.eqz (local.get $args_len))
      (then
        (local.set $args_ptr (i32.const 1040))
        (local.set $args_len (i32.const 4))))
    (local.set $out (call $alloc (i32.add (local.get $args_len) (i32.const 11))))
    (memory.copy (local.get $out) (i32.const 1024) (i32.const 10))
    (memory.copy (i32.add (local.get $out) (i32.const 10)) (local.get $args_ptr) (local.get $args_len))
    (i32.store8 (i32.add (i32.add (local.get $out) (i32.const 10)) (local.get $args_len)) (i32.const 125)) ;; '}'
    (call $pack (local.get $out) (i32.add (local.get $args_len) (i32.const 11))))
)
