;; garbage.wat: toolhost_call returns bytes that are not JSON.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.garbage\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 75 bytes
  (data (i32.const 2048) "this is not JSON") ;; response, 16 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 75)) ;; ptr 0, len 75
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x80000000010)) ;; (2048 << 32) | 16: ptr 2048, len 16
)
