/* SPDX-License-Identifier: MIT */
/* vm_copy_fd: a guest's RAM or disk copied with its holes and its pages of
 * zeros left holes, every other byte where it was. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "vm.h"

#define PAGE 4096
#define SIZE (64 * PAGE + 100)   /* a partial page at the end */

/* The bytes of in as the pattern says: page k holds k+1 unless it is a
 * hole ('h') or zeros written ('0'); the tail (past the last page) 0xee. */
static void
fill(int fd, const char *pattern)
{
	unsigned char page[PAGE];
	size_t k;

	if (ftruncate(fd, SIZE) == -1)
		abort();
	for (k = 0; pattern[k]; k++) {
		if (pattern[k] == 'h')
			continue;
		memset(page, pattern[k] == '0' ? 0 : (int)(k + 1), sizeof page);
		if (pwrite(fd, page, PAGE, (off_t)(k * PAGE)) != PAGE)
			abort();
	}
	memset(page, 0xee, 100);
	if (pwrite(fd, page, 100, 64 * PAGE) != 100)
		abort();
}

static int
same(int a, int b)
{
	unsigned char x[PAGE], y[PAGE];
	off_t at;

	for (at = 0; at < SIZE; at += PAGE) {
		ssize_t n = pread(a, x, PAGE, at);

		if (n <= 0 || pread(b, y, (size_t)n, at) != n || memcmp(x, y, (size_t)n) != 0) {
			fprintf(stderr, "# differ at %lld\n", (long long)at);
			return 0;
		}
	}
	return 1;
}

int
main(void)
{
	/* 64 pages: data, holes, written zeros, runs of each */
	const char *pattern =
	    "dddd0000hhhhd0d0h0hd00000000dddddddddddddddd0000hhhhhhhhdddd0hd0";
	int in = memfd_create("in", 0), out = memfd_create("out", 0), zeros = 0, holes = 0;
	size_t k;
	struct stat st;

	if (in == -1 || out == -1 || strlen(pattern) != 64)
		return 1;
	fill(in, pattern);
	if (ftruncate(out, SIZE) == -1)
		return 1;
	ok(vm_copy_fd(in, out, SIZE) == 0, "the copy runs");
	ok(same(in, out), "every byte where it was");
	for (k = 0; pattern[k]; k++) {
		off_t d = lseek(out, (off_t)(k * PAGE), SEEK_DATA);

		if (pattern[k] != 'd' && d == (off_t)(k * PAGE))
			zeros++;
		if (pattern[k] != 'd')
			holes++;
	}
	ok(zeros == 0, "pages of zeros and holes are holes in the copy (%d of %d written)",
	    zeros, holes);
	ok(fstat(out, &st) == 0 && st.st_blocks * 512 <= (off_t)(strlen(pattern) - holes + 1) *
	    PAGE, "the copy takes the data's pages alone (%lld bytes)",
	    (long long)st.st_blocks * 512);
	close(in);
	close(out);
	return done_testing();
}
