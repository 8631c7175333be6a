;; badschema.wat: declares a tool whose input schema cannot be served to MCP clients:
;; the second subschema of /properties/doc/anyOf is the number 7.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.badschema\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"doc\":{\"anyOf\":[true,7]}}}}]}") ;; manifest, 117 bytes
  (data (i32.const 2048) "{\"result\":{\"value\":1}}") ;; response, 22 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 117)) ;; ptr 0, len 117
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x80000000016)) ;; (2048 << 32) | 22: ptr 2048, len 22
)
