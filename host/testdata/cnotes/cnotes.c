/*
 * cnotes — a test fixture for th_progress and th_log (abi/c/toolhost.h):
 * one tool, c.notes, that reports progress three times (the second one not
 * increasing), logs at each level and past the size limit, and returns the
 * statuses the host answered, in that order. host/notes_test.go builds it
 * with testwasm.C and checks what reaches the caller.
 */
#define TOOLHOST_IMPLEMENTATION
#include "toolhost.h"

#include <string.h>

const char *toolhost_manifest(void) {
	return "{\"abi\":1,\"tools\":[{\"name\":\"c.notes\",\"description\":\"Reports progress and logs.\","
	       "\"input_schema\":{\"type\":\"object\"}}]}";
}

void toolhost_handle(th_call *c) {
	static char big[6000];
	int st[9], i = 0;
	memset(big, 'x', sizeof big - 1);
	st[i++] = th_progress(c, 1, 3, "step %d of %d", 1, 3);
	st[i++] = th_progress(c, 1, 3, NULL);
	st[i++] = th_progress(c, 3, 3, NULL);
	st[i++] = th_log(c, TH_DEBUG, "debug %s", "message");
	st[i++] = th_log(c, TH_INFO, "info");
	st[i++] = th_log(c, TH_NOTICE, "notice");
	st[i++] = th_log(c, TH_WARNING, "warning");
	st[i++] = th_log(c, TH_ERROR, "error");
	st[i++] = th_log(c, TH_INFO, "%s", big);
	th_arr_begin(c);
	for (int k = 0; k < i; k++) th_int(c, st[k]);
	th_arr_end(c);
}
