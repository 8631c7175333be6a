;; flood.wat: toolhost_call writes 100 MiB to stdout (1600 fd_write calls of
;; one 64 KiB iovec each), then returns {"result":"flooded"}.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.flood\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 73 bytes
  (data (i32.const 1024) "{\"result\":\"flooded\"}") ;; response, 20 bytes
  (global $heap (mut i32) (i32.const 2048))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 73)) ;; ptr 0, len 73
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (local $i i32)
    (memory.fill (i32.const 65536) (i32.const 111) (i32.const 65536)) ;; 64 KiB of 'o' in page 1
    (i32.store (i32.const 512) (i32.const 65536)) ;; iovec.buf
    (i32.store (i32.const 516) (i32.const 65536)) ;; iovec.len
    (loop $write
      ;; fd 1, one iovec at 512, bytes written to 520
      (drop (call $fd_write (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 520)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $write (i32.lt_u (local.get $i) (i32.const 1600))))
    (i64.const 0x40000000014)) ;; (1024 << 32) | 20
)
