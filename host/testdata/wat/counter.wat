;; counter.wat: a well-formed module for the warm-instance tests. Its state
;; is one global counter that every call increments and returns, so a test
;; sees whether two calls ran in one instance (2) or not (1). Two tools run
;; the same code: counter.reuse declares "instances": "reuse",
;; counter.fresh does not. The arguments {"do":"X"} (the byte at offset 7)
;; pick what a call does:
;;   n (or no arguments): increment, return {"result":N}
;;   s: increment, return a schema error
;;   i: increment, return an internal error
;;   u: trap (unreachable)
;;   p: spin forever (until the host stops it)
;;   g: increment, grow memory by 4 pages, return {"result":N}
;; "n" also traps if it finds another call inside the instance (a busy flag
;; held across a short loop): the host must run one call at a time in it.
(module
  (memory (export "memory") 1)

  (data (i32.const 0)
    "{\"abi\":1,\"tools\":["
    "{\"name\":\"counter.reuse\",\"instances\":\"reuse\",\"input_schema\":{\"type\":\"object\"},\"timeout_ms\":1000},"
    "{\"name\":\"counter.fresh\",\"input_schema\":{\"type\":\"object\"},\"timeout_ms\":1000}]}\00")
  (data (i32.const 1024) "{\"result\":")   ;; 10 bytes
  (data (i32.const 1040) "{\"error\":{\"kind\":\"schema\",\"message\":\"refused\"}}")   ;; 47 bytes
  (data (i32.const 1104) "{\"error\":{\"kind\":\"internal\",\"message\":\"failed\"}}") ;; 48 bytes

  (global $count (mut i32) (i32.const 0))
  (global $busy (mut i32) (i32.const 0))
  ;; The bump allocator's next free byte; it starts over at every call, so
  ;; a reused instance does not grow by its arguments.
  (global $heap (mut i32) (i32.const 8192))

  (func (export "toolhost_abi_version") (result i32)
    (i32.const 1))

  (func $alloc (export "toolhost_alloc") (param $size i32) (result i32)
    (local $ptr i32)
    (local $end i32)
    (local.set $ptr (global.get $heap))
    (local.set $end
      (i32.and (i32.add (i32.add (local.get $ptr) (local.get $size)) (i32.const 7))
               (i32.const -8)))
    (if (i32.gt_u (local.get $end) (i32.shl (memory.size) (i32.const 16)))
      (then
        (if (i32.lt_s
              (memory.grow
                (i32.sub
                  (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16))
                  (memory.size)))
              (i32.const 0))
          (then unreachable))))
    (global.set $heap (local.get $end))
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
    (local $q i32)
    (local $len i32)
    ;; digits backwards into 4000..4010, then forwards after the prefix
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
    (local $op i32)
    (local $i i32)
    (global.set $heap (i32.const 8192))
    (local.set $op (i32.const 110)) ;; 'n'
    (if (i32.ge_u (local.get $args_len) (i32.const 9))
      (then (local.set $op (i32.load8_u (i32.add (local.get $args_ptr) (i32.const 7))))))
    (if (i32.eq (local.get $op) (i32.const 117)) ;; 'u'
      (then unreachable))
    (if (i32.eq (local.get $op) (i32.const 112)) ;; 'p'
      (then (loop $forever (br $forever))))
    (global.set $count (i32.add (global.get $count) (i32.const 1)))
    (if (i32.eq (local.get $op) (i32.const 115)) ;; 's'
      (then (return (call $pack (i32.const 1040) (i32.const 47)))))
    (if (i32.eq (local.get $op) (i32.const 105)) ;; 'i'
      (then (return (call $pack (i32.const 1104) (i32.const 48)))))
    (if (i32.eq (local.get $op) (i32.const 103)) ;; 'g'
      (then (drop (memory.grow (i32.const 4)))))
    ;; one call at a time: trap if another is inside
    (if (global.get $busy) (then unreachable))
    (global.set $busy (i32.const 1))
    (loop $hold
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $hold (i32.lt_u (local.get $i) (i32.const 2000))))
    (global.set $busy (i32.const 0))
    (call $result (global.get $count)))
)
