/* SPDX-License-Identifier: MIT */
/* sbx_utf8_text: what a command wrote, made fit for a JSON string. */
#include <stdlib.h>

#include "tap.h"
#include "util.h"

static int
is(const char *in, size_t n, const char *want)
{
	char *t = sbx_utf8_text(in, n);
	int r = t != NULL && strcmp(t, want) == 0;

	if (!r)
		fprintf(stderr, "# got '%s', want '%s'\n", t ? t : "(null)", want);
	free(t);
	return r;
}

#define FFFD "\xef\xbf\xbd"

int
main(void)
{
	ok(is("", 0, ""), "empty");
	ok(is("plain text\n", 11, "plain text\n"), "ASCII unchanged");
	ok(is("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
	    "2-, 3- and 4-byte sequences unchanged");
	ok(is("a\0b", 3, "a" FFFD "b"), "NUL replaced");
	ok(is("\xff\xfe", 2, FFFD FFFD), "bytes never in UTF-8 replaced, each");
	ok(is("\xc0\xaf", 2, FFFD FFFD), "overlong 2-byte form replaced");
	ok(is("\xe0\x80\xaf", 3, FFFD FFFD FFFD), "overlong 3-byte form replaced");
	ok(is("\xed\xa0\x80", 3, FFFD FFFD FFFD), "UTF-16 surrogate replaced");
	ok(is("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD), "beyond U+10FFFF replaced");
	ok(is("x\xe2\x82", 3, "x" FFFD FFFD), "a sequence cut at the end replaced");
	ok(is("\xc3(", 2, FFFD "("), "a lead byte without its continuation replaced");
	return done_testing();
}
