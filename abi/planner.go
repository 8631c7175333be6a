package abi

// ExportPlan is the planner export, `(ptr, len i32) -> i64`: it reads the
// planner input JSON ({"goal", "history", "last_error", "pending",
// "next_id"}) from the len bytes at ptr, which the host wrote into memory
// obtained from toolhost_alloc, and returns the packed pointer and length of
// its output JSON, {"steps": [...]} or {"error": {"message": "..."}}. A
// planner module exports memory, toolhost_abi_version, toolhost_alloc and
// toolhost_plan; it need not export the tool functions. See docs/ABI.md.
const ExportPlan = "toolhost_plan"
