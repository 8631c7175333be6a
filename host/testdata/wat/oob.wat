;; oob.wat: toolhost_call returns a pointer at the end of its one-page memory
;; (ptr 65536, len 16): the host must refuse to read it.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.oob\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 71 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 71)) ;; ptr 0, len 71
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x1000000000010)) ;; (65536 << 32) | 16: ptr 65536, len 16
)
