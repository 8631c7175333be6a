/*
 * toolhost.h — the toolhost guest ABI, version 1, for C, in one header.
 *
 * A tool module is a WASI preview 1 reactor. This header supplies its
 * exports (toolhost_abi_version, toolhost_alloc, toolhost_describe,
 * toolhost_call), owns the memory the host writes into, and offers a small
 * JSON reader for the arguments (th_args, th_get, th_strdup, ...), a JSON
 * writer for results and helpers for error responses: a tool needs no
 * other library. The module supplies two things:
 *
 *     // The manifest (docs/ABI.md): what toolhost_describe returns.
 *     const char *toolhost_manifest(void);
 *
 *     // One call: read c->args (JSON, already checked by the host against
 *     // the tool's input schema) with th_args and the th_get* reader,
 *     // write the result with the th_* writer, or fail with th_error /
 *     // th_error_retry.
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

/* The JSON reader: c->args as values, read in place (no tree is built,
 * nothing is allocated but by th_strdup). th_args checks the whole
 * document once (JSON as RFC 8259 has it: UTF-8, nesting at most
 * TH_MAX_DEPTH, at most TH_MAX_ARGS bytes, nothing after the value) and
 * fails the call with a schema error naming the first fault; the getters
 * then only walk what was checked. A th_val of type TH_NONE stands for
 * "absent" (a missing key, an index past the end, a wrong container):
 * every getter accepts it and answers "absent" or "wrong type", so
 * lookups chain without checks in between. Of duplicate keys the last
 * wins (as in Go's encoding/json; the host refuses them before a call
 * anyway). Strings are unescaped to UTF-8 (\" \\ \/ \b \f \n \r \t \uXXXX,
 * surrogate pairs joined); a lone surrogate escape becomes U+FFFD, the way
 * th_str treats invalid UTF-8, so a string read and written back is valid
 * JSON and every other string round-trips exactly. */
#ifndef TH_MAX_ARGS
#define TH_MAX_ARGS (64u << 20)
#endif

typedef enum {
	TH_NONE, /* absent */
	TH_NULL,
	TH_BOOL,
	TH_NUMBER,
	TH_STRING,
	TH_ARRAY,
	TH_OBJECT
} th_type;

/* th_val is one JSON value: where its text starts, how long it is, and
 * its type. */
typedef struct {
	const char *p;
	size_t len;
	th_type type;
} th_val;

/* th_iter walks the members of an object or the elements of an array. */
typedef struct {
	const char *p, *end; /* the next member, and the closing bracket */
	int obj;             /* walking an object: members have keys */
} th_iter;

/* th_args checks c->args and sets *root to it (a JSON object: the host
 * checked its schema). It returns 0 after failing the call with a schema
 * error when the arguments are malformed. */
int th_args(th_call *c, th_val *root);

/* th_parse checks the JSON text s (n bytes, not NUL-terminated) and sets
 * *v to its value; it returns 0 and writes a message into err (errcap
 * bytes, NUL-terminated) when the text is malformed. */
int th_parse(const char *s, size_t n, th_val *v, char *err, size_t errcap);

th_type th_type_of(th_val v);
/* th_get is the member named key of obj (the last, if repeated). */
th_val th_get(th_val obj, const char *key);
/* th_len is the number of elements of an array or members of an object. */
size_t th_len(th_val v);
/* th_at is element i of an array (TH_NONE past its end). */
th_val th_at(th_val arr, size_t i);
/* th_iter_begin starts a walk of v's elements or members; th_iter_next
 * sets *val (and *key for an object's member, if key is not NULL) and
 * returns 0 after the last. */
th_iter th_iter_begin(th_val v);
int th_iter_next(th_iter *it, th_val *key, th_val *val);

/* The scalar getters return 1 and set *out, or 0 (and leave *out alone)
 * for another type or, for th_get_int, a number that is not an integer
 * in [min, max]. */
int th_get_bool(th_val v, int *out);
int th_get_num(th_val v, double *out);
int th_get_int(th_val v, int64_t min, int64_t max, int64_t *out);
/* th_strdup is a string's unescaped bytes in a new NUL-terminated buffer
 * (free it), its length in *len if len is not NULL; NULL for another
 * type or no memory. A string may contain NUL (\u0000): use *len. */
char *th_strdup(th_val v, size_t *len);
/* th_str_into unescapes a string into buf (cap bytes, NUL-terminated) and
 * returns its length, or -1 for another type or when it does not fit. */
long th_str_into(th_val v, char *buf, size_t cap);
/* th_str_eq reports whether v is a string whose unescaped bytes are s. */
int th_str_eq(th_val v, const char *s);

/* Input requests (docs/ABI.md, "Input requests"): a tool that needs the
 * user's answer first calls th_ask and returns; the host asks the user
 * through the MCP client and calls the tool again with the same
 * arguments, where th_answers gives the answers. th_ask replaces whatever
 * was written with {"input": {"requests": requests_json, "state": state}}:
 * requests_json is a JSON object of requests by id (each {"mode": "form",
 * "message", "schema"} or {"mode": "url", "message", "url"}), state
 * (NULL: none) comes back with the answers. th_ask_confirm asks one
 * "confirm" checkbox with message. A module that never calls th_answers
 * or th_confirmed does not import toolhost_v1.input. */
void th_ask(th_call *c, const char *requests_json, const char *state);
void th_ask_confirm(th_call *c, const char *message);
/* th_answers sets *resume to this call's {"state", "responses"} document
 * and returns 1 when the call answers the tool's input request, 0 on a
 * first call. */
int th_answers(th_call *c, th_val *resume);
/* th_confirmed is th_ask_confirm's answer: 1 when the user accepted and
 * checked confirm, 0 when they declined, cancelled or left it unchecked,
 * -1 when this call answers no request (ask first). */
int th_confirmed(th_call *c);


/* Resources and prompts (docs/ABI.md, "Resources and prompts"). A module
 * lists them in its manifest ("resources", "resource_templates",
 * "prompts"; "dynamic_offers": true to list more by code) and serves them
 * from toolhost_handle, before its tools, with th_offer: the host reads a
 * resource and gets a prompt by calling the module under the reserved
 * names "resources/read" and "prompts/get" (and "offers/list" for a
 * dynamic listing), which no tool can have.
 *
 *     static void read_note(th_call *c, const char *uri, size_t uri_len) {
 *         th_span date;
 *         if (strcmp(uri, "notes://todo") == 0) th_contents_text(c, uri, "text/plain", "buy milk", 8);
 *         else if (th_uri_match("notes://day/{date}", uri, uri_len, &date, 1)) ...
 *         else th_no_resource(c, uri);
 *     }
 *     static void prompt(th_call *c, const char *name, th_val args) {
 *         char *lang = th_prompt_arg(args, "lang");  // the host checked required ones
 *         th_prompt_description(c, "review in %s", lang);
 *         th_prompt_printf(c, "user", "Review this %s code.", lang);
 *         free(lang);
 *     }
 *     static const th_offers offers = {read_note, prompt, NULL};
 *
 *     void toolhost_handle(th_call *c) {
 *         if (th_offer(c, &offers)) return;
 *         ... the tools ...
 *     }
 *
 * A read writes one or more contents (th_contents_text, th_contents_blob)
 * or fails with th_error (TH_SCHEMA for a URI it does not know, which the
 * client receives as "invalid params"); a prompt writes its messages
 * (th_prompt_message, th_prompt_printf) in order and may set a
 * description. list, for "dynamic_offers": true, writes the listing with
 * the JSON writer: an object with the manifest's "resources",
 * "resource_templates" and "prompts" arrays (NULL lists nothing more). */
typedef struct {
	/* read reads the resource at uri (NUL-terminated, uri_len bytes). */
	void (*read)(th_call *c, const char *uri, size_t uri_len);
	/* prompt fills in the prompt name; args is the object of its string
	 * arguments (TH_NONE when none were given). */
	void (*prompt)(th_call *c, const char *name, th_val args);
	/* list writes the dynamic listing. */
	void (*list)(th_call *c);
} th_offers;

/* th_offer serves c when it is a read, a get or a listing and returns 1;
 * it returns 0 for a tool's call. A NULL handler answers that the module
 * has no such resource or prompt. */
int th_offer(th_call *c, const th_offers *o);
/* th_contents_text adds text (len bytes of UTF-8) as a content of the
 * resource uri (mime NULL: none); th_contents_blob adds len bytes of
 * binary data, which it encodes in base64. */
void th_contents_text(th_call *c, const char *uri, const char *mime, const char *text, size_t len);
void th_contents_blob(th_call *c, const char *uri, const char *mime, const void *data, size_t len);
/* th_no_resource and th_no_prompt fail the call as the host expects for
 * a URI or a name the module does not offer (a schema error). */
void th_no_resource(th_call *c, const char *uri);
void th_no_prompt(th_call *c, const char *name);
/* th_prompt_message adds a message of role ("user" or "assistant") with
 * text content (len bytes); th_prompt_printf formats it. */
void th_prompt_message(th_call *c, const char *role, const char *text, size_t len);
void th_prompt_printf(th_call *c, const char *role, const char *fmt, ...);
/* th_prompt_description sets the prompt's description (printf-style). */
void th_prompt_description(th_call *c, const char *fmt, ...);
/* th_prompt_arg is the argument name's value in a new NUL-terminated
 * buffer (free it), or NULL when it was not given. */
char *th_prompt_arg(th_val args, const char *name);

/* th_span is a run of bytes inside another string. */
typedef struct {
	const char *p;
	size_t len;
} th_span;

/* th_uri_match reports whether uri (uri_len bytes) is one of the URIs of
 * the RFC 6570 template tmpl, as the Go SDK matches them: literal text
 * matches itself, an expression a run of characters without '/' ({+x},
 * {/x} and {#x}: with). The first nvars expressions' values are set in
 * vars (pointing into uri, not unescaped). */
int th_uri_match(const char *tmpl, const char *uri, size_t uri_len, th_span *vars, size_t nvars);

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

void th_ask(th_call *c, const char *requests_json, const char *state) {
	if (c->failed) return;
	c->failed = 1; /* the response is complete: nothing more is written */
	c->out.len = 0;
	c->out.oom = 0;
	th_puts(&c->out, "{\"input\":{\"requests\":");
	th_puts(&c->out, requests_json);
	if (state) {
		th_puts(&c->out, ",\"state\":");
		th_escaped(&c->out, state, strlen(state));
	}
	th_puts(&c->out, "}}");
}

void th_ask_confirm(th_call *c, const char *message) {
	th_buf req = {0};
	th_puts(&req, "{\"confirm\":{\"mode\":\"form\",\"message\":");
	th_escaped(&req, message, strlen(message));
	th_puts(&req, ",\"schema\":{\"type\":\"object\",\"properties\":{\"confirm\":{\"type\":\"boolean\",\"title\":\"Confirm\"}},\"required\":[\"confirm\"]}}}");
	th_put(&req, "", 1);
	if (req.oom) th_error(c, TH_INTERNAL, "out of memory asking for input");
	else th_ask(c, req.data, NULL);
	free(req.data);
}

__attribute__((import_module("toolhost_v1"), import_name("input")))
int32_t th_host_input(char *buf, int32_t len);

int th_answers(th_call *c, th_val *resume) {
	char err[128];
	int32_t n = th_host_input(NULL, 0);
	char *buf;
	(void)c;
	if (n <= 0 || !(buf = (char *)th_track((size_t)n))) return 0;
	if (th_host_input(buf, n) != n || !th_parse(buf, (size_t)n, resume, err, sizeof err)) return 0;
	return resume->type == TH_OBJECT;
}

int th_confirmed(th_call *c) {
	th_val r, a;
	int yes = 0;
	if (!th_answers(c, &r)) return -1;
	a = th_get(th_get(r, "responses"), "confirm");
	if (!th_str_eq(th_get(a, "action"), "accept")) return 0;
	return th_get_bool(th_get(th_get(a, "content"), "confirm"), &yes) && yes;
}

int th_name_is(const th_call *c, const char *name) {
	size_t n = strlen(name);
	return c->name_len == n && memcmp(c->name, name, n) == 0;
}

/* The JSON reader. th_jv checks one value and returns the byte after it,
 * or NULL with the first fault in j; th_skip then steps over values it
 * has checked. */
typedef struct {
	const char *start, *end;
	const char *err, *at;
} th_jp;

static const char *th_jfail(th_jp *j, const char *at, const char *msg) {
	if (!j->err) j->err = msg, j->at = at;
	return NULL;
}

static const char *th_ws(const char *p, const char *end) {
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
	return p;
}

static int th_hexval(char ch) {
	if (ch >= '0' && ch <= '9') return ch - '0';
	if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
	return -1;
}

static int th_isdigit(char ch) { return ch >= '0' && ch <= '9'; }

static const char *th_jstring(th_jp *j, const char *p) {
	const char *end = j->end;
	for (p++; p < end;) {
		unsigned char ch = (unsigned char)*p;
		if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\') {
			p++; /* the common case, first */
			continue;
		}
		if (ch == '"') return p + 1;
		if (ch == '\\') {
			if (end - p < 2) break;
			if (p[1] == 'u') {
				if (end - p < 6) break;
				for (int i = 2; i < 6; i++)
					if (th_hexval(p[i]) < 0) return th_jfail(j, p, "bad \\u escape");
				p += 6;
			} else if (p[1] && strchr("\"\\/bfnrt", p[1])) {
				p += 2;
			} else {
				return th_jfail(j, p, "bad escape");
			}
		} else if (ch < 0x20) {
			return th_jfail(j, p, "control character in a string");
		} else {
			size_t n = th_utf8_len((const unsigned char *)p, (size_t)(end - p));
			if (n == 0) return th_jfail(j, p, "invalid UTF-8");
			p += n;
		}
	}
	return th_jfail(j, p, "unterminated string");
}

static const char *th_jnumber(th_jp *j, const char *p) {
	const char *end = j->end, *s = p;
	if (p < end && *p == '-') p++;
	if (p < end && *p == '0') p++;
	else if (p < end && th_isdigit(*p)) while (p < end && th_isdigit(*p)) p++;
	else return th_jfail(j, s, "bad number");
	if (p < end && *p == '.') {
		if (++p >= end || !th_isdigit(*p)) return th_jfail(j, s, "bad number");
		while (p < end && th_isdigit(*p)) p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		if (++p < end && (*p == '+' || *p == '-')) p++;
		if (p >= end || !th_isdigit(*p)) return th_jfail(j, s, "bad number");
		while (p < end && th_isdigit(*p)) p++;
	}
	return p;
}

static const char *th_jliteral(th_jp *j, const char *p, const char *lit) {
	size_t n = strlen(lit);
	if ((size_t)(j->end - p) < n || memcmp(p, lit, n) != 0) return th_jfail(j, p, "unexpected character");
	return p + n;
}

static const char *th_jv(th_jp *j, const char *p, int depth, th_val *v) {
	const char *end = j->end, *s;
	th_type t;
	p = th_ws(p, end);
	if (p >= end) return th_jfail(j, p, "unexpected end of input");
	s = p;
	switch (*p) {
	case '{':
	case '[': {
		char close = *p == '{' ? '}' : ']';
		t = *p == '{' ? TH_OBJECT : TH_ARRAY;
		if (depth >= TH_MAX_DEPTH) return th_jfail(j, p, "nested deeper than TH_MAX_DEPTH");
		p = th_ws(p + 1, end);
		if (p < end && *p == close) {
			p++;
			break;
		}
		for (;;) {
			if (t == TH_OBJECT) {
				if (p >= end || *p != '"') return th_jfail(j, p, p >= end ? "unexpected end of input" : "expected a string key");
				if (!(p = th_jstring(j, p))) return NULL;
				p = th_ws(p, end);
				if (p >= end || *p != ':') return th_jfail(j, p, p >= end ? "unexpected end of input" : "expected ':'");
				p++;
			}
			if (!(p = th_jv(j, p, depth + 1, NULL))) return NULL;
			p = th_ws(p, end);
			if (p < end && *p == ',') {
				p = th_ws(p + 1, end);
				continue;
			}
			if (p < end && *p == close) {
				p++;
				break;
			}
			return th_jfail(j, p, p >= end ? "unexpected end of input" : "expected ',' or a closing bracket");
		}
		break;
	}
	case '"': t = TH_STRING, p = th_jstring(j, p); break;
	case 't': t = TH_BOOL, p = th_jliteral(j, p, "true"); break;
	case 'f': t = TH_BOOL, p = th_jliteral(j, p, "false"); break;
	case 'n': t = TH_NULL, p = th_jliteral(j, p, "null"); break;
	default:
		if (*p != '-' && !th_isdigit(*p)) return th_jfail(j, p, "unexpected character");
		t = TH_NUMBER, p = th_jnumber(j, p);
	}
	if (!p) return NULL;
	if (v) v->p = s, v->len = (size_t)(p - s), v->type = t;
	return p;
}

int th_parse(const char *s, size_t n, th_val *v, char *err, size_t errcap) {
	th_jp j = {s, s + n, NULL, NULL};
	const char *p = NULL;
	th_val none = {NULL, 0, TH_NONE};
	*v = none;
	if (n > TH_MAX_ARGS) {
		if (err && errcap) snprintf(err, errcap, "JSON text of %lu bytes is over the limit of %lu", (unsigned long)n, (unsigned long)TH_MAX_ARGS);
		return 0;
	}
	if ((p = th_jv(&j, s, 0, v)) && th_ws(p, j.end) != j.end) th_jfail(&j, th_ws(p, j.end), "data after the value");
	if (j.err) {
		*v = none;
		if (err && errcap) snprintf(err, errcap, "%s at byte %lu", j.err, (unsigned long)(j.at - s));
		return 0;
	}
	return 1;
}

int th_args(th_call *c, th_val *root) {
	char err[128];
	if (!th_parse(c->args, c->args_len, root, err, sizeof err)) {
		th_error(c, TH_SCHEMA, "the arguments are not valid JSON: %s", err);
		return 0;
	}
	if (root->type != TH_OBJECT) {
		th_error(c, TH_SCHEMA, "the arguments are not a JSON object");
		return 0;
	}
	return 1;
}

th_type th_type_of(th_val v) { return v.type; }

th_iter th_iter_begin(th_val v) {
	th_iter it = {NULL, NULL, 0};
	if ((v.type == TH_ARRAY || v.type == TH_OBJECT) && v.len >= 2) {
		it.p = v.p + 1;
		it.end = v.p + v.len - 1; /* the closing bracket */
		it.obj = v.type == TH_OBJECT;
	}
	return it;
}

/* th_skip steps over the value at p, which th_parse has checked, without
 * checking it again (a lookup would otherwise check a long string once per
 * key); it never reads at or past end, and returns NULL if the value does
 * not end before it. */
static const char *th_skip(const char *p, const char *end, th_val *v) {
	const char *s = p;
	int depth = 0;
	if (p >= end) return NULL;
	switch (*p) {
	case '"': v->type = TH_STRING; break;
	case '[': v->type = TH_ARRAY; break;
	case '{': v->type = TH_OBJECT; break;
	case 't':
	case 'f': v->type = TH_BOOL; break;
	case 'n': v->type = TH_NULL; break;
	default: v->type = TH_NUMBER;
	}
	if (v->type != TH_STRING && v->type != TH_ARRAY && v->type != TH_OBJECT) {
		while (p < end && *p != ',' && *p != ':' && *p != ']' && *p != '}' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
	} else {
		while (p < end) {
			char ch = *p++;
			if (ch == '"') {
				while (p < end && *p != '"') p += *p == '\\' && end - p >= 2 ? 2 : 1;
				if (p >= end) return NULL;
				p++;
			} else if (ch == '[' || ch == '{') {
				depth++;
			} else if (ch == ']' || ch == '}') {
				depth--;
			}
			if (depth == 0) break;
		}
		if (depth != 0) return NULL;
	}
	v->p = s;
	v->len = (size_t)(p - s);
	return p;
}

int th_iter_next(th_iter *it, th_val *key, th_val *val) {
	th_val k, v;
	const char *p;
	if (!it->p) return 0;
	p = th_ws(it->p, it->end);
	if (p < it->end && *p == ',') p = th_ws(p + 1, it->end);
	if (p >= it->end) {
		it->p = NULL;
		return 0;
	}
	if (it->obj) {
		/* Checked by th_parse: a string, ':', a value. */
		if (!(p = th_skip(p, it->end, &k)) || k.type != TH_STRING) goto bad;
		p = th_ws(p, it->end);
		if (p >= it->end || *p != ':') goto bad;
		p++;
	}
	if (!(p = th_skip(th_ws(p, it->end), it->end, &v))) goto bad;
	it->p = p;
	if (key && it->obj) *key = k;
	if (val) *val = v;
	return 1;
bad:
	it->p = NULL;
	return 0;
}

size_t th_len(th_val v) {
	size_t n = 0;
	th_iter it = th_iter_begin(v);
	while (th_iter_next(&it, NULL, NULL)) n++;
	return n;
}

th_val th_at(th_val arr, size_t i) {
	th_val v = {NULL, 0, TH_NONE};
	th_iter it = th_iter_begin(arr);
	if (arr.type != TH_ARRAY) return v;
	while (th_iter_next(&it, NULL, &v))
		if (i-- == 0) return v;
	v.type = TH_NONE;
	return v;
}

th_val th_get(th_val obj, const char *key) {
	th_val k, v, found = {NULL, 0, TH_NONE};
	th_iter it = th_iter_begin(obj);
	if (obj.type != TH_OBJECT) return found;
	while (th_iter_next(&it, &k, &v))
		if (th_str_eq(k, key)) found = v; /* the last of duplicates wins */
	return found;
}

static size_t th_put_utf8(char *o, uint32_t cp) {
	if (cp < 0x80) return o[0] = (char)cp, 1;
	if (cp < 0x800) return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static int th_hex4(const char *p, const char *end, uint32_t *cp) {
	*cp = 0;
	if (end - p < 4) return 0;
	for (int i = 0; i < 4; i++) {
		int h = th_hexval(p[i]);
		if (h < 0) return 0;
		*cp = *cp << 4 | (uint32_t)h;
	}
	return 1;
}

/* th_unesc decodes the character at *pp in a checked string's body (up to
 * end) into o, advances *pp and returns the bytes written (at most 4,
 * never more than it consumed). */
static size_t th_unesc(const char **pp, const char *end, char o[4]) {
	const char *p = *pp;
	uint32_t cp, lo;
	if (*p != '\\' || end - p < 2) {
		*pp = p + 1;
		o[0] = *p;
		return 1;
	}
	*pp = p + 2;
	switch (p[1]) {
	case 'b': o[0] = '\b'; return 1;
	case 'f': o[0] = '\f'; return 1;
	case 'n': o[0] = '\n'; return 1;
	case 'r': o[0] = '\r'; return 1;
	case 't': o[0] = '\t'; return 1;
	case 'u': break;
	default: o[0] = p[1]; return 1; /* " \ / */
	}
	p += 2;
	if (!th_hex4(p, end, &cp)) {
		*pp = end;
		return th_put_utf8(o, 0xFFFD);
	}
	p += 4;
	if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u' && th_hex4(p + 2, end, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		p += 6;
	} else if (cp >= 0xD800 && cp <= 0xDFFF) {
		cp = 0xFFFD; /* a lone surrogate: no UTF-8 for it */
	}
	*pp = p;
	return th_put_utf8(o, cp);
}

/* th_unescape writes a string's bytes into o, which holds v.len bytes
 * (always enough), and returns their number. */
static size_t th_unescape(th_val v, char *o) {
	const char *p = v.p + 1, *end = v.p + v.len - 1, *q;
	size_t n = 0;
	while (p < end) {
		/* Runs without escapes are copied whole. */
		q = (const char *)memchr(p, '\\', (size_t)(end - p));
		if (!q) q = end;
		memcpy(o + n, p, (size_t)(q - p));
		n += (size_t)(q - p);
		p = q;
		if (p < end) n += th_unesc(&p, end, o + n);
	}
	return n;
}

char *th_strdup(th_val v, size_t *len) {
	char *o;
	size_t n;
	if (v.type != TH_STRING || v.len < 2 || !(o = (char *)malloc(v.len))) return NULL;
	n = th_unescape(v, o);
	o[n] = 0;
	if (len) *len = n;
	return o;
}

long th_str_into(th_val v, char *buf, size_t cap) {
	const char *p, *end;
	size_t n = 0;
	if (v.type != TH_STRING || v.len < 2 || cap == 0) return -1;
	for (p = v.p + 1, end = v.p + v.len - 1; p < end;) {
		char o[4];
		size_t k = th_unesc(&p, end, o);
		if (n + k >= cap) return -1;
		memcpy(buf + n, o, k);
		n += k;
	}
	buf[n] = 0;
	return (long)n;
}

int th_str_eq(th_val v, const char *s) {
	const char *p, *end;
	size_t n = strlen(s), i = 0;
	if (v.type != TH_STRING || v.len < 2) return 0;
	for (p = v.p + 1, end = v.p + v.len - 1; p < end;) {
		char o[4];
		size_t k = th_unesc(&p, end, o);
		if (i + k > n || memcmp(s + i, o, k) != 0) return 0;
		i += k;
	}
	return i == n;
}

int th_get_bool(th_val v, int *out) {
	if (v.type != TH_BOOL) return 0;
	*out = v.p[0] == 't';
	return 1;
}

int th_get_num(th_val v, double *out) {
	char tmp[64], *s = tmp;
	double d;
	if (v.type != TH_NUMBER) return 0;
	/* strtod needs a NUL after the number; c->args has none. */
	if (v.len >= sizeof tmp && !(s = (char *)malloc(v.len + 1))) return 0;
	memcpy(s, v.p, v.len);
	s[v.len] = 0;
	d = strtod(s, NULL);
	if (s != tmp) free(s);
	if (isinf(d)) return 0; /* too large for a double */
	*out = d;
	return 1;
}

int th_get_int(th_val v, int64_t min, int64_t max, int64_t *out) {
	size_t i = 0;
	int neg;
	uint64_t u = 0;
	int64_t r;
	double d;
	if (v.type != TH_NUMBER) return 0;
	neg = v.p[0] == '-';
	for (i = (size_t)neg; i < v.len && th_isdigit(v.p[i]); i++) {
		if (u > (UINT64_MAX - 9) / 10) return 0; /* far beyond int64 */
		u = u * 10 + (uint64_t)(v.p[i] - '0');
	}
	if (i == v.len) {
		/* Digits only: exact, whatever a double could hold. */
		if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX) return 0;
		r = neg ? (int64_t)(0 - u) : (int64_t)u;
	} else {
		/* 1.0 and 1e3 are integers too (JSON Schema's "integer"). */
		if (!th_get_num(v, &d) || d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) return 0;
		r = (int64_t)d;
	}
	if (r < min || r > max) return 0;
	*out = r;
	return 1;
}

/* Resources and prompts. A read's contents and a prompt's messages are
 * written into the open array th_offer began; a prompt's description
 * waits in th_desc until the messages are done. */
static th_buf th_desc;
static int th_desc_set;
static size_t th_items;

int th_offer(th_call *c, const th_offers *o) {
	th_val args;
	if (th_name_is(c, "resources/read")) {
		char *uri;
		size_t n;
		if (!th_args(c, &args)) return 1;
		if (!(uri = th_strdup(th_get(args, "uri"), &n))) {
			th_error(c, TH_SCHEMA, "resources/read: uri must be a string");
			return 1;
		}
		th_items = 0;
		th_obj_begin(c);
		th_key(c, "contents");
		th_arr_begin(c);
		if (o && o->read) o->read(c, uri, n);
		else th_no_resource(c, uri);
		if (th_items == 0) th_error(c, TH_INTERNAL, "the read of %s wrote no contents", uri);
		th_arr_end(c);
		th_obj_end(c);
		free(uri);
		return 1;
	}
	if (th_name_is(c, "prompts/get")) {
		char name[130];
		if (!th_args(c, &args)) return 1;
		if (th_str_into(th_get(args, "name"), name, sizeof name) <= 0) {
			th_error(c, TH_SCHEMA, "prompts/get: name must be a prompt name");
			return 1;
		}
		th_desc.len = 0;
		th_desc.oom = 0;
		th_desc_set = 0;
		th_items = 0;
		th_obj_begin(c);
		th_key(c, "messages");
		th_arr_begin(c);
		if (o && o->prompt) o->prompt(c, name, th_get(args, "arguments"));
		else th_no_prompt(c, name);
		th_arr_end(c);
		if (th_desc_set) {
			th_key(c, "description");
			th_str(c, th_desc.data, th_desc.len);
		}
		th_obj_end(c);
		return 1;
	}
	if (th_name_is(c, "offers/list")) {
		if (o && o->list) {
			o->list(c);
		} else {
			th_obj_begin(c);
			th_obj_end(c);
		}
		return 1;
	}
	return 0;
}

static void th_contents(th_call *c, const char *uri, const char *mime, const char *field, const char *s, size_t len) {
	th_obj_begin(c);
	th_key(c, "uri");
	th_cstr(c, uri);
	if (mime) {
		th_key(c, "mimeType");
		th_cstr(c, mime);
	}
	th_key(c, field);
	th_str(c, s, len);
	th_obj_end(c);
	th_items++;
}

void th_contents_text(th_call *c, const char *uri, const char *mime, const char *text, size_t len) {
	th_contents(c, uri, mime, "text", text, len);
}

void th_contents_blob(th_call *c, const char *uri, const char *mime, const void *data, size_t len) {
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *d = (const unsigned char *)data;
	th_buf b = {0};
	char q[4];
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < len ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < len ? d[i + 2] : 0);
		q[0] = b64[v >> 18], q[1] = b64[(v >> 12) & 63];
		q[2] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		q[3] = i + 2 < len ? b64[v & 63] : '=';
		th_put(&b, q, 4);
	}
	if (b.oom) th_error(c, TH_INTERNAL, "out of memory encoding %lu bytes of %s", (unsigned long)len, uri);
	else th_contents(c, uri, mime, "blob", b.data, b.len);
	free(b.data);
}

void th_no_resource(th_call *c, const char *uri) { th_error(c, TH_SCHEMA, "this module has no resource %s", uri); }
void th_no_prompt(th_call *c, const char *name) { th_error(c, TH_SCHEMA, "this module has no prompt %s", name); }

void th_prompt_message(th_call *c, const char *role, const char *text, size_t len) {
	th_obj_begin(c);
	th_key(c, "role");
	th_cstr(c, role);
	th_key(c, "content");
	th_obj_begin(c);
	th_key(c, "type");
	th_cstr(c, "text");
	th_key(c, "text");
	th_str(c, text, len);
	th_obj_end(c);
	th_obj_end(c);
	th_items++;
}

/* th_vformat prints fmt into a new buffer (free it) of any length. */
static char *th_vformat(const char *fmt, va_list ap, size_t *len) {
	va_list again;
	char *s;
	int n;
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0 || !(s = (char *)malloc((size_t)n + 1))) return NULL;
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	*len = (size_t)n;
	return s;
}

void th_prompt_printf(th_call *c, const char *role, const char *fmt, ...) {
	va_list ap;
	size_t n;
	char *s;
	va_start(ap, fmt);
	s = th_vformat(fmt, ap, &n);
	va_end(ap);
	if (!s) th_error(c, TH_INTERNAL, "out of memory writing a prompt message");
	else th_prompt_message(c, role, s, n);
	free(s);
}

void th_prompt_description(th_call *c, const char *fmt, ...) {
	va_list ap;
	size_t n;
	char *s;
	va_start(ap, fmt);
	s = th_vformat(fmt, ap, &n);
	va_end(ap);
	th_desc.len = 0;
	if (s) th_put(&th_desc, s, n);
	if (!s || th_desc.oom) th_error(c, TH_INTERNAL, "out of memory writing a prompt description");
	th_desc_set = 1;
	free(s);
}

char *th_prompt_arg(th_val args, const char *name) { return th_strdup(th_get(args, name), NULL); }

/* th_match matches uri against tmpl as matchTemplate in abi/guest does:
 * each expression takes the longest run that lets the rest match. */
static int th_match(const char *tmpl, const char *uri, const char *end, th_span *vars, size_t nvars) {
	const char *open = strchr(tmpl, '{'), *close, *u;
	size_t lit;
	int slash;
	if (!open) return strlen(tmpl) == (size_t)(end - uri) && memcmp(tmpl, uri, (size_t)(end - uri)) == 0;
	lit = (size_t)(open - tmpl);
	if ((size_t)(end - uri) < lit || memcmp(tmpl, uri, lit) != 0 || !(close = strchr(open, '}'))) return 0;
	slash = open[1] == '+' || open[1] == '/' || open[1] == '#';
	uri += lit;
	for (u = end;; u--) {
		if ((slash || !memchr(uri, '/', (size_t)(u - uri))) && th_match(close + 1, u, end, nvars ? vars + 1 : NULL, nvars ? nvars - 1 : 0)) {
			if (nvars) vars->p = uri, vars->len = (size_t)(u - uri);
			return 1;
		}
		if (u == uri) return 0;
	}
}

int th_uri_match(const char *tmpl, const char *uri, size_t uri_len, th_span *vars, size_t nvars) {
	return th_match(tmpl, uri, uri + uri_len, vars, nvars);
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
