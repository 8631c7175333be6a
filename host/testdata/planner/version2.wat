;; A planner whose toolhost_abi_version returns 2: LoadPlanner must refuse it.
(module
  (memory (export "memory") 1)
  (func (export "toolhost_abi_version") (result i32) (i32.const 2))
  (func (export "toolhost_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "toolhost_plan") (param i32 i32) (result i64) (i64.const 0)))
