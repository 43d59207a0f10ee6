/* SPDX-License-Identifier: MIT */
/*
 * sbx-mcp's server: the Model Context Protocol over stdio (JSON-RPC 2.0, one
 * message a line), its tools the lifecycle's own calls: create, run,
 * read_file, write_file, list_files, snapshot, fork, select, destroy, list.
 * The client is an agent, not the operator: every manifest it brings is held
 * to the operator's policy by provision, it names no sandbox ID of its own
 * (so it reaches none it did not make), and it reaches only the sandboxes
 * this server made (and their forks) unless the operator says otherwise.
 * Every request, answer and output is bounded.
 */
#ifndef SBX_MCP_H
#define SBX_MCP_H

#include <stdio.h>

#include "error.h"
#include "state.h"

struct sbx_mcp_opts {
	const char *manifests;     /* directory of named manifests (NAME.yaml); NULL: none */
	size_t max_output;         /* bytes kept of a run's stdout and of its stderr */
	size_t max_file;           /* bytes read_file returns */
	double default_timeout_s;  /* a run's timeout when the call names none */
	double max_timeout_s;      /* the most a call may ask for */
	size_t max_sandboxes;      /* live sandboxes this server may have made at once */
	int any_sandbox;           /* reach every sandbox of the state root, not only its own */
};

/* Serve requests from in, answers to out, until in ends. 0, or -1 when
 * out cannot be written (the client is gone). */
int sbx_mcp_serve(const struct sbx_store *s, const struct sbx_mcp_opts *o, FILE *in, FILE *out,
    struct sbx_err *e);

#endif
