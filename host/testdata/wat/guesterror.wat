;; guesterror.wat: a well-formed transient error with retry_after_ms.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.guesterror\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 78 bytes
  (data (i32.const 2048) "{\"error\":{\"kind\":\"transient\",\"message\":\"upstream 429\",\"retry_after_ms\":1500}}") ;; response, 77 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 78)) ;; ptr 0, len 78
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x8000000004d)) ;; (2048 << 32) | 77: ptr 2048, len 77
)
