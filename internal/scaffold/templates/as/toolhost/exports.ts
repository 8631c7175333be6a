// A copy of abi/assemblyscript/assembly/exports.ts from toolhost, made by make abi-bundle.
// The ABI's exports. A tool module re-exports them from its entry file:
//   export * from "../../abi/assemblyscript/assembly/exports";
import { ABI_VERSION, manifest, dispatch } from "./index";

// Memory handed to the host by toolhost_alloc and the last response, kept
// alive until the next toolhost_call returns (the ABI's promise).
let held: ArrayBuffer[] = [];
let out: ArrayBuffer = new ArrayBuffer(0);

function pack(b: ArrayBuffer): i64 {
  return (<i64>changetype<usize>(b) << 32) | <i64>b.byteLength;
}

export function toolhost_abi_version(): i32 { return ABI_VERSION; }

export function toolhost_alloc(size: i32): i32 {
  const b = new ArrayBuffer(size);
  held.push(b);
  return <i32>changetype<usize>(b);
}

export function toolhost_describe(): i64 {
  out = String.UTF8.encode(manifest());
  return pack(out);
}

export function toolhost_call(namePtr: i32, nameLen: i32, argsPtr: i32, argsLen: i32): i64 {
  const name = String.UTF8.decodeUnsafe(<usize>namePtr, <usize>nameLen);
  const args = String.UTF8.decodeUnsafe(<usize>argsPtr, <usize>argsLen);
  held = [];
  out = String.UTF8.encode(dispatch(name, args));
  return pack(out);
}
