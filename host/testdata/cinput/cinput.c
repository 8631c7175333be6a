/*
 * cinput — a test fixture for input requests in the C SDK
 * (abi/c/toolhost.h): c.confirm asks for confirmation with th_ask_confirm
 * and answers what th_confirmed said; c.state asks with th_ask and a
 * state, and echoes the resume document th_answers gave it.
 * host/input_test.go builds it with testwasm.C.
 */
#define TOOLHOST_IMPLEMENTATION
#include "toolhost.h"

const char *toolhost_manifest(void) {
	return "{\"abi\":1,\"tools\":["
	       "{\"name\":\"c.confirm\",\"description\":\"Asks first.\",\"input_schema\":{\"type\":\"object\"}},"
	       "{\"name\":\"c.state\",\"description\":\"Asks with a state.\",\"input_schema\":{\"type\":\"object\"}}]}";
}

void toolhost_handle(th_call *c) {
	th_val r;
	if (th_name_is(c, "c.confirm")) {
		int yes = th_confirmed(c);
		if (yes < 0) {
			th_ask_confirm(c, "Delete \"it\"?");
			return;
		}
		th_bool(c, yes);
		return;
	}
	if (!th_answers(c, &r)) {
		th_ask(c, "{\"login\":{\"mode\":\"url\",\"message\":\"Sign in\",\"url\":\"https://example.com/login\"}}", "step \"2\"");
		return;
	}
	th_obj_begin(c);
	th_key(c, "action");
	{
		char action[16];
		long n = th_str_into(th_get(th_get(th_get(r, "responses"), "login"), "action"), action, sizeof action);
		th_str(c, action, n < 0 ? 0 : (size_t)n);
	}
	th_key(c, "state");
	{
		char state[64];
		long n = th_str_into(th_get(r, "state"), state, sizeof state);
		th_str(c, state, n < 0 ? 0 : (size_t)n);
	}
	th_obj_end(c);
}
