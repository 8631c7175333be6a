package backend_test

import (
	"context"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/backend"
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/backend/isa/amd64"
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/backend/isa/arm64"
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/frontend"
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/ssa"
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/testcases"
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/wazevoapi"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
)

// TestE2E_ensureTermination checks the loop-header and function-entry termination checks on both backends, whatever
// the host architecture: compiled code only counts down the deadline and compares it with the
// termination epoch, and calls the check-module-exit-code trampoline out of the hot path.
func TestE2E_ensureTermination(t *testing.T) {
	for _, tc := range []struct {
		name         string
		m            *wasm.Module
		arm64, amd64 string
	}{
		{name: "loop_br", m: testcases.LoopBr.Module, arm64: loopBrARM64, amd64: loopBrAMD64},
		{name: "loop_with_param_results", m: testcases.LoopBrWithParamResults.Module, arm64: loopParamsARM64, amd64: loopParamsAMD64},
		// A function that calls makes the same check at its entry, so that recursion without a loop
		// stops too; the hot path takes one branch past the exit to Go.
		{name: "recursive_fibonacci", m: testcases.FibonacciRecursive.Module, arm64: fibARM64, amd64: fibAMD64},
	} {
		for _, arch := range []struct {
			name    string
			machine func() backend.Machine
			exp     string
		}{
			{"arm64", arm64.NewBackend, tc.arm64},
			{"amd64", amd64.NewBackend, tc.amd64},
		} {
			t.Run(tc.name+"/"+arch.name, func(t *testing.T) {
				require.NoError(t, tc.m.Validate(api.CoreFeaturesV2))
				ssab := ssa.NewBuilder()
				offset := wazevoapi.NewModuleContextOffsetData(tc.m, false)
				fc := frontend.NewFrontendCompiler(tc.m, ssab, &offset, true, false, false)
				machine := arch.machine()
				machine.DisableStackCheck()
				be := backend.NewCompiler(context.Background(), machine, ssab)

				code := &tc.m.CodeSection[0]
				typeIndex := tc.m.FunctionSection[0]
				fc.Init(0, typeIndex, &tc.m.TypeSection[typeIndex], code.LocalTypes, code.Body, false, 0)
				fc.LowerToSSA()
				ssab.RunPasses()
				be.Lower()
				be.RegAlloc()
				require.NoError(t, be.Finalize(context.Background()))
				require.Equal(t, arch.exp, be.Format())
			})
		}
	}
}

const (
	loopBrARM64 = `
L0 (SSA Block: blk0):
	stp x30, xzr, [sp, #-0x10]!
	sub sp, sp, #0x10
	orr x27, xzr, #0x10
	str x27, [sp, #-0x10]!
	str x0, [sp, #0x10]
L1 (SSA Block: blk1):
	ldr x8, [x0, #0x4e0]
	sub x8, x8, #0x1
	str x8, [x0, #0x4e0]
	ldr x9, [x0, #0x4d8]
	ldr x9, [x9]
	sub x8, x8, x9
	subs xzr, x8, #0x0
	b.gt #0x14, (L3)
L4 (SSA Block: blk4):
	ldr x8, [x0, #0x58]
	bl x8
	ldr x0, [sp, #0x10]
	b #-0x2c (L1)
L3 (SSA Block: blk3):
	b #-0x30 (L1)
`
	loopBrAMD64 = `
L0 (SSA Block: blk0):
	pushq %rbp
	movq %rsp, %rbp
	pushq %rdx
	sub $16, %rsp
	mov.q %rax, (%rsp)
L1 (SSA Block: blk1):
	movq 1248(%rax), %rcx
	sub $1, %rcx
	mov.q %rcx, 1248(%rax)
	movq 1240(%rax), %rdx
	sub (%rdx), %rcx
	cmpq $0, %rcx
	jnle L3
L4 (SSA Block: blk4):
	movq (%rsp), %rcx
	callq *88(%rcx)
	movq (%rsp), %rax
	jmp L1
L3 (SSA Block: blk3):
	jmp L1
`
	loopParamsARM64 = `
L0 (SSA Block: blk0):
	stp x30, xzr, [sp, #-0x10]!
	sub sp, sp, #0x10
	orr x27, xzr, #0x10
	str x27, [sp, #-0x10]!
	str x0, [sp, #0x10]
	str w2, [sp, #0x18]
L1 (SSA Block: blk1):
	ldr x8, [x0, #0x4e0]
	sub x8, x8, #0x1
	str x8, [x0, #0x4e0]
	ldr x9, [x0, #0x4d8]
	ldr x9, [x9]
	sub x8, x8, x9
	subs xzr, x8, #0x0
	b.gt #0x18, (L3)
L4 (SSA Block: blk4):
	ldr x8, [x0, #0x58]
	bl x8
	ldr x0, [sp, #0x10]
	ldr w2, [sp, #0x18]
	b #-0x30 (L1)
L3 (SSA Block: blk3):
	orr w8, wzr, #0x1
	cbz w8, #0x8 L5
L6 (SSA Block: blk6):
	b #-0x3c (L1)
L5 (SSA Block: blk5):
L2 (SSA Block: blk2):
	mov x0, x2
	add sp, sp, #0x10
	add sp, sp, #0x10
	ldr x30, [sp], #0x10
	ret
`
	loopParamsAMD64 = `
L0 (SSA Block: blk0):
	pushq %rbp
	movq %rsp, %rbp
	pushq %rdx
	sub $16, %rsp
	mov.q %rax, (%rsp)
	mov.l %rcx, 8(%rsp)
L1 (SSA Block: blk1):
	movq 1248(%rax), %rdx
	sub $1, %rdx
	mov.q %rdx, 1248(%rax)
	movq 1240(%rax), %rbx
	sub (%rbx), %rdx
	cmpq $0, %rdx
	jnle L3
L4 (SSA Block: blk4):
	movq (%rsp), %rdx
	callq *88(%rdx)
	movq %rdx, %rax
	movzx.lq 8(%rsp), %rcx
	jmp L1
L3 (SSA Block: blk3):
	movl $1, %edx
	testl %edx, %edx
	jz L5
L6 (SSA Block: blk6):
	jmp L1
L5 (SSA Block: blk5):
L2 (SSA Block: blk2):
	movl %ecx, %eax
	add $16, %rsp
	popq %rdx
	movq %rbp, %rsp
	popq %rbp
	ret
`
	fibARM64 = `
L0 (SSA Block: blk0):
	stp x30, xzr, [sp, #-0x10]!
	sub sp, sp, #0x20
	orr x27, xzr, #0x20
	str x27, [sp, #-0x10]!
	str x0, [sp, #0x14]
	str x1, [sp, #0x1c]
	str w2, [sp, #0x10]
	ldr x8, [x0, #0x4e0]
	sub x8, x8, #0x1
	str x8, [x0, #0x4e0]
	ldr x9, [x0, #0x4d8]
	ldr x9, [x9]
	sub x8, x8, x9
	subs xzr, x8, #0x0
	b.gt #0x10, (L6)
L2 (SSA Block: blk2):
	ldr x8, [x0, #0x58]
	bl x8
	b #0x4 (L1)
L6 (SSA Block: blk6):
L1 (SSA Block: blk1):
	ldr w8, [sp, #0x10]
	subs wzr, w8, #0x2
	b.ge #0x18, (L4)
L3 (SSA Block: blk3):
	mov x0, x8
	add sp, sp, #0x10
	add sp, sp, #0x20
	ldr x30, [sp], #0x10
	ret
L4 (SSA Block: blk4):
L5 (SSA Block: blk5):
	sub w2, w8, #0x1
	ldr x9, [sp, #0x14]
	mov x0, x9
	ldr x10, [sp, #0x1c]
	mov x1, x10
	bl f0
	str w0, [sp, #0x24]
	ldr w8, [sp, #0x10]
	sub w2, w8, #0x2
	ldr x8, [sp, #0x14]
	mov x0, x8
	ldr x8, [sp, #0x1c]
	mov x1, x8
	bl f0
	ldr w8, [sp, #0x24]
	add w0, w8, w0
	add sp, sp, #0x10
	add sp, sp, #0x20
	ldr x30, [sp], #0x10
	ret
`
	fibAMD64 = `
L0 (SSA Block: blk0):
	pushq %rbp
	movq %rsp, %rbp
	pushq %rdx
	sub $32, %rsp
	mov.q %rax, (%rsp)
	mov.q %rbx, 12(%rsp)
	mov.l %rcx, 8(%rsp)
	movq 1248(%rax), %rdx
	sub $1, %rdx
	mov.q %rdx, 1248(%rax)
	movq 1240(%rax), %rsi
	sub (%rsi), %rdx
	cmpq $0, %rdx
	jnle L6
L2 (SSA Block: blk2):
	movq (%rsp), %rdx
	callq *88(%rdx)
	jmp L1
L6 (SSA Block: blk6):
	movq %rax, %rdx
L1 (SSA Block: blk1):
	movzx.lq 8(%rsp), %rax
	cmpl $2, %eax
	jnl L4
L3 (SSA Block: blk3):
	add $32, %rsp
	popq %rdx
	movq %rbp, %rsp
	popq %rbp
	ret
L4 (SSA Block: blk4):
L5 (SSA Block: blk5):
	movq %rax, %rcx
	sub $1, %ecx
	movq %rdx, %rax
	movq 12(%rsp), %rbx
	call f0
	mov.l %rax, 20(%rsp)
	movzx.lq 8(%rsp), %rcx
	sub $2, %ecx
	movq %rdx, %rax
	movq 12(%rsp), %rdx
	movq %rdx, %rbx
	call f0
	movzx.lq 20(%rsp), %rcx
	add %eax, %ecx
	movq %rcx, %rax
	add $32, %rsp
	popq %rdx
	movq %rbp, %rsp
	popq %rbp
	ret
`
)
