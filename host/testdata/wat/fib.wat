;; fib.wat: a well-formed module whose work is recursion without a loop, for
;; the deadline tests. The tool wat.fib returns {"result":F} where F is the
;; n-th Fibonacci number (mod 2^32) of the doubly recursive definition, n
;; being the decimal digits of its arguments ({"n":30} -> n = 30). $fib has
;; no loop, so before the termination check ran at function entries a
;; deadline could not stop it: {"n":60} runs for hours. Arguments and the
;; result are read and written by short loops outside the recursion. The
;; export fib(n) is the same function, for BenchmarkDeadlineCost.
(module
  (memory (export "memory") 1)

  (data (i32.const 0)
    "{\"abi\":1,\"tools\":["
    "{\"name\":\"wat.fib\",\"input_schema\":{\"type\":\"object\"},\"timeout_ms\":300}]}\00")
  (data (i32.const 1024) "{\"result\":")   ;; 10 bytes

  ;; The bump allocator's next free byte; an instance serves one call.
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

  ;; fib: no loop, two calls.
  (func $fib (export "fib") (param $n i32) (result i32)
    (if (i32.lt_s (local.get $n) (i32.const 2))
      (then (return (local.get $n))))
    (i32.add
      (call $fib (i32.sub (local.get $n) (i32.const 1)))
      (call $fib (i32.sub (local.get $n) (i32.const 2)))))

  ;; result: {"result":V} with V in decimal.
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
    (local $i i32)
    (local $c i32)
    (local $n i32)
    ;; n: the decimal digits of the arguments, in order
    (block $done
      (loop $scan
        (br_if $done (i32.ge_u (local.get $i) (local.get $args_len)))
        (local.set $c (i32.sub (i32.load8_u (i32.add (local.get $args_ptr) (local.get $i))) (i32.const 48)))
        (if (i32.lt_u (local.get $c) (i32.const 10))
          (then (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10)) (local.get $c)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (call $result (call $fib (local.get $n))))
)
