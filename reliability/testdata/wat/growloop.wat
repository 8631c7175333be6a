;; growloop.wat: toolhost_call grows memory one page at a time, touching
;; each new page, until memory.grow refuses; then it traps (unreachable),
;; as a runtime out of memory would.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.growloop\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 76 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 76)) ;; ptr 0, len 76
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (local $old i32)
    (loop $more
      (local.set $old (memory.grow (i32.const 1)))
      (if (i32.lt_s (local.get $old) (i32.const 0)) (then unreachable))
      (i32.store8 (i32.shl (local.get $old) (i32.const 16)) (i32.const 1))
      (br $more))
    (i64.const 0))
)
