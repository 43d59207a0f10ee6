/* SPDX-License-Identifier: MIT */
/* sbx-cp: copy files into and out of a live sandbox — see sbx-cp(1). */
#include <getopt.h>
#include <unistd.h>

#include "common.h"
#include "copy.h"
#include "id.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code,
	    "usage: sbx-cp [-c ID] HOST_PATH|- ID:PATH\n"
	    "       sbx-cp [-c ID] ID:PATH HOST_PATH|-\n",
	    "Copy a file or tree into or out of a live sandbox (-: a tar stream on stdin\n"
	    "or stdout). Paths inside resolve in the sandbox's own root.\n\n"
	    "  -c, --correlation-id ID  the correlation ID of the audit events\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

/* "ID:/path": the ID into id, the path returned; NULL when arg names the host. */
static const char *
sandbox_side(const char *arg, char *id, size_t size)
{
	const char *colon = strchr(arg, ':');

	if (colon == NULL || (size_t)(colon - arg) >= size)
		return NULL;
	memcpy(id, arg, (size_t)(colon - arg));
	id[colon - arg] = '\0';
	return sbx_id_valid(id) ? colon + 1 : NULL;
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "correlation-id", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	char id[SBX_ID_MAX + 1], other[SBX_ID_MAX + 1];
	const char *from, *to;
	int c, r;

	while ((c = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': sbx_audit_set_correlation(optarg); break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2)
		usage(SBX_EX_USAGE);
	from = sandbox_side(argv[0], id, sizeof id);
	to = sandbox_side(argv[1], from ? other : id, sizeof id);
	if ((from == NULL) == (to == NULL))
		errx(SBX_EX_USAGE, "one side, and only one, must be ID:PATH in a sandbox");
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");
	if (to != NULL)
		r = sbx_copy_in(&store, id, strcmp(argv[0], "-") == 0 ? NULL : argv[0],
		    STDIN_FILENO, to, &e);
	else
		r = sbx_copy_out(&store, id, from, strcmp(argv[1], "-") == 0 ? NULL : argv[1],
		    STDOUT_FILENO, &e);
	if (r == -1)
		sbx_die(&e, id);
	return sbx_flush_stdout();
}
