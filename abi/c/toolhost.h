/*
 * toolhost.h — the toolhost guest ABI, version 1, for C, in one header.
 *
 * A tool module is a WASI preview 1 reactor. This header supplies its
 * exports (toolhost_abi_version, toolhost_alloc, toolhost_describe,
 * toolhost_call), owns the memory the host writes into, and offers a small
 * JSON writer for results and helpers for error responses. The module
 * supplies two things:
 *
 *     // The manifest (docs/ABI.md): what toolhost_describe returns.
 *     const char *toolhost_manifest(void);
 *
 *     // One call: read c->args (JSON, already checked by the host against
 *     // the tool's input schema), write the result with the th_* writer,
 *     // or fail with th_error / th_error_retry.
 *     void toolhost_handle(th_call *c);
 *
 * In exactly one .c file of the module:
 *
 *     #define TOOLHOST_IMPLEMENTATION
 *     #include "toolhost.h"
 *
 * Build (Debian: clang, lld, wasi-libc, libclang-rt-dev-wasm32):
 *
 *     clang --target=wasm32-wasi -mexec-model=reactor -O2 -I abi/c -o tool.wasm *.c
 *
 * Memory: a buffer from toolhost_alloc stays valid until the next
 * toolhost_call returns (the ABI's rule); so does a response. Both are
 * freed when the call after it starts, so a module whose instance is reused
 * does not grow. A guest instance runs one call at a time: nothing here is
 * thread-safe, and nothing needs to be.
 *
 * Strings written with th_str are escaped for JSON, and bytes that are not
 * valid UTF-8 are replaced by U+FFFD: the host refuses a response that is
 * not valid UTF-8.
 */
#ifndef TOOLHOST_H
#define TOOLHOST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The error kinds a tool may return (the host adds the rest). */
typedef enum {
	TH_TRANSIENT, /* try again later: the host may retry it */
	TH_SCHEMA,    /* the arguments are wrong: never retried */
	TH_INTERNAL   /* the tool is broken: never retried */
} th_kind;

/* th_buf is a growable byte buffer. oom is set when growing failed; the
 * call then answers with an internal error. */
typedef struct {
	char *data;
	size_t len, cap;
	int oom;
} th_buf;

#define TH_MAX_DEPTH 64

/* th_call is one call: its tool name and arguments, and the result being
 * written. */
typedef struct th_call {
	const char *name; /* the tool's manifest name, not NUL-terminated */
	size_t name_len;
	const char *args; /* the arguments, a JSON object, not NUL-terminated */
	size_t args_len;

	th_buf out;      /* the response being written */
	int failed;      /* set by th_error */
	int depth;       /* open objects and arrays */
	unsigned char first[TH_MAX_DEPTH]; /* no value yet at this depth */
	int after_key;   /* a key was written: the next value needs no comma */
} th_call;

/* Supplied by the module. */
const char *toolhost_manifest(void);
void toolhost_handle(th_call *c);

/* name_is reports whether the call is for the tool named name. */
int th_name_is(const th_call *c, const char *name);

/* The JSON writer: values, and objects and arrays of them. Commas are
 * placed for you; th_key precedes each member's value. */
void th_obj_begin(th_call *c);
void th_obj_end(th_call *c);
void th_arr_begin(th_call *c);
void th_arr_end(th_call *c);
void th_key(th_call *c, const char *key);
void th_str(th_call *c, const char *s, size_t len);
void th_cstr(th_call *c, const char *s);
void th_int(th_call *c, int64_t v);
void th_num(th_call *c, double v); /* NaN and infinities are written as null */
void th_bool(th_call *c, int v);
void th_null(th_call *c);

/* th_error fails the call with kind and a printf-style message; whatever
 * result was written is discarded. th_error_retry is a transient error
 * that asks the host to wait retry_after_ms before trying again (an
 * upstream's Retry-After). */
void th_error(th_call *c, th_kind kind, const char *fmt, ...);
void th_error_retry(th_call *c, int64_t retry_after_ms, const char *fmt, ...);

/* Log levels for th_log (abi.LogLevel): the MCP severities a tool may use. */
typedef enum {
	TH_DEBUG = 0,
	TH_INFO = 1,
	TH_NOTICE = 2,
	TH_WARNING = 3,
	TH_ERROR = 4
} th_level;

/* Progress and logs (docs/ABI.md, "Progress and logs"): th_progress tells
 * the caller that done of total units of work are done (total <= 0:
 * unknown), with a printf-style message (fmt NULL: none); th_log sends a
 * printf-style message at level to the caller (if it asked for that
 * level) and to the server log. They return the host's status (0
 * accepted, 1 dropped, 2 invalid), which a tool may ignore: they never
 * fail the call. The host sends at most 10 progress notifications a
 * second (always the last), at most 100 log messages (64 KiB) per call;
 * each done must be more than the last. Messages are cut here at 1 KiB
 * (progress) and 4 KiB (log), as the host would cut them. A module that
 * never calls them does not import them. */
int th_progress(th_call *c, double done, double total, const char *fmt, ...);
int th_log(th_call *c, th_level level, const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#ifdef TOOLHOST_IMPLEMENTATION

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Buffers handed to the host: those of the current call and those of the
 * previous one (its arguments and its response), freed when the next call
 * starts. */
typedef struct th_alloc {
	struct th_alloc *next;
} th_alloc;

static th_alloc *th_cur, *th_prev;

static void th_free_list(th_alloc *a) {
	while (a) {
		th_alloc *n = a->next;
		free(a);
		a = n;
	}
}

static void *th_track(size_t size) {
	th_alloc *a = (th_alloc *)malloc(sizeof(th_alloc) + size);
	if (!a) return NULL;
	a->next = th_cur;
	th_cur = a;
	return a + 1;
}

static int64_t th_pack(const void *p, size_t n) {
	return (int64_t)(((uint64_t)(uintptr_t)p << 32) | (uint64_t)(uint32_t)n);
}

__attribute__((export_name("toolhost_abi_version"))) int32_t toolhost_abi_version(void) { return 1; }

/* toolhost_alloc returns 0 when memory is exhausted: the host reports
 * that as the guest's failure. */
__attribute__((export_name("toolhost_alloc"))) int32_t toolhost_alloc(int32_t size) {
	if (size < 0) return 0;
	return (int32_t)(uintptr_t)th_track((size_t)size);
}

__attribute__((export_name("toolhost_describe"))) int64_t toolhost_describe(void) {
	const char *m = toolhost_manifest();
	return th_pack(m, strlen(m));
}

static void th_grow(th_buf *b, size_t more) {
	if (b->oom || b->len + more <= b->cap) return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more) cap *= 2;
	char *d = (char *)realloc(b->data, cap);
	if (!d) {
		b->oom = 1;
		return;
	}
	b->data = d;
	b->cap = cap;
}

static void th_put(th_buf *b, const char *s, size_t n) {
	th_grow(b, n);
	if (b->oom) return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

static void th_puts(th_buf *b, const char *s) { th_put(b, s, strlen(s)); }

/* th_sep writes the comma before a value when it is not the first at its
 * depth (or follows a key). */
static void th_sep(th_call *c) {
	if (c->failed) return;
	if (c->after_key) {
		c->after_key = 0;
		return;
	}
	if (c->depth > 0) {
		if (!c->first[c->depth - 1]) th_put(&c->out, ",", 1);
		c->first[c->depth - 1] = 0;
	}
}

static void th_open(th_call *c, char ch) {
	th_sep(c);
	if (c->failed) return;
	if (c->depth >= TH_MAX_DEPTH) {
		th_error(c, TH_INTERNAL, "result nested deeper than %d", TH_MAX_DEPTH);
		return;
	}
	th_put(&c->out, &ch, 1);
	c->first[c->depth++] = 1;
}

static void th_close(th_call *c, char ch) {
	if (c->failed || c->depth == 0) return;
	c->depth--;
	th_put(&c->out, &ch, 1);
}

void th_obj_begin(th_call *c) { th_open(c, '{'); }
void th_obj_end(th_call *c) { th_close(c, '}'); }
void th_arr_begin(th_call *c) { th_open(c, '['); }
void th_arr_end(th_call *c) { th_close(c, ']'); }

/* th_utf8_len is the length of the valid UTF-8 sequence at s, or 0. */
static size_t th_utf8_len(const unsigned char *s, size_t n) {
	unsigned char b = s[0];
	size_t want;
	uint32_t cp;
	if (b < 0x80) return 1;
	if (b >= 0xC2 && b <= 0xDF) want = 2, cp = b & 0x1F;
	else if (b >= 0xE0 && b <= 0xEF) want = 3, cp = b & 0x0F;
	else if (b >= 0xF0 && b <= 0xF4) want = 4, cp = b & 0x07;
	else return 0;
	if (n < want) return 0;
	for (size_t i = 1; i < want; i++) {
		if ((s[i] & 0xC0) != 0x80) return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if ((want == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (want == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return want;
}

static void th_escaped(th_buf *b, const char *s, size_t len) {
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	th_put(b, "\"", 1);
	for (size_t i = 0; i < len;) {
		unsigned char ch = u[i];
		if (ch == '"' || ch == '\\') {
			char e[2] = {'\\', (char)ch};
			th_put(b, e, 2);
			i++;
		} else if (ch < 0x20) {
			char e[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
			th_put(b, e, 6);
			i++;
		} else {
			size_t n = th_utf8_len(u + i, len - i);
			if (n == 0) {
				th_puts(b, "\\ufffd");
				i++;
			} else {
				th_put(b, s + i, n);
				i += n;
			}
		}
	}
	th_put(b, "\"", 1);
}

void th_key(th_call *c, const char *key) {
	th_sep(c);
	if (c->failed) return;
	th_escaped(&c->out, key, strlen(key));
	th_put(&c->out, ":", 1);
	c->after_key = 1;
}

void th_str(th_call *c, const char *s, size_t len) {
	th_sep(c);
	if (!c->failed) th_escaped(&c->out, s, len);
}

void th_cstr(th_call *c, const char *s) { th_str(c, s, strlen(s)); }

void th_int(th_call *c, int64_t v) {
	char tmp[24];
	th_sep(c);
	if (c->failed) return;
	th_put(&c->out, tmp, (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)v));
}

void th_num(th_call *c, double v) {
	char tmp[32];
	th_sep(c);
	if (c->failed) return;
	if (isnan(v) || isinf(v)) {
		th_puts(&c->out, "null");
		return;
	}
	th_put(&c->out, tmp, (size_t)snprintf(tmp, sizeof tmp, "%.17g", v));
}

void th_bool(th_call *c, int v) {
	th_sep(c);
	if (!c->failed) th_puts(&c->out, v ? "true" : "false");
}

void th_null(th_call *c) {
	th_sep(c);
	if (!c->failed) th_puts(&c->out, "null");
}

static void th_verror(th_call *c, th_kind kind, int64_t retry_after_ms, const char *fmt, va_list ap) {
	static const char *kinds[] = {"transient", "schema", "internal"};
	char msg[1024];
	if (c->failed) return; /* the first error stands */
	vsnprintf(msg, sizeof msg, fmt, ap);
	c->failed = 1;
	c->out.len = 0;
	c->out.oom = 0;
	th_puts(&c->out, "{\"error\":{\"kind\":\"");
	th_puts(&c->out, kinds[kind]);
	th_puts(&c->out, "\",\"message\":");
	th_escaped(&c->out, msg, strlen(msg));
	if (retry_after_ms > 0) {
		char tmp[48];
		th_put(&c->out, tmp, (size_t)snprintf(tmp, sizeof tmp, ",\"retry_after_ms\":%lld", (long long)retry_after_ms));
	}
	th_puts(&c->out, "}}");
}

void th_error(th_call *c, th_kind kind, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	th_verror(c, kind, 0, fmt, ap);
	va_end(ap);
}

void th_error_retry(th_call *c, int64_t retry_after_ms, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	th_verror(c, TH_TRANSIENT, retry_after_ms, fmt, ap);
	va_end(ap);
}

__attribute__((import_module("toolhost_v1"), import_name("progress")))
int32_t th_host_progress(double done, double total, const char *msg, int32_t msg_len);
__attribute__((import_module("toolhost_v1"), import_name("log")))
int32_t th_host_log(int32_t level, const char *msg, int32_t msg_len);

/* th_format prints fmt into buf (of size n) and returns the length kept. */
static int32_t th_format(char *buf, size_t n, const char *fmt, va_list ap) {
	int len;
	if (!fmt) return 0;
	len = vsnprintf(buf, n, fmt, ap);
	if (len < 0) return 0;
	return (size_t)len >= n ? (int32_t)(n - 1) : (int32_t)len;
}

int th_progress(th_call *c, double done, double total, const char *fmt, ...) {
	char msg[1024];
	int32_t n;
	va_list ap;
	(void)c; /* the call being reported on: there is only ever one */
	va_start(ap, fmt);
	n = th_format(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return th_host_progress(done, total, msg, n);
}

int th_log(th_call *c, th_level level, const char *fmt, ...) {
	char msg[4096];
	int32_t n;
	va_list ap;
	(void)c;
	va_start(ap, fmt);
	n = th_format(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return th_host_log((int32_t)level, msg, n);
}

int th_name_is(const th_call *c, const char *name) {
	size_t n = strlen(name);
	return c->name_len == n && memcmp(c->name, name, n) == 0;
}

/* The response outlives the call, until the next one starts. */
static th_buf th_response;

__attribute__((export_name("toolhost_call"))) int64_t toolhost_call(int32_t name_ptr, int32_t name_len, int32_t args_ptr, int32_t args_len) {
	/* This call's arguments were allocated into th_cur; free what the
	 * previous call left (its arguments and response). */
	th_free_list(th_prev);
	th_prev = th_cur;
	th_cur = NULL;
	free(th_response.data);

	th_call c;
	memset(&c, 0, sizeof c);
	c.name = (const char *)(uintptr_t)name_ptr;
	c.name_len = (size_t)name_len;
	c.args = (const char *)(uintptr_t)args_ptr;
	c.args_len = (size_t)args_len;
	th_puts(&c.out, "{\"result\":");
	toolhost_handle(&c);
	if (!c.failed) {
		if (c.depth != 0) th_error(&c, TH_INTERNAL, "the tool left %d objects or arrays open", c.depth);
		else if (c.out.len == strlen("{\"result\":")) th_error(&c, TH_INTERNAL, "the tool wrote no result");
		else th_put(&c.out, "}", 1);
	}
	if (c.out.oom) {
		static const char oom[] = "{\"error\":{\"kind\":\"internal\",\"message\":\"out of memory writing the response\"}}";
		free(c.out.data);
		th_response.data = NULL;
		return th_pack(oom, sizeof oom - 1);
	}
	th_response = c.out;
	return th_pack(c.out.data, c.out.len);
}

#endif /* TOOLHOST_IMPLEMENTATION */
#endif /* TOOLHOST_H */
