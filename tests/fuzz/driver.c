/* SPDX-License-Identifier: MIT */
/* Replays files through a fuzz target without libFuzzer: the suite's regression run. */
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
main(int argc, char *argv[])
{
	int i, n = 0;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		unsigned char *buf;
		long len;

		if (f == NULL || fseek(f, 0, SEEK_END) == -1 || (len = ftell(f)) < 0) {
			perror(argv[i]);
			return 1;
		}
		rewind(f);
		if ((buf = malloc((size_t)len + 1)) == NULL ||
		    fread(buf, 1, (size_t)len, f) != (size_t)len) {
			perror(argv[i]);
			return 1;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)len);
		free(buf);
		n++;
	}
	printf("%d inputs replayed\n", n);
	return 0;
}
