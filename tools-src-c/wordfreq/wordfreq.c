/*
 * wordfreq — a toolhost tool module in C: the most frequent words of a
 * text. It shows the C SDK (abi/c/toolhost.h): arguments read and results
 * written with its JSON reader and writer, no other library; and beside
 * the tool a resource (the counting rules, wordfreq://rules) and a prompt
 * (wordfreq.keywords: a text's keywords, with its word counts worked out
 * here so the model starts from them). Build from this folder:
 *
 *     clang --target=wasm32-wasi -mexec-model=reactor -O2 -I ../../abi/c -o wordfreq.wasm *.c
 */
#define TOOLHOST_IMPLEMENTATION
#include "toolhost.h"

#include "wordfreq.h"

#include <stdio.h>
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
	       "],"
	       "\"resources\":[{\"uri\":\"wordfreq://rules\",\"name\":\"rules\",\"title\":\"How wordfreq counts\","
	       "\"description\":\"What wordfreq.top and wordfreq.keywords take for a word.\",\"mimeType\":\"text/plain\"}],"
	       "\"prompts\":[{\"name\":\"wordfreq.keywords\",\"title\":\"Keywords of a text\","
	       "\"description\":\"Asks for the keywords of a text, with its most frequent words counted first.\","
	       "\"arguments\":[{\"name\":\"text\",\"description\":\"the text\",\"required\":true},"
	       "{\"name\":\"top\",\"description\":\"how many frequent words to list (1 to 50, default 10)\"}]}]"
	       "}";
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

static const char rules[] =
    "A word is a run of ASCII letters, digits, apostrophes and non-ASCII bytes (so \"it's\" and \"cafe\" with "
    "an accent are one word each). ASCII letters are lowercased; other letters are kept as they are, so \"CAFE\" "
    "and \"cafe\" are one word but accented capitals are not folded. Everything else separates words. "
    "Words shorter than min_length bytes are not counted. The top list is ordered by count, most frequent "
    "first, and ties alphabetically by their bytes.\n";

static void read_resource(th_call *c, const char *uri, size_t uri_len) {
	(void)uri_len;
	if (strcmp(uri, "wordfreq://rules") == 0) th_contents_text(c, uri, "text/plain", rules, sizeof rules - 1);
	else th_no_resource(c, uri);
}

/* keywords: the prompt's message lists the text's most frequent words
 * with their counts, then the text, so that the model reads the counts
 * instead of guessing them. */
static void keywords(th_call *c, const char *name, th_val args) {
	char *text = th_prompt_arg(args, "text"), *top_arg = th_prompt_arg(args, "top"), *copy, *end;
	long top = 10;
	size_t n = 0, len;
	long words;
	wf_entry *e = NULL;
	th_buf list = {0};
	(void)name;
	if (top_arg) {
		top = strtol(top_arg, &end, 10);
		if (*top_arg == 0 || *end != 0 || top < 1 || top > 50) {
			th_error(c, TH_SCHEMA, "top must be a whole number from 1 to 50, not \"%s\"", top_arg);
			goto out;
		}
	}
	if (!text) {
		th_error(c, TH_SCHEMA, "the argument text is required");
		goto out;
	}
	len = strlen(text);
	if (!(copy = malloc(len + 1)) || !(memcpy(copy, text, len + 1), wf_count(copy, len, 1, &e, &n, &words))) {
		free(copy);
		th_error(c, TH_INTERNAL, "out of memory counting the words of %lu bytes", (unsigned long)len);
		goto out;
	}
	for (size_t i = 0; i < n && (long)i < top; i++) {
		char count[32];
		if (i) th_put(&list, ", ", 2);
		th_put(&list, e[i].word, e[i].len);
		th_put(&list, count, (size_t)snprintf(count, sizeof count, " (%ld)", e[i].count));
	}
	th_put(&list, "", 1);
	if (list.oom) {
		th_error(c, TH_INTERNAL, "out of memory listing words");
	} else {
		th_prompt_description(c, "keywords of a text of %ld words", words);
		th_prompt_printf(c, "user",
		                 "The text below has %ld words, %lu of them distinct. Its most frequent words, with their counts: %s.\n\n"
		                 "Leaving out function words (articles, pronouns, prepositions), give the text's five keywords "
		                 "and say in one sentence what it is about.\n\n%s",
		                 words, (unsigned long)n, n ? list.data : "none", text);
	}
	free(copy);
	free(list.data);
	free(e);
out:
	free(text);
	free(top_arg);
}

static const th_offers offers = {read_resource, keywords, NULL};

void toolhost_handle(th_call *c) {
	if (th_offer(c, &offers)) return;
	if (!th_name_is(c, "wordfreq.top")) {
		th_error(c, TH_INTERNAL, "this module has no tool named %.*s", (int)c->name_len, c->name);
		return;
	}
	args_t a;
	if (!parse_args(c, &a)) return;
	count_words(c, a.text, a.text_len, a.top, a.min_length);
	free(a.text);
}
