;; snapinit.wat: a valid module for the snapshot tests (host.Config.Snapshot).
;; Its _initialize changes everything a snapshot must carry: it grows memory
;; by a page, copies the passive segment "SNAP" into the new page, drops the
;; segment and counts itself in a global. wat.snapinit returns
;; {"result":N}, N = inits*100000 + pages*10000 + calls*1000 + the byte
;; _initialize copied (83, 'S'): 121083 in an instance that ran _initialize
;; once (or was restored from one that did) and serves its first call. The
;; arguments {"do":"d"} (the byte at offset 7) make the call read the
;; dropped segment again, which traps. _initialize traps if memory cannot
;; grow (a tool memory limit of one page).
(module
  (memory (export "memory") 1)

  (data (i32.const 0)
    "{\"abi\":1,\"tools\":[{\"name\":\"wat.snapinit\",\"input_schema\":{\"type\":\"object\"},\"timeout_ms\":1000}]}\00")
  (data (i32.const 1024) "{\"result\":")   ;; 10 bytes
  (data $snap "SNAP")

  (global $inits (mut i32) (i32.const 0))
  (global $calls (mut i32) (i32.const 0))
  (global $heap (mut i32) (i32.const 8192))

  (func (export "_initialize")
    (if (i32.lt_s (memory.grow (i32.const 1)) (i32.const 0))
      (then unreachable))
    (memory.init $snap (i32.const 70000) (i32.const 0) (i32.const 4))
    (data.drop $snap)
    (global.set $inits (i32.add (global.get $inits) (i32.const 1))))

  (func (export "toolhost_abi_version") (result i32)
    (i32.const 1))

  (func $alloc (export "toolhost_alloc") (param $size i32) (result i32)
    (local $ptr i32)
    (local.set $ptr (global.get $heap))
    (global.set $heap
      (i32.and (i32.add (i32.add (local.get $ptr) (local.get $size)) (i32.const 7))
               (i32.const -8)))
    (if (i32.gt_u (global.get $heap) (i32.const 65536))
      (then unreachable))
    (local.get $ptr))

  (func $pack (param $ptr i32) (param $len i32) (result i64)
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
      (i64.extend_i32_u (local.get $len))))

  (func (export "toolhost_describe") (result i64)
    (local $n i32)
    (block $done
      (loop $scan
        (br_if $done (i32.eqz (i32.load8_u (local.get $n))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $scan)))
    (call $pack (i32.const 0) (local.get $n)))

  ;; result writes {"result":N} at 2048 and returns it packed.
  (func $result (param $v i32) (result i64)
    (local $p i32)
    (local $len i32)
    (local.set $p (i32.const 4010))
    (loop $digits
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p)
        (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $digits (i32.ne (local.get $v) (i32.const 0))))
    (local.set $len (i32.sub (i32.const 4010) (local.get $p)))
    (memory.copy (i32.const 2048) (i32.const 1024) (i32.const 10))
    (memory.copy (i32.const 2058) (local.get $p) (local.get $len))
    (i32.store8 (i32.add (i32.const 2058) (local.get $len)) (i32.const 125)) ;; '}'
    (call $pack (i32.const 2048) (i32.add (local.get $len) (i32.const 11))))

  (func (export "toolhost_call")
      (param $name_ptr i32) (param $name_len i32) (param $args_ptr i32) (param $args_len i32)
      (result i64)
    (if (i32.ge_u (local.get $args_len) (i32.const 9))
      (then
        (if (i32.eq (i32.load8_u (i32.add (local.get $args_ptr) (i32.const 7))) (i32.const 100)) ;; 'd'
          (then (memory.init $snap (i32.const 70004) (i32.const 0) (i32.const 1))))))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (call $result
      (i32.add
        (i32.add
          (i32.mul (global.get $inits) (i32.const 100000))
          (i32.mul (memory.size) (i32.const 10000)))
        (i32.add
          (i32.mul (global.get $calls) (i32.const 1000))
          (i32.load8_u (i32.const 70000))))))
)
