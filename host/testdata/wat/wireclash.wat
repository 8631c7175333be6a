;; wireclash.wat: declares wat_echo, whose wire name is that of wat.echo
;; (host/testdata/wat/echo.wat): loading both from one folder is a wire-name clash.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat_echo\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 72 bytes
  (data (i32.const 2048) "{\"result\":\"wire clash\"}") ;; response, 23 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 72)) ;; ptr 0, len 72
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x80000000017)) ;; (2048 << 32) | 23: ptr 2048, len 23
)
