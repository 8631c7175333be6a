/*
 * wordfreq — a toolhost tool module in C: the most frequent words of a
 * text. It shows the C SDK (abi/c/toolhost.h) with arguments read by jsmn
 * (Debian's libjsmn-dev, a header-only JSON tokenizer). Build from this
 * folder:
 *
 *     clang --target=wasm32-wasi -mexec-model=reactor -O2 -I ../../abi/c -I $JSMN_DIR -o wordfreq.wasm *.c
 *
 * where $JSMN_DIR holds jsmn.h alone (`make plugins-c` links it there from
 * /usr/include, so that the host's other headers stay out of the
 * WebAssembly build).
 */
#define TOOLHOST_IMPLEMENTATION
#include "toolhost.h"

#define JSMN_STATIC
#define JSMN_STRICT
#include <jsmn.h>

#include <stdlib.h>
#include <string.h>

const char *toolhost_manifest(void) {
	return "{\"abi\":1,\"timeout_ms\":5000,\"idempotent\":true,\"read_only\":true,\"tools\":["
	       "{\"name\":\"wordfreq.top\",\"instances\":\"reuse\",\"title\":\"Most frequent words\","
	       "\"description\":\"Counts the words of a text (runs of letters, digits and apostrophes; ASCII letters "
	       "lowercased, other letters kept as they are) and returns the total, the number of distinct words and "
	       "the top most frequent (default 10), most frequent first, ties in alphabetical order. Words shorter "
	       "than min_length (default 1) are not counted.\","
	       "\"input_schema\":{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"text\"],\"properties\":{"
	       "\"text\":{\"type\":\"string\",\"description\":\"the text to count\"},"
	       "\"top\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"default\":10,\"description\":\"how many words to return\"},"
	       "\"min_length\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"default\":1,\"description\":\"shortest word counted, in bytes\"}}},"
	       "\"output_schema\":{\"type\":\"object\",\"properties\":{"
	       "\"words\":{\"type\":\"integer\"},\"unique\":{\"type\":\"integer\"},"
	       "\"top\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	       "\"word\":{\"type\":\"string\"},\"count\":{\"type\":\"integer\"}}}}}}}"
	       "]}";
}

/* Arguments, as the input schema allows them (the host has checked). */
typedef struct {
	char *text;
	size_t text_len;
	long top, min_length;
} args_t;

static int hexval(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

static size_t put_utf8(char *o, unsigned cp) {
	if (cp < 0x80) { o[0] = (char)cp; return 1; }
	if (cp < 0x800) { o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static int hex4(const char *s, unsigned *cp) {
	*cp = 0;
	for (int i = 0; i < 4; i++) {
		int v = hexval(s[i]);
		if (v < 0) return 0;
		*cp = *cp << 4 | (unsigned)v;
	}
	return 1;
}

/* unescape decodes a JSON string token's body (without quotes) into a new
 * buffer; the result is never longer than the input. Returns NULL on a
 * malformed escape or no memory. */
static char *unescape(const char *s, size_t n, size_t *out_len) {
	char *o = (char *)malloc(n + 1), *p = o;
	if (!o) return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') { *p++ = s[i]; continue; }
		if (++i >= n) goto bad;
		switch (s[i]) {
		case '"': *p++ = '"'; break;
		case '\\': *p++ = '\\'; break;
		case '/': *p++ = '/'; break;
		case 'b': *p++ = '\b'; break;
		case 'f': *p++ = '\f'; break;
		case 'n': *p++ = '\n'; break;
		case 'r': *p++ = '\r'; break;
		case 't': *p++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (n - i < 5 || !hex4(s + i + 1, &cp)) goto bad;
			i += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF && n - i >= 7 && s[i + 1] == '\\' && s[i + 2] == 'u' && hex4(s + i + 3, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				i += 6;
			} else if (cp >= 0xD800 && cp <= 0xDFFF) {
				cp = 0xFFFD; /* a lone surrogate */
			}
			p += put_utf8(p, cp);
			break;
		}
		default: goto bad;
		}
	}
	*out_len = (size_t)(p - o);
	return o;
bad:
	free(o);
	return NULL;
}

static int key_is(const char *js, const jsmntok_t *t, const char *k) {
	size_t n = strlen(k);
	return t->type == JSMN_STRING && (size_t)(t->end - t->start) == n && memcmp(js + t->start, k, n) == 0;
}

/* parse_args reads the top-level members it knows; the schema has refused
 * any other. Returns 0 and fails the call on error. */
static int parse_args(th_call *c, args_t *a) {
	jsmn_parser p;
	jsmn_init(&p);
	int n = jsmn_parse(&p, c->args, c->args_len, NULL, 0);
	if (n < 1) {
		th_error(c, TH_SCHEMA, "arguments are not a JSON object");
		return 0;
	}
	jsmntok_t *tok = (jsmntok_t *)malloc(sizeof(jsmntok_t) * (size_t)n);
	if (!tok) {
		th_error(c, TH_INTERNAL, "out of memory reading %d JSON tokens", n);
		return 0;
	}
	jsmn_init(&p);
	n = jsmn_parse(&p, c->args, c->args_len, tok, (unsigned)n);
	a->text = NULL;
	a->top = 10;
	a->min_length = 1;
	int ok = n > 0 && tok[0].type == JSMN_OBJECT;
	/* Members are key, value pairs; every value here is one token. */
	for (int i = 1; ok && i + 1 < n; i += 2) {
		const jsmntok_t *k = &tok[i], *v = &tok[i + 1];
		if (key_is(c->args, k, "text") && v->type == JSMN_STRING) {
			a->text = unescape(c->args + v->start, (size_t)(v->end - v->start), &a->text_len);
			ok = a->text != NULL;
		} else if (key_is(c->args, k, "top") && v->type == JSMN_PRIMITIVE) {
			a->top = strtol(c->args + v->start, NULL, 10);
		} else if (key_is(c->args, k, "min_length") && v->type == JSMN_PRIMITIVE) {
			a->min_length = strtol(c->args + v->start, NULL, 10);
		} else {
			ok = 0;
		}
	}
	free(tok);
	if (!ok || !a->text) {
		free(a->text);
		th_error(c, TH_SCHEMA, "arguments must be {\"text\": string, \"top\"?: integer, \"min_length\"?: integer}");
		return 0;
	}
	if (a->top < 1 || a->top > 1000) a->top = 10;
	if (a->min_length < 1) a->min_length = 1;
	return 1;
}

void count_words(th_call *c, char *text, size_t len, long top, long min_length);

void toolhost_handle(th_call *c) {
	if (!th_name_is(c, "wordfreq.top")) {
		th_error(c, TH_INTERNAL, "this module has no tool named %.*s", (int)c->name_len, c->name);
		return;
	}
	args_t a;
	if (!parse_args(c, &a)) return;
	count_words(c, a.text, a.text_len, a.top, a.min_length);
	free(a.text);
}
