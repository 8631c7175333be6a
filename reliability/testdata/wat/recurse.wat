;; recurse.wat: toolhost_call recurses without end, each frame holding a
;; few locals, until the runtime's own call stack limit stops it.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.recurse\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 75 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 75)) ;; ptr 0, len 75
  (func $down (param $n i64) (result i64)
    (local i64 i64 i64 i64)
    (i64.add (call $down (i64.add (local.get $n) (i64.const 1))) (local.get $n)))
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (call $down (i64.const 0)))
)
