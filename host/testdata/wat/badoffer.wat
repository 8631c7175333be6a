;; badoffer.wat: a resource whose URI is relative: a load error.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.badoffer\",\"input_schema\":{\"type\":\"object\"}}],\"resources\":[{\"uri\":\"shared.txt\",\"name\":\"shared\"}]}") ;; manifest, 127 bytes
  (data (i32.const 2048) "{\"result\":{}}") ;; response, 13 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 127)) ;; ptr 0, len 127
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x8000000000d)) ;; (2048 << 32) | 13: ptr 2048, len 13
)
