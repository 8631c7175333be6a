;; offersdup.wat: offers wat://shared as offers.wat does, under a tool of its own:
;; loading both from one folder is a clash of resource URIs.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.offersdup\",\"input_schema\":{\"type\":\"object\"}}],\"resources\":[{\"uri\":\"wat://shared\",\"name\":\"shared again\"}]}") ;; manifest, 136 bytes
  (data (i32.const 2048) "{\"result\":{\"contents\":[{\"uri\":\"wat://shared\",\"text\":\"the other\"}]}}") ;; response, 67 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 136)) ;; ptr 0, len 136
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x80000000043)) ;; (2048 << 32) | 67: ptr 2048, len 67
)
