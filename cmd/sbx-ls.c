/* SPDX-License-Identifier: MIT */
/* sbx-ls: list sandboxes, or snapshots — see sbx-ls(1). */
#include <getopt.h>
#include <unistd.h>

#include "common.h"
#include "sandbox.h"
#include "snapshot.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code, "usage: sbx-ls [-s] [-q] [-o yaml|json]\n",
	    "List the sandboxes: a table on a terminal, a YAML stream otherwise.\n\n"
	    "  -s, --snapshots          list snapshots, not sandboxes\n"
	    "  -q, --quiet              print only the IDs, one a line\n"
	    "  -o, --output yaml|json   the format of the documents\n"
	    "  -h, --help               print this help\n"
	    "  -V, --version            print the version\n");
}

static void
list_snapshots(const struct sbx_store *s, enum sbx_format fmt, int table)
{
	struct sbx_snapshot sn;
	struct sbx_err e = { 0 };
	char **ids;
	size_t n, i, k;

	if (sbx_snapshot_list(s, &ids, &n, &e) == -1)
		sbx_die(&e, "snapshots");
	if (table)
		printf("%-20s %-20s %-20s %-14s %6s %10s %10s %s\n", "SNAPSHOT", "PARENT", "SOURCE",
		    "REASON", "LAYERS", "BYTES", "MEMORY", "CREATED");
	for (i = 0; i < n; i++) {
		long long bytes = 0;
		char mem[24] = "-";

		if (sbx_snapshot_load(s, ids[i], &sn, &e) == -1) {
			warnx("%s: %s", ids[i], e.msg);
			free(ids[i]);
			continue;
		}
		for (k = 0; k < sn.n_layers; k++)
			bytes += sn.layers[k].size;
		if (sn.has_memory)
			snprintf(mem, sizeof mem, "%lld", sn.memory.size);
		if (table)
			printf("%-20s %-20s %-20s %-14s %6zu %10lld %10s %s\n", sn.snapshot_id,
			    sn.parent ? sn.parent : "-", sn.source_sandbox,
			    sn.reason ? sn.reason : "-", sn.n_layers, bytes, mem, sn.created_at);
		else if (fmt == SBX_FMT_ID)
			printf("%s\n", sn.snapshot_id);
		else {
			sbx_record_start(fmt);
			sbx_snapshot_emit(stdout, &sn, fmt);
		}
		sbx_snapshot_free(&sn);
		free(ids[i]);
	}
	free(ids);
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "snapshots", no_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_manifest m;
	enum sbx_format fmt = SBX_FMT_ID;
	char **ids;
	size_t n, i;
	int c, quiet = 0, set = 0, table, snaps = 0;

	while ((c = getopt_long(argc, argv, "sqo:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'q': quiet = 1; break;
		case 's': snaps = 1; break;
		case 'o': fmt = sbx_opt_format(optarg, SBX_EX_USAGE); set = 1; break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	if (optind != argc)
		usage(SBX_EX_USAGE);
	/* A table for people; YAML for pipes unless asked otherwise; -q IDs only. */
	table = !quiet && !set && isatty(STDOUT_FILENO);
	if (!quiet && !set && !table)
		fmt = SBX_FMT_YAML;
	if (quiet)
		fmt = SBX_FMT_ID;
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");
	if (snaps) {
		list_snapshots(&store, fmt, table);
		return sbx_flush_stdout();
	}
	if (sbx_store_list(&store, &ids, &n, &e) == -1)
		sbx_die(&e, NULL);
	if (table)
		printf("%-20s %-11s %-10s %-20s %s\n", "ID", "STATUS", "TIER", "CREATED", "EXPIRES");
	for (i = 0; i < n; i++) {
		if (sbx_sandbox_view(&store, ids[i], &m, &e) == -1) {
			warnx("%s: %s", ids[i], e.msg);
			free(ids[i]);
			continue;
		}
		if (table)
			printf("%-20s %-11s %-10s %-20s %s\n", m.sandbox_id,
			    m.status ? sbx_status_name(m.status) : "-",
			    m.isolation_level ? m.isolation_level : "-",
			    m.created_at ? m.created_at : "-", m.expires_at ? m.expires_at : "-");
		else if (fmt == SBX_FMT_ID)
			printf("%s\n", m.sandbox_id);
		else {
			sbx_record_start(fmt);
			sbx_manifest_emit(stdout, &m, fmt);
		}
		sbx_manifest_free(&m);
		free(ids[i]);
	}
	free(ids);
	return sbx_flush_stdout();
}
