/* SPDX-License-Identifier: MIT */
/* sbx-ls: list sandboxes, or snapshots — see sbx-ls(1). */
#include <getopt.h>
#include <unistd.h>

#include "background.h"
#include "common.h"
#include "sandbox.h"
#include "snapshot.h"

static void __attribute__((noreturn))
usage(int code)
{
	sbx_usage(code, "usage: sbx-ls [-s | --runs ID] [-q] [-o yaml|json] [-f FILTER]...\n",
	    "List the sandboxes, oldest first: a table on a terminal, a YAML stream otherwise.\n\n"
	    "  -s, --snapshots          list snapshots, not sandboxes\n"
	    "      --runs ID            list a sandbox's background runs (sbx-run -d)\n"
	    "  -f, --filter FILTER      status=S, tier=T, label:NAME=VALUE or label:NAME\n"
	    "                           (repeatable: every one must match)\n"
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

static const char *
field(const struct sbx_node *d, const char *key)
{
	const struct sbx_node *v = sbx_node_get(d, key);

	return v != NULL && v->type == SBX_SCALAR && strcmp(v->str, "null") != 0 ? v->str : "-";
}

static void
list_runs(const struct sbx_store *s, const char *id, enum sbx_format fmt, int table)
{
	struct sbx_err e = { 0 };
	struct sbx_node *list;
	const struct sbx_node *d, *cmd;
	size_t i, k;

	if (sbx_run_list(s, id, &list, &e) == -1)
		sbx_die(&e, NULL);
	if (table)
		printf("%-12s  %-8s  %4s  %-24s  %s\n", "RUN", "STATE", "EXIT", "STARTED", "COMMAND");
	for (i = 0; i < list->n; i++) {
		d = list->kids[i];
		if (table) {
			printf("%-12s  %-8s  %4s  %-24s ", field(d, "run_id"), field(d, "state"),
			    field(d, "exit_code"), field(d, "started_at"));
			cmd = sbx_node_get(d, "command");
			for (k = 0; cmd != NULL && cmd->type == SBX_SEQ && k < cmd->n; k++)
				printf(" %s", cmd->kids[k]->str);
			printf("\n");
		} else if (fmt == SBX_FMT_ID) {
			printf("%s\n", field(d, "run_id"));
		} else {
			sbx_record_start(fmt);
			sbx_doc_emit(stdout, d, fmt);
		}
	}
	sbx_node_free(list);
}

/* Oldest first; the ID breaks a tie (and orders what has no created_at). */
static int
by_created(const void *a, const void *b)
{
	const struct sbx_manifest *x = a, *y = b;
	int c = strcmp(x->created_at ? x->created_at : "", y->created_at ? y->created_at : "");

	return c ? c : strcmp(x->sandbox_id, y->sandbox_id);
}

/* The table's columns, each as wide as its widest cell. */
enum { C_ID, C_STATUS, C_TIER, C_CREATED, C_EXPIRES, C_LABELS, N_COLS };

static void
cells(const struct sbx_manifest *m, const char *c[N_COLS], char *labels, size_t size)
{
	size_t i, n = 0;

	labels[0] = '\0';
	for (i = 0; i < m->n_labels && n < size; i++)
		n += (size_t)snprintf(labels + n, size - n, "%s%s=%s", i ? "," : "",
		    m->labels[i].key, m->labels[i].val);
	c[C_ID] = m->sandbox_id;
	c[C_STATUS] = m->status ? sbx_status_name(m->status) : "-";
	c[C_TIER] = m->isolation_level ? m->isolation_level : "-";
	c[C_CREATED] = m->created_at ? m->created_at : "-";
	c[C_EXPIRES] = m->expires_at ? m->expires_at : "-";
	c[C_LABELS] = labels[0] ? labels : "-";
}

static void
print_table(const struct sbx_manifest *ms, size_t n)
{
	static const char *const head[N_COLS] = { "ID", "STATUS", "TIER", "CREATED", "EXPIRES",
		"LABELS" };
	const char *c[N_COLS];
	char labels[1024];
	int w[N_COLS], k;
	size_t i;

	for (k = 0; k < N_COLS; k++)
		w[k] = (int)strlen(head[k]);
	for (i = 0; i < n; i++) {
		cells(&ms[i], c, labels, sizeof labels);
		for (k = 0; k < N_COLS; k++)
			if ((int)strlen(c[k]) > w[k])
				w[k] = (int)strlen(c[k]);
	}
	for (i = 0; i <= n; i++) {
		if (i == 0)
			memcpy(c, head, sizeof c);
		else
			cells(&ms[i - 1], c, labels, sizeof labels);
		for (k = 0; k < N_COLS - 1; k++)
			printf("%-*s  ", w[k], c[k]);
		printf("%s\n", c[N_COLS - 1]);
	}
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "snapshots", no_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "filter", required_argument, NULL, 'f' },
		{ "runs", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sbx_err e = { 0 };
	struct sbx_store store;
	struct sbx_manifest *ms;
	enum sbx_format fmt = SBX_FMT_ID;
	char **ids, **filters;
	const char *runs_of = NULL;
	size_t n, i, k, kept = 0, n_filters = 0;
	int c, quiet = 0, set = 0, table, snaps = 0;

	if ((filters = calloc((size_t)argc + 1, sizeof *filters)) == NULL)
		err(SBX_EX_OSERR, NULL);
	while ((c = getopt_long(argc, argv, "sqo:f:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'q': quiet = 1; break;
		case 's': snaps = 1; break;
		case 'R': runs_of = optarg; break;
		case 'o': fmt = sbx_opt_format(optarg, SBX_EX_USAGE); set = 1; break;
		case 'f':
			if (sbx_filter_check(optarg, &e) == -1)
				sbx_die(&e, NULL);
			filters[n_filters++] = optarg;
			break;
		case 'h': usage(0);
		case 'V': sbx_version();
		default: usage(SBX_EX_USAGE);
		}
	}
	if (optind != argc || ((snaps || runs_of) && n_filters > 0) || (snaps && runs_of))
		usage(SBX_EX_USAGE);
	/* A table for people; YAML for pipes unless asked otherwise; -q IDs only. */
	table = !quiet && !set && isatty(STDOUT_FILENO);
	if (!quiet && !set && !table)
		fmt = SBX_FMT_YAML;
	if (quiet)
		fmt = SBX_FMT_ID;
	if (sbx_cmd_store(&store, &e) == -1)
		sbx_die(&e, "state root");
	if (runs_of != NULL) {
		list_runs(&store, runs_of, fmt, table);
		free(filters);
		return sbx_flush_stdout();
	}
	if (snaps) {
		list_snapshots(&store, fmt, table);
		free(filters);
		return sbx_flush_stdout();
	}
	if (sbx_store_list(&store, &ids, &n, &e) == -1)
		sbx_die(&e, NULL);
	if ((ms = calloc(n + 1, sizeof *ms)) == NULL)
		err(SBX_EX_OSERR, NULL);
	for (i = 0; i < n; i++) {
		if (sbx_sandbox_view(&store, ids[i], &ms[kept], &e) == -1) {
			warnx("%s: %s", ids[i], e.msg);
		} else {
			for (k = 0; k < n_filters && sbx_filter_match(&ms[kept], filters[k]); k++)
				;
			if (k == n_filters)
				kept++;
			else
				sbx_manifest_free(&ms[kept]);
		}
		free(ids[i]);
	}
	free(ids);
	qsort(ms, kept, sizeof *ms, by_created);
	if (table)
		print_table(ms, kept);
	for (i = 0; i < kept; i++) {
		if (fmt == SBX_FMT_ID && !table)
			printf("%s\n", ms[i].sandbox_id);
		else if (!table) {
			sbx_record_start(fmt);
			sbx_manifest_emit(stdout, &ms[i], fmt);
		}
		sbx_manifest_free(&ms[i]);
	}
	free(ms);
	free(filters);
	return sbx_flush_stdout();
}
