;; command.wat: a complete ABI v1 module that is a WASI command, not a
;; reactor: it exports _start and no _initialize, as AssemblyScript
;; (with the WASI shim) and Go or C built without -buildmode=c-shared /
;; -mexec-model=reactor do. toolhost never calls _start, so its
;; initialisation would never run; the load refuses it (host.CommandError).
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"tools\":[{\"name\":\"wat.command\",\"input_schema\":{\"type\":\"object\"}}]}") ;; manifest, 75 bytes
  (data (i32.const 1024) "{\"result\":null}") ;; 15 bytes
  (global $heap (mut i32) (i32.const 4096))
  (func (export "_start"))
  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
  (func (export "toolhost_describe") (result i64) (i64.const 75)) ;; ptr 0, len 75
  (func (export "toolhost_call") (param i32 i32 i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 15)))
)
