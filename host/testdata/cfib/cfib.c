/*
 * cfib — a test fixture for deadlines on C code whose work is recursion
 * without a loop: one tool, c.fib, that returns the n-th Fibonacci number
 * (mod 2^32) of the doubly recursive definition, n being the decimal digits
 * of its arguments ({"n":38} -> 38). The recursion goes through a volatile
 * function pointer, so clang keeps it a recursion instead of turning it
 * into a loop: compiled, fib has no loop, and before the termination check
 * ran at function entries a deadline could not stop it (a 300 ms tool
 * computing fib(38) ran 5 s and succeeded). host/recursion_test.go builds it
 * with testwasm.C.
 */
#define TOOLHOST_IMPLEMENTATION
#include "toolhost.h"

#include <stdint.h>

const char *toolhost_manifest(void) {
	return "{\"abi\":1,\"idempotent\":true,\"read_only\":true,\"tools\":[{\"name\":\"c.fib\","
	       "\"description\":\"The n-th Fibonacci number, computed by recursion.\","
	       "\"input_schema\":{\"type\":\"object\"},\"timeout_ms\":300}]}";
}

static uint32_t fib(uint32_t n);

/* volatile: clang must call through it, so it cannot see the recursion. */
static uint32_t (*volatile fib_ptr)(uint32_t) = fib;

static uint32_t fib(uint32_t n) {
	return n < 2 ? n : fib_ptr(n - 1) + fib_ptr(n - 2);
}

void toolhost_handle(th_call *c) {
	uint32_t n = 0;
	for (size_t i = 0; i < c->args_len; i++) {
		if (c->args[i] >= '0' && c->args[i] <= '9') n = n * 10 + (uint32_t)(c->args[i] - '0');
	}
	th_int(c, fib(n));
}
