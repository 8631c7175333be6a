;; boolschema.wat: a valid module, written without an SDK, whose schemas hold boolean
;; subschemas (true for "any value", false for "nothing else"). The host serves
;; them in normal form: {} and {"not": {}}. It also declares instances and an icon.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"read_only\":true,\"tools\":[{\"name\":\"wat.boolschema\",\"title\":\"Booleans\",\"description\":\"Schemas with boolean subschemas.\",\"instances\":\"reuse\",\"icons\":[{\"src\":\"https://example.com/bool.png\",\"sizes\":[\"any\"]}],\"input_schema\":{\"type\":\"object\",\"properties\":{\"doc\":true,\"tags\":{\"type\":\"array\",\"items\":true}},\"additionalProperties\":false},\"output_schema\":{\"type\":\"object\",\"properties\":{\"value\":true},\"required\":[\"value\"],\"additionalProperties\":false}}]}") ;; manifest, 452 bytes
  (data (i32.const 2048) "{\"result\":{\"value\":1}}") ;; response, 22 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 452)) ;; ptr 0, len 452
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.const 0x80000000016)) ;; (2048 << 32) | 22: ptr 2048, len 22
)
