/* count.c — the word counting of wordfreq: an open-addressing hash table
 * of words, then the top entries by count. */
#include "toolhost.h"
#include "wordfreq.h"

#include <stdlib.h>
#include <string.h>

typedef wf_entry entry_t;

typedef struct {
	entry_t *slots;
	size_t cap, used;
} table_t;

static uint64_t hash(const char *s, size_t n) {
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int grow(table_t *t) {
	size_t cap = t->cap ? t->cap * 2 : 1024;
	entry_t *s = (entry_t *)calloc(cap, sizeof(entry_t));
	if (!s) return 0;
	for (size_t i = 0; i < t->cap; i++) {
		entry_t e = t->slots[i];
		if (!e.word) continue;
		size_t j = hash(e.word, e.len) & (cap - 1);
		while (s[j].word) j = (j + 1) & (cap - 1);
		s[j] = e;
	}
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	return 1;
}

static int add(table_t *t, const char *w, size_t n) {
	if ((t->used + 1) * 2 > t->cap && !grow(t)) return 0;
	size_t j = hash(w, n) & (t->cap - 1);
	while (t->slots[j].word) {
		if (t->slots[j].len == n && memcmp(t->slots[j].word, w, n) == 0) {
			t->slots[j].count++;
			return 1;
		}
		j = (j + 1) & (t->cap - 1);
	}
	t->slots[j] = (entry_t){w, n, 1};
	t->used++;
	return 1;
}

static int is_word_byte(unsigned char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\'' || c >= 0x80;
}

static int by_count(const void *x, const void *y) {
	const entry_t *a = (const entry_t *)x, *b = (const entry_t *)y;
	if (a->count != b->count) return a->count > b->count ? -1 : 1;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->word, b->word, n);
	return c ? c : (a->len < b->len ? -1 : a->len > b->len);
}

/* wf_count counts the words of text (which it lowercases in place) at
 * least min_length bytes long: *top gets every distinct word, most
 * frequent first (free it), *n their number, *words the total. It returns
 * 0 when out of memory. */
int wf_count(char *text, size_t len, long min_length, wf_entry **top, size_t *n, long *words) {
	table_t t = {0};
	*words = 0;
	for (size_t i = 0; i < len;) {
		while (i < len && !is_word_byte((unsigned char)text[i])) i++;
		size_t start = i;
		for (; i < len && is_word_byte((unsigned char)text[i]); i++)
			if (text[i] >= 'A' && text[i] <= 'Z') text[i] = (char)(text[i] - 'A' + 'a');
		if (i > start && (long)(i - start) >= min_length) {
			++*words;
			if (!add(&t, text + start, i - start)) {
				free(t.slots);
				return 0;
			}
		}
	}
	/* Compact the used slots to the front and sort them. */
	*n = 0;
	for (size_t i = 0; i < t.cap; i++)
		if (t.slots[i].word) t.slots[(*n)++] = t.slots[i];
	qsort(t.slots, *n, sizeof(wf_entry), by_count);
	*top = t.slots;
	return 1;
}

/* count_words writes {"words", "unique", "top"} for text (which it
 * lowercases in place) to the call. */
void count_words(th_call *c, char *text, size_t len, long top, long min_length) {
	wf_entry *e;
	size_t n;
	long words;
	if (!wf_count(text, len, min_length, &e, &n, &words)) {
		th_error(c, TH_INTERNAL, "out of memory counting the words of %lu bytes", (unsigned long)len);
		return;
	}
	th_obj_begin(c);
	th_key(c, "words");
	th_int(c, words);
	th_key(c, "unique");
	th_int(c, (int64_t)n);
	th_key(c, "top");
	th_arr_begin(c);
	for (size_t i = 0; i < n && (long)i < top; i++) {
		th_obj_begin(c);
		th_key(c, "word");
		th_str(c, e[i].word, e[i].len);
		th_key(c, "count");
		th_int(c, e[i].count);
		th_obj_end(c);
	}
	th_arr_end(c);
	th_obj_end(c);
	free(e);
}
