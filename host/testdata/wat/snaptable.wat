;; snaptable.wat: a valid module whose _initialize changes its table (it
;; puts a function in slot 0), which a snapshot cannot carry: with
;; host.Config.Snapshot naming it, the host warns once and its instances run
;; _initialize. wat.snaptable calls through the slot and returns
;; {"result":7}, so a call that ran without _initialize traps.
(module
  (memory (export "memory") 1)
  (table 1 funcref)
  (elem declare func $seven)
  (data (i32.const 0)
    "{\"abi\":1,\"tools\":[{\"name\":\"wat.snaptable\",\"input_schema\":{\"type\":\"object\"},\"timeout_ms\":1000}]}") ;; 95 bytes
  (data (i32.const 2048) "{\"result\":7}") ;; 12 bytes
  (global $heap (mut i32) (i32.const 4096))
  (type $i32 (func (result i32)))
  (func $seven (result i32) (i32.const 7))
  (func (export "_initialize")
    (table.set 0 (i32.const 0) (ref.func $seven)))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 95)) ;; ptr 0, len 95
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (drop (call_indirect (type $i32) (i32.const 0)))
    (i64.const 0x8000000000c)) ;; (2048 << 32) | 12
)
