/* wordfreq.h — what count.c offers wordfreq.c: the counting, for the
 * tool's result and the keywords prompt. */
#ifndef WORDFREQ_H
#define WORDFREQ_H

#include "toolhost.h"

typedef struct {
	const char *word; /* into the lowercased text */
	size_t len;
	long count;
} wf_entry;

int wf_count(char *text, size_t len, long min_length, wf_entry **top, size_t *n, long *words);
void count_words(th_call *c, char *text, size_t len, long top, long min_length);

#endif
