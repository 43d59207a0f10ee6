/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the document and manifest parser, which reads manifests and state
 * documents. Property: whatever parses, written back as YAML or JSON, parses
 * again to the same document.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

static char *
emit(const struct sbx_manifest *m, enum sbx_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		abort();
	sbx_manifest_emit(f, m, fmt);
	fclose(f);
	return buf;
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sbx_manifest m, again;
	struct sbx_err e;
	char *yaml, *json, *yaml2;

	if (sbx_manifest_parse("fuzz", (const char *)data, size, &m, &e) == -1)
		return 0;
	yaml = emit(&m, SBX_FMT_YAML);
	json = emit(&m, SBX_FMT_JSON);
	if (sbx_manifest_parse("yaml", yaml, strlen(yaml), &again, &e) == -1) {
		fprintf(stderr, "emitted YAML does not parse: %s\n%s", e.msg, yaml);
		abort();
	}
	yaml2 = emit(&again, SBX_FMT_YAML);
	if (strcmp(yaml, yaml2) != 0) {
		fprintf(stderr, "YAML round trip differs:\n%s---\n%s", yaml, yaml2);
		abort();
	}
	sbx_manifest_free(&again);
	if (sbx_manifest_parse("json", json, strlen(json), &again, &e) == -1) {
		fprintf(stderr, "emitted JSON does not parse: %s\n%s", e.msg, json);
		abort();
	}
	sbx_manifest_free(&again);
	/* Defaults never fail on a valid document. */
	if (sbx_manifest_defaults(&m, &e) == -1)
		abort();
	free(yaml);
	free(yaml2);
	free(json);
	sbx_manifest_free(&m);
	return 0;
}
