/*
 * wordfreq — a toolhost tool module in C: the most frequent words of a
 * text. It shows the C SDK (abi/c/toolhost.h): arguments read and results
 * written with its JSON reader and writer, no other library. Build from
 * this folder:
 *
 *     clang --target=wasm32-wasi -mexec-model=reactor -O2 -I ../../abi/c -o wordfreq.wasm *.c
 */
#define TOOLHOST_IMPLEMENTATION
#include "toolhost.h"

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

/* parse_args reads the arguments with the SDK's JSON reader, in one walk
 * over the members (th_get would step over the text once per key it
 * looks up). Returns 0 and fails the call on error. */
static int parse_args(th_call *c, args_t *a) {
	th_val root, k, v, text = {NULL, 0, TH_NONE};
	th_iter it;
	int64_t n;
	if (!th_args(c, &root)) return 0;
	a->top = 10;
	a->min_length = 1;
	it = th_iter_begin(root);
	while (th_iter_next(&it, &k, &v)) {
		if (th_str_eq(k, "text")) {
			text = v;
		} else if (th_str_eq(k, "top")) {
			if (!th_get_int(v, 1, 1000, &n)) {
				th_error(c, TH_SCHEMA, "top must be an integer from 1 to 1000");
				return 0;
			}
			a->top = (long)n;
		} else if (th_str_eq(k, "min_length")) {
			if (!th_get_int(v, 1, 100, &n)) {
				th_error(c, TH_SCHEMA, "min_length must be an integer from 1 to 100");
				return 0;
			}
			a->min_length = (long)n;
		}
	}
	if (text.type != TH_STRING) {
		th_error(c, TH_SCHEMA, "text must be a string");
		return 0;
	}
	if (!(a->text = th_strdup(text, &a->text_len))) {
		th_error(c, TH_INTERNAL, "out of memory copying a text of %lu bytes", (unsigned long)text.len);
		return 0;
	}
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
