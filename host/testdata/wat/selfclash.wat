;; selfclash.wat: declares a.b and a_b, two tools with one wire name (a_b):
;; the module is refused on its own.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"a.b\",\"input_schema\":{\"type\":\"object\"}},{\"name\":\"a_b\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 115 bytes
  (data (i32.const 2048) "{\"result\":\"self clash\"}") ;; response, 23 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 115)) ;; ptr 0, len 115
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x80000000017)) ;; (2048 << 32) | 23: ptr 2048, len 23
)
