;; notes.wat: a hostile user of toolhost_v1.progress and toolhost_v1.log.
;; It calls them in _initialize (at load, where notes go nowhere, and at
;; the start of each call, where they count) and in toolhost_describe,
;; then in its one tool, notes.hostile, with every bad argument
;; the ABI allows: NaN and infinite numbers, pointers outside memory,
;; lengths that overflow, a message the size of its whole memory, levels
;; out of range, invalid UTF-8, and more messages and progress than the
;; per-call limits let through. The result is one digit per call in this
;; order, each the abi.NoteStatus returned (0 accepted, 1 dropped,
;; 2 invalid); the host tests check it reads "201220002010". The progress
;; its caller gets is 0 (from _initialize) and 1002 of 1002: every other
;; note is invalid, does not increase, or falls in the same rate-limit
;; interval and is replaced by the last.
(module
  (import "toolhost_v1" "progress" (func $progress (param f64 f64 i32 i32) (result i32)))
  (import "toolhost_v1" "log" (func $log (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)

  (data (i32.const 0)
    "{\"abi\":1,\"tools\":[{"
    "\"name\":\"notes.hostile\",\"title\":\"Hostile notes\","
    "\"description\":\"Calls progress and log with bad arguments.\","
    "\"input_schema\":{\"type\":\"object\"},\"timeout_ms\":5000}]}\00")
  (data (i32.const 2048) "step")          ;; 4 bytes
  (data (i32.const 2064) "ok\ff\fe")      ;; 4 bytes, not UTF-8
  (data (i32.const 2080) "bad level")     ;; 9 bytes
  (data (i32.const 2096) "{\"result\":\"............\"}") ;; 25 bytes; digits at 2107

  (global $heap (mut i32) (i32.const 4096))

  ;; At load the host answers "dropped" and carries on; in a call these
  ;; are the call's first notes.
  (func (export "_initialize")
    (drop (call $log (i32.const 2) (i32.const 2048) (i32.const 4)))
    (drop (call $progress (f64.const 0) (f64.const 0) (i32.const 0) (i32.const 0))))

  (func (export "toolhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (local $ptr i32)
    (local.set $ptr (global.get $heap))
    (global.set $heap (i32.and (i32.add (i32.add (local.get $ptr) (local.get $size)) (i32.const 7)) (i32.const -8)))
    (if (i32.gt_u (global.get $heap) (i32.const 65536)) (then unreachable))
    (local.get $ptr))

  (func $pack (param $ptr i32) (param $len i32) (result i64)
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
      (i64.extend_i32_u (local.get $len))))

  (func (export "toolhost_describe") (result i64)
    (local $n i32)
    (drop (call $log (i32.const 4) (i32.const 0) (i32.const 65536)))
    (block $done
      (loop $scan
        (br_if $done (i32.eqz (i32.load8_u (local.get $n))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $scan)))
    (call $pack (i32.const 0) (local.get $n)))

  ;; $digit stores status s as the k-th digit of the result.
  (func $digit (param $k i32) (param $s i32)
    (i32.store8 (i32.add (i32.const 2107) (local.get $k)) (i32.add (i32.const 48) (local.get $s))))

  (func (export "toolhost_call")
      (param $name_ptr i32) (param $name_len i32) (param $args_ptr i32) (param $args_len i32)
      (result i64)
    (local $i i32)
    (local $s i32)
    ;; 0: done is NaN -> invalid
    (call $digit (i32.const 0) (call $progress (f64.const nan) (f64.const 10) (i32.const 0) (i32.const 0)))
    ;; 1: a NaN total is an unknown total -> accepted (held, then replaced)
    (call $digit (i32.const 1) (call $progress (f64.const 1) (f64.const nan) (i32.const 2048) (i32.const 4)))
    ;; 2: not above the last -> dropped
    (call $digit (i32.const 2) (call $progress (f64.const 1) (f64.const 10) (i32.const 0) (i32.const 0)))
    ;; 3: a message past the end of memory -> invalid
    (call $digit (i32.const 3) (call $progress (f64.const 2) (f64.const inf) (i32.const -16) (i32.const 100)))
    ;; 4: a length that wraps around 2^32 -> invalid
    (call $digit (i32.const 4) (call $progress (f64.const 2) (f64.const 10) (i32.const 1) (i32.const -1)))
    ;; 5, 6: levels out of range -> accepted as error
    (call $digit (i32.const 5) (call $log (i32.const 99) (i32.const 2080) (i32.const 9)))
    (call $digit (i32.const 6) (call $log (i32.const -1) (i32.const 2080) (i32.const 9)))
    ;; 7: the whole memory as a message -> accepted, truncated
    (call $digit (i32.const 7) (call $log (i32.const 1) (i32.const 0) (i32.const 65536)))
    ;; 8: a pointer outside memory -> invalid
    (call $digit (i32.const 8) (call $log (i32.const 1) (i32.const 0x7fffffff) (i32.const 1)))
    ;; 9: invalid UTF-8 -> accepted, repaired
    (call $digit (i32.const 9) (call $log (i32.const 1) (i32.const 2064) (i32.const 4)))
    ;; 10: 200 more messages, over the 100 a call may log -> the last is dropped
    (block $end
      (loop $more
        (local.set $s (call $log (i32.const 0) (i32.const 2048) (i32.const 4)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $more (i32.lt_u (local.get $i) (i32.const 200)))))
    (call $digit (i32.const 10) (local.get $s))
    ;; 11: progress 3 .. 1002 of 1002, as fast as it goes -> the last is accepted
    (local.set $i (i32.const 3))
    (loop $fast
      (local.set $s (call $progress (f64.convert_i32_u (local.get $i)) (f64.const 1002) (i32.const 2048) (i32.const 4)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $fast (i32.le_u (local.get $i) (i32.const 1002))))
    (call $digit (i32.const 11) (local.get $s))
    (call $pack (i32.const 2096) (i32.const 25)))
)
