/* SPDX-License-Identifier: MIT */
/* A few lines of TAP for the C unit tests. */
#ifndef SBX_TAP_H
#define SBX_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) do { \
	tap_n++; \
	if (cond) { printf("ok %d - ", tap_n); } \
	else { printf("not ok %d - ", tap_n); tap_failed++; \
		fprintf(stderr, "# failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); } \
	printf(__VA_ARGS__); printf("\n"); } while (0)

#define done_testing() (printf("1..%d\n", tap_n), tap_failed ? 1 : 0)

#endif
