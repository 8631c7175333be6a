;; callloop.wat: toolhost_call never returns (a tight loop with no calls, no
;; allocation, nothing for a runtime to notice but the deadline).
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.callloop\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 76 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 76)) ;; ptr 0, len 76
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (loop $forever (br $forever))
    (i64.const 0))
)
