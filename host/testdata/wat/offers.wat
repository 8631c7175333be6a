;; offers.wat: a module offering the resource wat://shared, the template wat://item/{id}
;; and the prompt wat-shared beside its tool; every call answers one text content.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.offers\",\"input_schema\":{\"type\":\"object\"}}],\"resources\":[{\"uri\":\"wat://shared\",\"name\":\"shared\"}],\"resource_templates\":[{\"uriTemplate\":\"wat://item/{id}\",\"name\":\"item\"}],\"prompts\":[{\"name\":\"wat-shared\"}]}") ;; manifest, 232 bytes
  (data (i32.const 2048) "{\"result\":{\"contents\":[{\"uri\":\"wat://shared\",\"text\":\"shared\"}]}}") ;; response, 64 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 232)) ;; ptr 0, len 232
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x80000000040)) ;; (2048 << 32) | 64: ptr 2048, len 64
)
