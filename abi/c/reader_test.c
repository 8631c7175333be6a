/*
 * reader_test.c — unit tests of toolhost.h's JSON reader, built natively
 * (with AddressSanitizer when the compiler has it) and run by
 * abi/c_reader_test.go. Every input is copied into a buffer of exactly its
 * length, with no NUL after it, as c->args is: a read past the end is
 * reported by the sanitizer. Prints one line per failed check and "ok N"
 * at the end; exits 1 if any check failed.
 */
#define TOOLHOST_IMPLEMENTATION
#define TH_MAX_ARGS (2u << 20) /* smaller than the default, to test it */
#include "toolhost.h"

#include <stdio.h>

/* What a module and the host would supply. */
const char *toolhost_manifest(void) { return "{}"; }
void toolhost_handle(th_call *c) { (void)c; }
int32_t th_host_progress(double done, double total, const char *msg, int32_t msg_len) {
	(void)done, (void)total, (void)msg, (void)msg_len;
	return 0;
}
int32_t th_host_log(int32_t level, const char *msg, int32_t msg_len) {
	(void)level, (void)msg, (void)msg_len;
	return 0;
}
int32_t th_host_input(char *buf, int32_t len) {
	(void)buf, (void)len;
	return 0;
}

static int checks, failures;

#define CHECK(cond, ...)                                      \
	do {                                                      \
		checks++;                                             \
		if (!(cond)) {                                        \
			failures++;                                       \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);       \
			printf(__VA_ARGS__);                              \
			printf("\n");                                     \
		}                                                     \
	} while (0)

/* exact copies s (n bytes) into a buffer of exactly n bytes. The copies
 * live until the program ends: th_vals point into them. */
static const char *exact(const char *s, size_t n) {
	char *b = (char *)malloc(n ? n : 1);
	memcpy(b, s, n);
	return b;
}

static th_val parse_n(const char *s, size_t n, int line) {
	th_val v;
	char err[128] = "";
	checks++;
	if (!th_parse(exact(s, n), n, &v, err, sizeof err)) {
		failures++;
		printf("FAIL line %d: parse %.*s: %s\n", line, (int)n, s, err);
	}
	return v;
}
#define PARSE(s) parse_n(s, strlen(s), __LINE__)

static void bad_n(const char *s, size_t n, const char *want, int line) {
	th_val v;
	char err[128] = "";
	checks++;
	if (th_parse(exact(s, n), n, &v, err, sizeof err)) {
		failures++;
		printf("FAIL line %d: %.*s parsed, want an error\n", line, (int)n, s);
	} else if (want && !strstr(err, want)) {
		failures++;
		printf("FAIL line %d: %.*s: error [%s], want it to contain %s\n", line, (int)n, s, err, want);
	} else if (v.type != TH_NONE) {
		failures++;
		printf("FAIL line %d: %.*s: a failed parse left a value\n", line, (int)n, s);
	}
}
#define BAD(s, want) bad_n(s, strlen(s), want, __LINE__)

/* str is the string value of json, unescaped, with its length. */
static char *str(const char *json, size_t *len) {
	th_val v = PARSE(json);
	char *s = th_strdup(v, len);
	CHECK(s != NULL, "th_strdup(%s) = NULL", json);
	return s;
}

static void unescapes(const char *json, const char *want, size_t want_len) {
	size_t n = 0;
	char *s = str(json, &n);
	CHECK(s && n == want_len && memcmp(s, want, n) == 0, "%s unescaped to %.*s (%zu bytes), want %zu bytes", json, (int)n, s ? s : "", n, want_len);
	free(s);
}

/* written is what th_str writes for s. */
static char *written(const char *s, size_t n) {
	th_call c;
	memset(&c, 0, sizeof c);
	th_str(&c, s, n);
	th_put(&c.out, "", 1);
	return c.out.data;
}

/* roundtrips: a string as th_str writes it reads back to bytes that
 * th_str writes as the same JSON. */
static void roundtrips(const char *json) {
	size_t n = 0;
	char *s = str(json, &n), *w = written(s ? s : "", n);
	CHECK(w && strcmp(w, json) == 0, "%s read and written back is %s", json, w);
	free(s);
	free(w);
}

static void escapes(void) {
	unescapes("\"say \\\"hi\\\" now\"", "say \"hi\" now", 12);
	unescapes("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\" \\ / \b \f \n \r \t", 15);
	unescapes("\"\\u0041\\u00e9\\u20AC\"", "A\xc3\xa9\xe2\x82\xac", 6);
	unescapes("\"a\\u0000b\"", "a\0b", 3);
	unescapes("\"caf\xc3\xa9\"", "caf\xc3\xa9", 5);
	unescapes("\"\"", "", 0);
	/* Surrogate pairs, either case. */
	unescapes("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4);
	unescapes("\"x\\uD83D\\uDE00y\"", "x\xf0\x9f\x98\x80y", 6);
	unescapes("\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf", 4);
	/* Lone surrogates become U+FFFD. */
	unescapes("\"\\ud800\"", "\xef\xbf\xbd", 3);
	unescapes("\"\\udc00x\"", "\xef\xbf\xbdx", 4);
	unescapes("\"\\ud83d\\u0041\"", "\xef\xbf\xbd" "A", 4);
	unescapes("\"\\ud83d\\ud83d\\ude00\"", "\xef\xbf\xbd\xf0\x9f\x98\x80", 7);
	unescapes("\"\\ud83d\\n\"", "\xef\xbf\xbd\n", 4);

	roundtrips("\"say \\\"hi\\\" now\"");
	roundtrips("\"back\\\\slash \\\\\\\"\"");
	roundtrips("\"ctl\\u0001\\u001f\\u000a\"");
	roundtrips("\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
	roundtrips("\"\"");

	/* th_str_into: fits exactly, or not at all. */
	{
		th_val v = PARSE("\"a\\\"b\"");
		char buf[4];
		CHECK(th_str_into(v, buf, 4) == 3 && strcmp(buf, "a\"b") == 0, "th_str_into cap 4");
		CHECK(th_str_into(v, buf, 3) == -1, "th_str_into cap 3 fit");
		CHECK(th_str_into(PARSE("1"), buf, 4) == -1, "th_str_into of a number");
		CHECK(th_strdup(PARSE("[]"), NULL) == NULL, "th_strdup of an array");
	}
}

static void nesting(void) {
	char deep[2 * TH_MAX_DEPTH + 4];
	size_t n = 0;
	for (int i = 0; i < TH_MAX_DEPTH; i++) deep[n++] = '[';
	for (int i = 0; i < TH_MAX_DEPTH; i++) deep[n++] = ']';
	parse_n(deep, n, __LINE__);

	n = 0;
	for (int i = 0; i <= TH_MAX_DEPTH; i++) deep[n++] = '[';
	for (int i = 0; i <= TH_MAX_DEPTH; i++) deep[n++] = ']';
	bad_n(deep, n, "nested deeper", __LINE__);

	/* Far deeper, mixed, unclosed: stopped at the bound, not the stack. */
	size_t big = 1000000;
	char *b = (char *)malloc(big);
	for (size_t i = 0; i < big; i += 6) memcpy(b + i, "{\"a\":[", i + 6 <= big ? 6 : big - i);
	bad_n(b, big, "nested deeper", __LINE__);
	free(b);

	/* The size bound: a string of TH_MAX_ARGS bytes in all, then one more. */
	b = (char *)malloc(TH_MAX_ARGS + 1);
	memset(b, 'a', TH_MAX_ARGS + 1);
	b[0] = '"', b[TH_MAX_ARGS - 1] = '"';
	parse_n(b, TH_MAX_ARGS, __LINE__);
	b[TH_MAX_ARGS - 1] = 'a', b[TH_MAX_ARGS] = '"';
	bad_n(b, TH_MAX_ARGS + 1, "over the limit", __LINE__);
	free(b);
}

static void truncated(void) {
	const char *doc = "{\"a\":[1,-2.5e3,\"x\\u00e9\\ud83d\\ude00\\\"\",true,false,null,{\"b\":{}}],\"c\":\"\xc3\xa9\"}";
	size_t n = strlen(doc);
	parse_n(doc, n, __LINE__);
	for (size_t i = 0; i < n; i++) bad_n(doc, i, NULL, __LINE__);
	BAD("", "unexpected end of input at byte 0");
	BAD(" \n\t", "unexpected end");
	BAD("\"abc", "unterminated string");
	BAD("\"abc\\", "unterminated string");
	BAD("\"\\u12", "unterminated string");
}

static void numbers(void) {
	const char *good[] = {"0", "-0", "7", "-12", "1.5", "1.5e-3", "1E+2", "0.0", "1e9", "123456789012345678901234567890"};
	const char *bad[] = {"01", "-01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "-Infinity", "1.e5", "--1", "1..2", "00"};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		th_val v = PARSE(good[i]);
		CHECK(v.type == TH_NUMBER, "%s: type %d", good[i], v.type);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) BAD(bad[i], NULL);

	th_val root = PARSE("{\"n\":42,\"neg\":-7,\"f\":1.0,\"e\":1e3,\"h\":1.5,\"max\":9223372036854775807,"
	                    "\"over\":9223372036854775808,\"min\":-9223372036854775808,\"under\":-9223372036854775809,"
	                    "\"huge\":1e300,\"inf\":1e999,\"s\":\"42\",\"t\":true,\"z\":false,\"nil\":null}");
	int64_t i = 0;
	double d = 0;
	int b = -1;
	CHECK(th_get_int(th_get(root, "n"), 1, 100, &i) && i == 42, "n = %lld", (long long)i);
	CHECK(!th_get_int(th_get(root, "n"), 1, 41, &i), "n above max accepted");
	CHECK(!th_get_int(th_get(root, "n"), 43, 100, &i), "n below min accepted");
	CHECK(th_get_int(th_get(root, "neg"), INT64_MIN, INT64_MAX, &i) && i == -7, "neg = %lld", (long long)i);
	CHECK(th_get_int(th_get(root, "f"), 0, 10, &i) && i == 1, "1.0 = %lld", (long long)i);
	CHECK(th_get_int(th_get(root, "e"), 0, 10000, &i) && i == 1000, "1e3 = %lld", (long long)i);
	CHECK(!th_get_int(th_get(root, "h"), INT64_MIN, INT64_MAX, &i), "1.5 is an integer");
	CHECK(th_get_int(th_get(root, "max"), INT64_MIN, INT64_MAX, &i) && i == INT64_MAX, "max = %lld", (long long)i);
	CHECK(!th_get_int(th_get(root, "over"), INT64_MIN, INT64_MAX, &i), "2^63 fits int64");
	CHECK(th_get_int(th_get(root, "min"), INT64_MIN, INT64_MAX, &i) && i == INT64_MIN, "min = %lld", (long long)i);
	CHECK(!th_get_int(th_get(root, "under"), INT64_MIN, INT64_MAX, &i), "-2^63-1 fits int64");
	CHECK(!th_get_int(th_get(root, "huge"), INT64_MIN, INT64_MAX, &i), "1e300 fits int64");
	CHECK(!th_get_int(th_get(root, "s"), INT64_MIN, INT64_MAX, &i), "a string is an integer");
	CHECK(th_get_num(th_get(root, "h"), &d) && d == 1.5, "h = %g", d);
	CHECK(th_get_num(th_get(root, "huge"), &d) && d == 1e300, "huge = %g", d);
	CHECK(!th_get_num(th_get(root, "inf"), &d), "1e999 read as a double");
	CHECK(!th_get_num(th_get(root, "t"), &d), "true read as a number");
	CHECK(th_get_bool(th_get(root, "t"), &b) && b == 1, "t = %d", b);
	CHECK(th_get_bool(th_get(root, "z"), &b) && b == 0, "z = %d", b);
	CHECK(!th_get_bool(th_get(root, "nil"), &b), "null read as a bool");
	CHECK(th_type_of(th_get(root, "nil")) == TH_NULL, "nil type");
	CHECK(th_type_of(th_get(root, "missing")) == TH_NONE, "missing type");
	CHECK(!th_get_int(th_get(root, "missing"), INT64_MIN, INT64_MAX, &i), "missing read as an integer");
	/* A long number: copied for strtod, whatever its length. */
	char longnum[300];
	memset(longnum, '1', sizeof longnum - 3);
	memcpy(longnum + sizeof longnum - 3, ".5", 3);
	CHECK(th_get_num(PARSE(longnum), &d) && d > 1e295, "long number = %g", d);
}

static void garbage(void) {
	BAD("{} x", "data after the value at byte 3");
	BAD("{}{}", "data after the value");
	BAD("[1]]", "data after the value");
	BAD("\"a\" \"b\"", "data after the value");
	BAD("1 2", "data after the value");
	PARSE(" {} \n\t\r");
	BAD("{\"a\" 1}", "expected ':'");
	BAD("{a:1}", "expected a string key");
	BAD("{\"a\":1,}", "expected a string key");
	BAD("[1,]", "unexpected character");
	BAD("[1 2]", "expected ','");
	BAD("{\"a\":1 \"b\":2}", "expected ','");
	BAD("[1}", "expected ','");
	BAD("tru", "unexpected character");
	BAD("nul", "unexpected character");
	BAD("True", "unexpected character");
	BAD("'a'", "unexpected character");
	BAD("\"\\x\"", "bad escape");
	BAD("\"\\u12g4\"", "bad \\u escape");
	BAD("\"\\U0041\"", "bad escape");
	BAD("\"a\nb\"", "control character");
	BAD("\"a\tb\"", "control character");
	bad_n("\"a\0b\"", 5, "control character", __LINE__);
	bad_n("[1]\0", 4, "data after the value", __LINE__);
}

static void utf8(void) {
	BAD("\"\xff\"", "invalid UTF-8");
	BAD("\"\xc0\xaf\"", "invalid UTF-8");         /* overlong '/' */
	BAD("\"\xe0\x80\xaf\"", "invalid UTF-8");     /* overlong, 3 bytes */
	BAD("\"\xed\xa0\x80\"", "invalid UTF-8");     /* an encoded surrogate */
	BAD("\"\xf4\x90\x80\x80\"", "invalid UTF-8"); /* above U+10FFFF */
	BAD("\"\xe2\x82\"", "invalid UTF-8");         /* cut short */
	BAD("\"\x80\"", "invalid UTF-8");             /* a lone continuation */
	bad_n("\"\xe2\x82", 3, NULL, __LINE__);       /* cut short at the end */
	BAD("{\"\xff\":1}", "invalid UTF-8");
	unescapes("\"\xf0\x9f\x98\x80\"", "\xf0\x9f\x98\x80", 4);
}

static void navigation(void) {
	th_val root = PARSE("{\"a\":1,\"list\":[10,\"x\",[1,2],{\"k\":null}],\"a\":2,\"k\\u0065y\":\"v\",\"o\":{\"p\":{\"q\":true}}}");
	th_val k, v;
	int64_t i = 0;
	int b = 0;
	/* Duplicate keys: the last wins. */
	CHECK(th_get_int(th_get(root, "a"), 0, 9, &i) && i == 2, "a = %lld, want the last (2)", (long long)i);
	CHECK(th_str_eq(th_get(root, "key"), "v"), "an escaped key is looked up by its bytes");
	CHECK(th_get_bool(th_get(th_get(th_get(root, "o"), "p"), "q"), &b) && b, "o.p.q");
	CHECK(th_get(th_get(root, "missing"), "q").type == TH_NONE, "a lookup in an absent value");
	th_val list = th_get(root, "list");
	CHECK(th_len(list) == 4, "len(list) = %zu", th_len(list));
	CHECK(th_len(root) == 5, "len(root) = %zu", th_len(root));
	CHECK(th_len(PARSE("[]")) == 0 && th_len(PARSE("{ }")) == 0 && th_len(PARSE("3")) == 0, "empty lengths");
	CHECK(th_get_int(th_at(list, 0), 0, 99, &i) && i == 10, "list[0]");
	CHECK(th_str_eq(th_at(list, 1), "x"), "list[1]");
	CHECK(th_len(th_at(list, 2)) == 2, "list[2] length");
	CHECK(th_at(list, 3).type == TH_OBJECT && th_get(th_at(list, 3), "k").type == TH_NULL, "list[3].k");
	CHECK(th_at(list, 4).type == TH_NONE, "list[4] past the end");
	CHECK(th_at(root, 0).type == TH_NONE, "th_at on an object");
	CHECK(th_get(list, "a").type == TH_NONE, "th_get on an array");
	CHECK(!th_str_eq(th_get(root, "key"), "vv") && !th_str_eq(th_get(root, "key"), ""), "th_str_eq prefix");

	const char *keys[] = {"a", "list", "a", "key", "o"};
	size_t n = 0;
	th_iter it = th_iter_begin(root);
	while (th_iter_next(&it, &k, &v)) {
		CHECK(n < 5 && th_str_eq(k, keys[n]), "key %zu is %.*s", n, (int)k.len, k.p);
		n++;
	}
	CHECK(n == 5, "iterated %zu members", n);
	it = th_iter_begin(PARSE("7"));
	CHECK(!th_iter_next(&it, &k, &v), "iterated a number");
}

static void args(void) {
	const char *cases[][2] = {
	    {"{\"text\":\"x\"", "unexpected end of input at byte 11"},
	    {"[1]", "not a JSON object"},
	    {"{\"a\":01}", "expected ','"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		th_call c;
		th_val root;
		memset(&c, 0, sizeof c);
		c.args = exact(cases[i][0], strlen(cases[i][0]));
		c.args_len = strlen(cases[i][0]);
		CHECK(!th_args(&c, &root), "th_args(%s) succeeded", cases[i][0]);
		th_put(&c.out, "", 1);
		CHECK(c.failed && c.out.data && strstr(c.out.data, "\"kind\":\"schema\"") && strstr(c.out.data, cases[i][1]),
		      "th_args(%s) answered %s", cases[i][0], c.out.data);
		free(c.out.data);
	}
	th_call c;
	th_val root;
	memset(&c, 0, sizeof c);
	c.args = exact("{\"text\":\"ok\"}", 13);
	c.args_len = 13;
	CHECK(th_args(&c, &root) && !c.failed && th_str_eq(th_get(root, "text"), "ok"), "th_args of a good object");
}

/* Resources and prompts: th_offer's answers to the reserved calls, as
 * toolhost_call would frame them, and th_uri_match against the Go SDK's
 * cases (abi/guest's TestMatchTemplate). */
static void t_read(th_call *c, const char *uri, size_t n) {
	th_span v[2];
	if (strcmp(uri, "notes://todo") == 0) th_contents_text(c, uri, "text/plain", "buy \"milk\"", 10);
	else if (strcmp(uri, "notes://logo") == 0) th_contents_blob(c, uri, "image/png", "\x89PNG\r", 5);
	else if (th_uri_match("notes://day/{date}/{part}", uri, n, v, 2)) {
		th_contents_text(c, uri, NULL, v[0].p, v[0].len);
		th_contents_text(c, uri, NULL, v[1].p, v[1].len);
	} else if (strcmp(uri, "notes://empty") != 0) th_no_resource(c, uri);
}

static void t_prompt(th_call *c, const char *name, th_val args) {
	char *lang = th_prompt_arg(args, "lang");
	if (strcmp(name, "review") != 0) {
		th_no_prompt(c, name);
	} else {
		th_prompt_description(c, "review in %s", lang ? lang : "any language");
		th_prompt_printf(c, "user", "Review this %s code.", lang ? lang : "");
		th_prompt_message(c, "assistant", "Paste it.", 9);
	}
	free(lang);
}

static void t_list(th_call *c) {
	th_obj_begin(c);
	th_key(c, "resources");
	th_arr_begin(c);
	th_obj_begin(c);
	th_key(c, "uri");
	th_cstr(c, "memo://a");
	th_key(c, "name");
	th_cstr(c, "a");
	th_obj_end(c);
	th_arr_end(c);
	th_obj_end(c);
}

static char *serve(const th_offers *o, const char *name, const char *args) {
	th_call c;
	memset(&c, 0, sizeof c);
	c.name = name;
	c.name_len = strlen(name);
	c.args = exact(args, strlen(args));
	c.args_len = strlen(args);
	th_puts(&c.out, "{\"result\":");
	if (!th_offer(&c, o)) th_puts(&c.out, "(a tool)");
	else if (!c.failed) th_put(&c.out, "}", 1);
	th_put(&c.out, "", 1);
	return c.out.data;
}

static void offers(void) {
	static const th_offers all = {t_read, t_prompt, t_list}, none = {NULL, NULL, NULL};
	const struct {
		const th_offers *o;
		const char *name, *args, *want;
	} cases[] = {
	    {&all, "resources/read", "{\"uri\":\"notes://todo\"}",
	     "{\"result\":{\"contents\":[{\"uri\":\"notes://todo\",\"mimeType\":\"text/plain\",\"text\":\"buy \\\"milk\\\"\"}]}}"},
	    {&all, "resources/read", "{\"uri\":\"notes://logo\"}",
	     "{\"result\":{\"contents\":[{\"uri\":\"notes://logo\",\"mimeType\":\"image/png\",\"blob\":\"iVBORw0=\"}]}}"},
	    {&all, "resources/read", "{\"uri\":\"notes://day/2026-12-02/am\"}",
	     "{\"result\":{\"contents\":[{\"uri\":\"notes://day/2026-12-02/am\",\"text\":\"2026-12-02\"},{\"uri\":\"notes://day/2026-12-02/am\",\"text\":\"am\"}]}}"},
	    {&all, "resources/read", "{\"uri\":\"notes://day/x\"}",
	     "{\"error\":{\"kind\":\"schema\",\"message\":\"this module has no resource notes://day/x\"}}"},
	    {&all, "resources/read", "{\"uri\":\"notes://empty\"}",
	     "{\"error\":{\"kind\":\"internal\",\"message\":\"the read of notes://empty wrote no contents\"}}"},
	    {&all, "resources/read", "{\"uri\":7}", "{\"error\":{\"kind\":\"schema\",\"message\":\"resources/read: uri must be a string\"}}"},
	    {&none, "resources/read", "{\"uri\":\"notes://todo\"}",
	     "{\"error\":{\"kind\":\"schema\",\"message\":\"this module has no resource notes://todo\"}}"},
	    {&all, "prompts/get", "{\"name\":\"review\",\"arguments\":{\"lang\":\"C \\u00e9\"}}",
	     "{\"result\":{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"Review this C \xc3\xa9 code.\"}},"
	     "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"Paste it.\"}}],\"description\":\"review in C \xc3\xa9\"}}"},
	    {&all, "prompts/get", "{\"name\":\"review\"}",
	     "{\"result\":{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"Review this  code.\"}},"
	     "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"Paste it.\"}}],\"description\":\"review in any language\"}}"},
	    {&all, "prompts/get", "{\"name\":\"other\"}", "{\"error\":{\"kind\":\"schema\",\"message\":\"this module has no prompt other\"}}"},
	    {&none, "prompts/get", "{\"name\":\"review\"}", "{\"error\":{\"kind\":\"schema\",\"message\":\"this module has no prompt review\"}}"},
	    {&all, "offers/list", "{}", "{\"result\":{\"resources\":[{\"uri\":\"memo://a\",\"name\":\"a\"}]}}"},
	    {&none, "offers/list", "{}", "{\"result\":{}}"},
	    {&all, "notes.count", "{}", "{\"result\":(a tool)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *got = serve(cases[i].o, cases[i].name, cases[i].args);
		CHECK(got && strcmp(got, cases[i].want) == 0, "%s %s:\n  got  %s\n  want %s", cases[i].name, cases[i].args, got, cases[i].want);
		free(got);
	}

	const struct {
		const char *tmpl, *uri;
		int want;
		const char *var0;
	} match[] = {
	    {"notes://{name}", "notes://todo", 1, "todo"},
	    {"notes://{name}", "notes://a/b", 0, NULL},
	    {"notes://{+path}", "notes://a/b", 1, "a/b"},
	    {"notes://{name}.md", "notes://todo.md", 1, "todo"},
	    {"notes://{name}.md", "notes://todo.txt", 0, NULL},
	    {"notes://{a}/{b}", "notes://x/y", 1, "x"},
	    {"notes://{a}/{b}", "files://x/y", 0, NULL},
	    {"notes://fixed", "notes://fixed", 1, NULL},
	    {"notes://fixed", "notes://fixedx", 0, NULL},
	    {"notes://{a}", "notes:/", 0, NULL},
	    {"notes://{a}", "notes://", 1, ""},
	};
	for (size_t i = 0; i < sizeof match / sizeof *match; i++) {
		th_span v = {NULL, 0};
		const char *uri = exact(match[i].uri, strlen(match[i].uri));
		int got = th_uri_match(match[i].tmpl, uri, strlen(match[i].uri), &v, 1);
		CHECK(got == match[i].want, "th_uri_match(%s, %s) = %d", match[i].tmpl, match[i].uri, got);
		if (got && match[i].var0)
			CHECK(v.len == strlen(match[i].var0) && memcmp(v.p, match[i].var0, v.len) == 0, "th_uri_match(%s, %s) took %.*s", match[i].tmpl,
			      match[i].uri, (int)v.len, v.p);
	}
}

/* walk reads every value under v with every getter that applies. */
static void walk(th_val v) {
	th_iter it = th_iter_begin(v);
	th_val k, e;
	double d;
	int64_t i;
	int b;
	char buf[8];
	char *s;
	switch (v.type) {
	case TH_STRING:
		s = th_strdup(v, NULL);
		free(s);
		(void)th_str_into(v, buf, sizeof buf);
		(void)th_str_eq(v, "a");
		break;
	case TH_NUMBER: (void)th_get_num(v, &d), (void)th_get_int(v, INT64_MIN, INT64_MAX, &i); break;
	case TH_BOOL: (void)th_get_bool(v, &b); break;
	case TH_ARRAY:
	case TH_OBJECT:
		(void)th_len(v), (void)th_at(v, 1), (void)th_get(v, "a");
		while (th_iter_next(&it, &k, &e)) {
			if (v.type == TH_OBJECT) walk(k);
			walk(e);
		}
		break;
	default: break;
	}
}

/* validate reads records (a 4-byte little-endian length, then the bytes)
 * from path and prints 1 for each that parses and 0 for each that does
 * not, walking each one that parses. abi/c_reader_test.go compares the
 * answers with Go's encoding/json. */
static int validate(const char *path) {
	FILE *f = fopen(path, "rb");
	unsigned char len[4];
	if (!f) return perror(path), 2;
	while (fread(len, 1, 4, f) == 4) {
		size_t n = (size_t)len[0] | (size_t)len[1] << 8 | (size_t)len[2] << 16 | (size_t)len[3] << 24;
		char *rec = (char *)malloc(n ? n : 1);
		th_val v;
		char err[128];
		if (fread(rec, 1, n, f) != n) return fprintf(stderr, "%s: short record\n", path), 2;
		if (th_parse(rec, n, &v, err, sizeof err)) {
			walk(v);
			putchar('1');
		} else {
			putchar('0');
		}
		free(rec);
	}
	fclose(f);
	putchar('\n');
	return 0;
}

int main(int argc, char **argv) {
	if (argc > 1) return validate(argv[1]);
	escapes();
	nesting();
	truncated();
	numbers();
	garbage();
	utf8();
	navigation();
	args();
	offers();
	if (failures) {
		printf("%d of %d checks failed\n", failures, checks);
		return 1;
	}
	printf("ok %d\n", checks);
	return 0;
}
