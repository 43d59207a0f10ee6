/* SPDX-License-Identifier: MIT */
/* A run's environment, the same in every tier whose runs are started from outside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tier_env.h"

/*
 * The command's environment, as the namespace tier's (later entries win):
 * pointers into one block, *pool, which the caller frees with the array.
 */
const char **
sbx_tier_env(const struct sbx_manifest *m, const struct sbx_exec *x, unsigned uid, size_t *count,
    char **pool)
{
	size_t cap = m->n_env + x->n_env + 3, size = 200 + strlen(m->sandbox_id), n = 0, i, j;
	const char **env;
	char *w;

	for (i = 0; i < m->n_env; i++)
		size += strlen(m->env[i].key) + strlen(m->env[i].val) + 2;
	for (i = 0; i < x->n_env; i++)
		size += strlen(x->env[i]) + 1;
	env = calloc(cap, sizeof *env);
	if ((*pool = w = malloc(size)) == NULL || env == NULL) {
		free(*pool);
		free(env);
		return NULL;
	}
#define ADD(...) do { env[n++] = w; w += snprintf(w, size - (size_t)(w - *pool), __VA_ARGS__) + 1; } while (0)
	ADD("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	ADD("HOME=%s", uid == 0 ? "/root" : uid == 1000 ? "/home/sandbox" : "/");
	ADD("HOSTNAME=%s", m->sandbox_id);
	for (i = 0; i < m->n_env; i++)
		ADD("%s=%s", m->env[i].key, m->env[i].val);
	for (i = 0; i < x->n_env; i++)
		ADD("%s", x->env[i]);
#undef ADD
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (strncmp(env[i], env[j], strcspn(env[i], "=") + 1) == 0) {
				env[i] = NULL;
				break;
			}
	for (i = j = 0; i < n; i++)
		if (env[i] != NULL)
			env[j++] = env[i];
	*count = j;
	return env;
}

