/* SPDX-License-Identifier: MIT */
/* sbx-mcp's server: see mcp.h and sbx-mcp(1). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "doc.h"
#include "fork.h"
#include "id.h"
#include "mcp.h"
#include "provision.h"
#include "sandbox.h"
#include "session.h"
#include "snap.h"
#include "util.h"

/* JSON-RPC 2.0's error codes. */
#define RPC_PARSE (-32700)
#define RPC_INVALID (-32600)
#define RPC_NO_METHOD (-32601)
#define RPC_PARAMS (-32602)

/* A request line past this is refused unread (as sbx_doc_parse would). */
#define LINE_MAX_BYTES SBX_DOC_MAX

static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
	NULL };

struct session {
	const struct sbx_store *s;
	const struct sbx_mcp_opts *o;
	struct sbx_strv own;       /* sandboxes and snapshots this server made */
};

/* Arguments */

static const struct sbx_node *
arg(const struct sbx_node *args, const char *key)
{
	return args != NULL ? sbx_node_get(args, key) : NULL;
}

/* A string argument (not a number, bool or null), or NULL with e set. */
static const char *
arg_str(const struct sbx_node *args, const char *key, int required, struct sbx_err *e)
{
	const struct sbx_node *v = arg(args, key);

	if (v == NULL) {
		if (required)
			sbx_err_set(e, SBX_EX_USAGE, "argument '%s' is required", key);
		return NULL;
	}
	if (v->type != SBX_SCALAR || v->plain) {
		sbx_err_set(e, SBX_EX_USAGE, "argument '%s' must be a string", key);
		return NULL;
	}
	return v->str;
}

/* A number argument in [lo, hi]; def when absent. -1 with e set. */
static int
arg_num(const struct sbx_node *args, const char *key, double lo, double hi, double def,
    double *out, struct sbx_err *e)
{
	const struct sbx_node *v = arg(args, key);
	char *end;

	*out = def;
	if (v == NULL)
		return 0;
	if (v->type == SBX_SCALAR && v->plain) {
		errno = 0;
		*out = strtod(v->str, &end);
		if (end != v->str && *end == '\0' && errno == 0 && *out >= lo && *out <= hi)
			return 0;
	}
	return sbx_err_set(e, SBX_EX_USAGE, "argument '%s' must be a number from %g to %g", key,
	    lo, hi);
}

static int
arg_bool(const struct sbx_node *args, const char *key, int def, int *out, struct sbx_err *e)
{
	const struct sbx_node *v = arg(args, key);

	*out = def;
	if (v == NULL)
		return 0;
	if (v->type == SBX_SCALAR && v->plain && (strcmp(v->str, "true") == 0 ||
	    strcmp(v->str, "false") == 0)) {
		*out = strcmp(v->str, "true") == 0;
		return 0;
	}
	return sbx_err_set(e, SBX_EX_USAGE, "argument '%s' must be true or false", key);
}

static int
is_own(const struct session *ss, const char *id)
{
	size_t i;

	if (ss->o->any_sandbox)
		return 1;
	for (i = 0; i < ss->own.n; i++)
		if (strcmp(ss->own.v[i], id) == 0)
			return 1;
	return 0;
}

/* A sandbox or snapshot ID argument this client may use. */
static const char *
arg_id(const struct session *ss, const struct sbx_node *args, const char *key,
    struct sbx_err *e)
{
	const char *id = arg_str(args, key, 1, e);

	if (id == NULL)
		return NULL;
	if (!sbx_id_valid(id)) {
		sbx_err_set(e, SBX_EX_DATAERR, "%s: '%s' is not a valid ID", key, id);
		return NULL;
	}
	/* The same answer for another client's sandbox as for none: no oracle. */
	if (!is_own(ss, id)) {
		sbx_err_set(e, SBX_EX_NOINPUT, "%s: no such sandbox or snapshot of this session",
		    id);
		return NULL;
	}
	return id;
}

static void
forget(struct session *ss, const char *id)
{
	size_t i;

	for (i = 0; i < ss->own.n; i++)
		if (strcmp(ss->own.v[i], id) == 0) {
			free(ss->own.v[i]);
			ss->own.v[i] = ss->own.v[--ss->own.n];
			return;
		}
}

/* Runs inside a sandbox */

/* argv in sandbox id with stdin in (n bytes), its streams kept up to limit. */
static int
run_in(struct session *ss, const char *id, char *const *argv, char *const *env, size_t n_env,
    const char *workdir, double timeout_s, const char *in, size_t n, size_t limit,
    struct sbx_capture *c, struct sbx_exec_result *res, struct sbx_err *e)
{
	struct sbx_exec x = { .argv = argv, .env = env, .n_env = n_env, .workdir = workdir,
		.timeout_s = timeout_s };

	memset(c, 0, sizeof *c);
	c->input = in;
	c->input_len = n;
	c->stdin_fd = -1;
	c->limit = limit;
	return sbx_sandbox_run_capture(ss->s, id, &x, c, res, e);
}

/* A helper run's failure as a tool error: its stderr's first line. */
static int
helper_failed(const char *what, const struct sbx_capture *c, int status, struct sbx_err *e)
{
	char *t = sbx_utf8_text(c->err.buf ? c->err.buf : "", c->err.len);
	int r;

	if (t != NULL)
		t[strcspn(t, "\n")] = '\0';
	r = sbx_err_set(e, status == SBX_EX_NOTFOUND ? SBX_EX_UNAVAILABLE : SBX_EX_IOERR,
	    "%s failed (%d): %s", what, status, t && *t ? t : "no message");
	free(t);
	return r;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *
base64_encode(const unsigned char *p, size_t n)
{
	char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
	size_t i;

	if (out == NULL)
		return NULL;
	for (i = 0; i + 2 < n; i += 3, o += 4) {
		o[0] = b64[p[i] >> 2];
		o[1] = b64[(p[i] & 3) << 4 | p[i + 1] >> 4];
		o[2] = b64[(p[i + 1] & 15) << 2 | p[i + 2] >> 6];
		o[3] = b64[p[i + 2] & 63];
	}
	if (i < n) {
		o[0] = b64[p[i] >> 2];
		o[1] = b64[(p[i] & 3) << 4 | (i + 1 < n ? p[i + 1] >> 4 : 0)];
		o[2] = i + 1 < n ? b64[(p[i + 1] & 15) << 2] : '=';
		o[3] = '=';
		o += 4;
	}
	*o = '\0';
	return out;
}

/* Strict: the alphabet, padding only at the end, whitespace nowhere. */
static unsigned char *
base64_decode(const char *s, size_t *n)
{
	size_t len = strlen(s), i, k = 0;
	unsigned char *out;
	unsigned acc = 0;
	int bits = 0, pad = 0;
	const char *c;

	if (len % 4 != 0 || (out = malloc(len / 4 * 3 + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] == '=' && i >= len - 2) {
			pad++;
			continue;
		}
		if (pad || s[i] == '\0' || (c = strchr(b64, s[i])) == NULL) {
			free(out);
			return NULL;
		}
		acc = acc << 6 | (unsigned)(c - b64);
		if ((bits += 6) >= 8) {
			bits -= 8;
			out[k++] = (unsigned char)(acc >> bits);
		}
	}
	*n = k;
	return out;
}

/* Tools */

typedef int (*tool_fn)(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e);

static int
add_str(struct sbx_node *map, const char *key, const char *v)
{
	return sbx_node_add(map, key, v ? sbx_node_str(v) : sbx_node_raw("null"));
}

/* The manifest named name in the operator's directory. */
static int
named_manifest(const struct session *ss, const char *name, struct sbx_manifest *m,
    struct sbx_err *e)
{
	char path[PATH_MAX];
	const char *p;

	if (ss->o->manifests == NULL)
		return sbx_err_set(e, SBX_EX_USAGE, "this server has no named manifests "
		    "(sbx-mcp --manifests DIR)");
	for (p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
			break;
	if (*name == '\0' || *name == '.' || *p != '\0' || strlen(name) > 64)
		return sbx_err_set(e, SBX_EX_DATAERR, "manifest_name '%s': letters, digits, "
		    "'-', '_' and '.' only, not first", name);
	if (snprintf(path, sizeof path, "%s/%s.yaml", ss->o->manifests, name) >= (int)sizeof path)
		return sbx_err_set(e, SBX_EX_DATAERR, "manifest_name '%s': too long", name);
	if (access(path, F_OK) == -1)
		return sbx_err_set(e, SBX_EX_NOINPUT, "manifest_name '%s': no such manifest", name);
	return sbx_manifest_load(path, m, e);
}

static size_t
live_own(const struct session *ss)
{
	struct sbx_manifest m;
	struct sbx_err ignored;
	size_t i, n = 0;

	for (i = 0; i < ss->own.n; i++)
		if (strncmp(ss->own.v[i], "sbx-", 4) == 0 &&
		    sbx_sandbox_view(ss->s, ss->own.v[i], &m, &ignored) == 0) {
			n += m.status != SBX_STATUS_TERMINATED;
			sbx_manifest_free(&m);
		}
	return n;
}

static int
tool_create(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	const struct sbx_node *man = arg(args, "manifest");
	const char *name = arg_str(args, "manifest_name", 0, e);
	struct sbx_manifest m;
	int existed, r;

	if (name == NULL && e->msg[0])
		return -1;
	if ((man == NULL) == (name == NULL))
		return sbx_err_set(e, SBX_EX_USAGE, "give manifest (an object) or manifest_name, "
		    "one of them");
	if (man != NULL && man->type != SBX_MAP)
		return sbx_err_set(e, SBX_EX_USAGE, "argument 'manifest' must be an object");
	if (live_own(ss) >= ss->o->max_sandboxes)
		return sbx_err_set(e, SBX_EX_TEMPFAIL, "this session has %zu live sandboxes, its "
		    "most (sbx-mcp --max-sandboxes): destroy one first", ss->o->max_sandboxes);
	sbx_manifest_init(&m);
	r = man ? sbx_manifest_from_node("manifest", man, &m, e) : named_manifest(ss, name, &m, e);
	if (r == -1)
		return -1;
	/* The client names no sandbox: a known ID would hand it someone else's;
	 * nor a snapshot not of this session's to stand on. */
	free(m.sandbox_id);
	m.sandbox_id = NULL;
	if (m.rootfs != NULL && sbx_manifest_rootfs_is_snapshot(m.rootfs) &&
	    !is_own(ss, m.rootfs)) {
		sbx_err_set(e, SBX_EX_NOINPUT, "rootfs %s: no such snapshot of this session",
		    m.rootfs);
		sbx_manifest_free(&m);
		return -1;
	}
	if (sbx_provision(ss->s, &m, 0, &existed, e) == -1) {
		sbx_manifest_free(&m);
		return -1;
	}
	r = sbx_strv_add(&ss->own, m.sandbox_id) == -1 || add_str(out, "sandbox_id",
	    m.sandbox_id) == -1 || add_str(out, "expires_at", m.expires_at) == -1 ?
	    sbx_err_set(e, SBX_EX_OSERR, "out of memory") : 0;
	sbx_manifest_free(&m);
	return r;
}

/* The argv of a run: argv (strings) or command (a shell line). */
static char **
run_argv(const struct sbx_node *args, struct sbx_err *e)
{
	const struct sbx_node *av = arg(args, "argv");
	const char *line = arg_str(args, "command", 0, e);
	char **v;
	size_t i;

	if (line == NULL && e->msg[0])
		return NULL;
	if ((av == NULL) == (line == NULL)) {
		sbx_err_set(e, SBX_EX_USAGE, "give command (a shell line) or argv (an array of "
		    "strings), one of them");
		return NULL;
	}
	if (av != NULL && (av->type != SBX_SEQ || av->n == 0 || av->n > 4096)) {
		sbx_err_set(e, SBX_EX_USAGE, "argument 'argv' must be an array of 1 to 4096 strings");
		return NULL;
	}
	if ((v = calloc(av ? av->n + 1 : 4, sizeof *v)) == NULL) {
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		return NULL;
	}
	if (line != NULL) {
		v[0] = "sh";
		v[1] = "-c";
		v[2] = (char *)line;
		return v;
	}
	for (i = 0; i < av->n; i++) {
		if (av->kids[i]->type != SBX_SCALAR || av->kids[i]->plain) {
			free(v);
			sbx_err_set(e, SBX_EX_USAGE, "argument 'argv' must be an array of strings");
			return NULL;
		}
		v[i] = av->kids[i]->str;
	}
	return v;
}

/* env: an object of strings, as NAME=VALUE in one allocation each. */
static int
run_env(const struct sbx_node *args, struct sbx_strv *env, struct sbx_err *e)
{
	const struct sbx_node *ev = arg(args, "env");
	char *kv;
	size_t i;

	if (ev == NULL)
		return 0;
	if (ev->type != SBX_MAP)
		return sbx_err_set(e, SBX_EX_USAGE, "argument 'env' must be an object of strings");
	for (i = 0; i < ev->n; i += 2) {
		const struct sbx_node *k = ev->kids[i], *v = ev->kids[i + 1];

		if (v->type != SBX_SCALAR || v->plain || k->str[0] == '\0' ||
		    strchr(k->str, '=') != NULL)
			return sbx_err_set(e, SBX_EX_USAGE, "env: '%s' must be a name with a string "
			    "value", k->str);
		if (asprintf(&kv, "%s=%s", k->str, v->str) == -1)
			return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		if (sbx_strv_add(env, kv) == -1) {
			free(kv);
			return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		}
		free(kv);
	}
	return 0;
}

/* run with a session: the line in that persistent shell (session.h). */
static int
run_in_session(struct session *ss, const char *id, const char *name,
    const struct sbx_node *args, double timeout, struct sbx_node *out, struct sbx_err *e)
{
	const char *line = arg_str(args, "command", 1, e);
	struct sbx_session_result r;
	char *o = NULL, *er = NULL;
	int rc = -1;

	if (line == NULL)
		return -1;
	if (arg(args, "argv") || arg(args, "stdin") || arg(args, "env") || arg(args, "workdir"))
		return sbx_err_set(e, SBX_EX_USAGE, "with session: command and timeout_s only");
	if (sbx_session_call(ss->s, id, name, line, ss->o->max_output, timeout, &r, e) == -1)
		return -1;
	if ((o = sbx_utf8_text(r.out ? r.out : "", r.out_len)) == NULL ||
	    (er = sbx_utf8_text(r.err ? r.err : "", r.err_len)) == NULL ||
	    sbx_node_add(out, "exit_code", sbx_node_int(r.status)) == -1 ||
	    add_str(out, "stdout", o) == -1 || add_str(out, "stderr", er) == -1 ||
	    sbx_node_add(out, "stdout_bytes", sbx_node_int((long long)r.out_total)) == -1 ||
	    sbx_node_add(out, "stderr_bytes", sbx_node_int((long long)r.err_total)) == -1 ||
	    sbx_node_add(out, "truncated", sbx_node_bool(r.out_total > r.out_len ||
	    r.err_total > r.err_len)) == -1 || add_str(out, "session", name) == -1 ||
	    sbx_node_add(out, "ended", sbx_node_bool(r.ended)) == -1)
		sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	else
		rc = 0;
	free(o);
	free(er);
	sbx_session_result_free(&r);
	return rc;
}

static int
tool_run(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	const char *id, *in, *wd, *sname;
	struct sbx_strv env = { NULL, 0 };
	struct sbx_exec_result res;
	struct sbx_capture c;
	char **argv;
	double timeout;
	int r = -1, rr;

	if ((id = arg_id(ss, args, "sandbox_id", e)) == NULL)
		return -1;
	in = arg_str(args, "stdin", 0, e);
	wd = arg_str(args, "workdir", 0, e);
	if (e->msg[0] || arg_num(args, "timeout_s", 0.001, ss->o->max_timeout_s,
	    ss->o->default_timeout_s, &timeout, e) == -1)
		return -1;
	if (wd != NULL && wd[0] != '/')
		return sbx_err_set(e, SBX_EX_USAGE, "workdir: '%s' is not an absolute path", wd);
	if ((sname = arg_str(args, "session", 0, e)) != NULL)
		return run_in_session(ss, id, sname, args, timeout, out, e);
	if (e->msg[0])
		return -1;
	if ((argv = run_argv(args, e)) == NULL)
		return -1;
	if (run_env(args, &env, e) == -1)
		goto out;
	rr = run_in(ss, id, argv, env.v, env.n, wd, timeout, in, in ? strlen(in) : 0,
	    ss->o->max_output, &c, &res, e);
	/* A command that could not start (126, 127) is a result too, as in sbx-run -o. */
	if (rr == 0 || res.status == SBX_EX_NOEXEC || res.status == SBX_EX_NOTFOUND) {
		r = sbx_capture_add(out, &c, &res, rr == -1 ? e->msg : NULL, 1) == -1 ?
		    sbx_err_set(e, SBX_EX_OSERR, "out of memory") : 0;
	}
	sbx_trace_free(&res.trace);
	sbx_capture_free(&c);
out:
	sbx_strv_free(&env);
	free(argv);
	return r;
}

static int
tool_read(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	const char *id = arg_id(ss, args, "sandbox_id", e), *path, *enc;
	char *argv[] = { "cat", "--", NULL, NULL };
	struct sbx_exec_result res;
	struct sbx_capture c;
	char *text;
	int r;

	if (id == NULL || (path = arg_str(args, "path", 1, e)) == NULL)
		return -1;
	if ((enc = arg_str(args, "encoding", 0, e)) == NULL && e->msg[0])
		return -1;
	if (enc != NULL && strcmp(enc, "utf-8") != 0 && strcmp(enc, "base64") != 0)
		return sbx_err_set(e, SBX_EX_USAGE, "encoding: utf-8 or base64");
	if (path[0] != '/')
		return sbx_err_set(e, SBX_EX_USAGE, "path: '%s' is not an absolute path", path);
	argv[2] = (char *)path;
	if (run_in(ss, id, argv, NULL, 0, NULL, ss->o->default_timeout_s, NULL, 0,
	    ss->o->max_file, &c, &res, e) == -1 && res.status != SBX_EX_NOTFOUND) {
		sbx_trace_free(&res.trace);
		sbx_capture_free(&c);
		return -1;
	}
	r = res.status != 0 ? helper_failed(path, &c, res.status, e) : 0;
	if (r == 0) {
		text = enc && strcmp(enc, "base64") == 0 ?
		    base64_encode((unsigned char *)c.out.buf, c.out.len) :
		    sbx_utf8_text(c.out.buf, c.out.len);
		if (text == NULL || add_str(out, "path", path) == -1 ||
		    add_str(out, "content", text) == -1 ||
		    add_str(out, "encoding", enc ? enc : "utf-8") == -1 ||
		    sbx_node_add(out, "size", sbx_node_int((long long)c.out.total)) == -1 ||
		    sbx_node_add(out, "truncated", sbx_node_bool(c.truncated)) == -1)
			r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		free(text);
	}
	sbx_trace_free(&res.trace);
	sbx_capture_free(&c);
	return r;
}

static int
tool_write(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	const char *id = arg_id(ss, args, "sandbox_id", e), *path, *content, *enc;
	char *argv[] = { "sh", "-c", "mkdir -p -- \"$(dirname -- \"$1\")\" && cat > \"$1\"",
		"sbx-mcp", NULL, NULL };
	struct sbx_exec_result res;
	struct sbx_capture c;
	unsigned char *bytes = NULL;
	size_t n;
	int r;

	if (id == NULL || (path = arg_str(args, "path", 1, e)) == NULL ||
	    (content = arg_str(args, "content", 1, e)) == NULL)
		return -1;
	if ((enc = arg_str(args, "encoding", 0, e)) == NULL && e->msg[0])
		return -1;
	if (path[0] != '/')
		return sbx_err_set(e, SBX_EX_USAGE, "path: '%s' is not an absolute path", path);
	n = strlen(content);
	if (enc != NULL && strcmp(enc, "base64") == 0) {
		if ((bytes = base64_decode(content, &n)) == NULL)
			return sbx_err_set(e, SBX_EX_DATAERR, "content: not base64");
	} else if (enc != NULL && strcmp(enc, "utf-8") != 0) {
		return sbx_err_set(e, SBX_EX_USAGE, "encoding: utf-8 or base64");
	}
	argv[4] = (char *)path;
	r = run_in(ss, id, argv, NULL, 0, NULL, ss->o->default_timeout_s,
	    bytes ? (const char *)bytes : content, n, 4096, &c, &res, e);
	if (r == 0 && res.status != 0)
		r = helper_failed(path, &c, res.status, e);
	if (r == 0 && (add_str(out, "path", path) == -1 ||
	    sbx_node_add(out, "bytes", sbx_node_int((long long)n)) == -1))
		r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	sbx_trace_free(&res.trace);
	sbx_capture_free(&c);
	free(bytes);
	return r;
}

/* One entry of find's "%y\t%s\t%m\t%T@\t%P\0", as an object. */
static struct sbx_node *
list_entry(char *rec)
{
	static const char *const types[] = { "f", "file", "d", "directory", "l", "symlink", NULL };
	char *f[5], *p = rec, *name;
	struct sbx_node *n;
	const char *type = "other";
	size_t i;

	for (i = 0; i < 4; i++) {
		f[i] = p;
		if ((p = strchr(p, '\t')) == NULL)
			return NULL;
		*p++ = '\0';
	}
	f[4] = p;
	for (i = 0; types[i]; i += 2)
		if (strcmp(f[0], types[i]) == 0)
			type = types[i + 1];
	if ((n = sbx_node_new(SBX_MAP)) == NULL || (name = sbx_utf8_text(f[4], strlen(f[4])))
	    == NULL) {
		sbx_node_free(n);
		return NULL;
	}
	if (add_str(n, "name", name) == -1 || add_str(n, "type", type) == -1 ||
	    sbx_node_add(n, "size", sbx_node_int(strtoll(f[1], NULL, 10))) == -1 ||
	    add_str(n, "mode", f[2]) == -1 ||
	    sbx_node_add(n, "mtime", sbx_node_num(strtod(f[3], NULL))) == -1) {
		sbx_node_free(n);
		n = NULL;
	}
	free(name);
	return n;
}

static int
tool_list_files(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	const char *id = arg_id(ss, args, "sandbox_id", e), *path;
	char *argv[] = { "find", NULL, "-mindepth", "1", "-maxdepth", "1", "-printf",
		"%y\\t%s\\t%m\\t%T@\\t%P\\0", NULL };
	struct sbx_exec_result res;
	struct sbx_capture c;
	struct sbx_node *list = NULL, *ent;
	size_t i, rl;
	int r;

	if (id == NULL || (path = arg_str(args, "path", 1, e)) == NULL)
		return -1;
	if (path[0] != '/')
		return sbx_err_set(e, SBX_EX_USAGE, "path: '%s' is not an absolute path", path);
	argv[1] = (char *)path;
	r = run_in(ss, id, argv, NULL, 0, NULL, ss->o->default_timeout_s, NULL, 0,
	    ss->o->max_output, &c, &res, e);
	if (r == 0 && res.status != 0)
		r = helper_failed(path, &c, res.status, e);
	if (r == 0 && (list = sbx_node_new(SBX_SEQ)) == NULL)
		r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	/* Whole records only: one cut at the bound is dropped (truncated says so). */
	for (i = 0; r == 0 && i < c.out.len; i += rl + 1) {
		if ((rl = strnlen(c.out.buf + i, c.out.len - i)) == c.out.len - i)
			break;
		if ((ent = list_entry(c.out.buf + i)) != NULL && sbx_node_add(list, NULL, ent) == -1)
			r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	if (r == 0 && (add_str(out, "path", path) == -1 ||
	    sbx_node_add(out, "entries", list) == -1 ||
	    sbx_node_add(out, "truncated", sbx_node_bool(c.truncated)) == -1))
		r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	else if (r == -1)
		sbx_node_free(list);
	sbx_trace_free(&res.trace);
	sbx_capture_free(&c);
	return r;
}

static int
tool_snapshot(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	const char *id = arg_id(ss, args, "sandbox_id", e);
	struct sbx_snap_opts o = { NULL, "manual", 0 };
	char snap[SBX_ID_MAX + 1];
	int memory;

	if (id == NULL || arg_bool(args, "memory", 1, &memory, e) == -1)
		return -1;
	o.no_memory = !memory;
	if (sbx_snap_create(ss->s, id, &o, snap, e) == -1)
		return -1;
	if (sbx_strv_add(&ss->own, snap) == -1 || add_str(out, "snapshot_id", snap) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	return 0;
}

static int
tool_fork(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	const char *src = arg_id(ss, args, "source", e);
	struct sbx_node *list;
	char **ids = NULL;
	double n;
	long i;
	int r = 0;

	if (src == NULL || arg_num(args, "count", 1, 64, 1, &n, e) == -1)
		return -1;
	if (n != floor(n))
		return sbx_err_set(e, SBX_EX_USAGE, "argument 'count' must be a whole number");
	if (live_own(ss) + (size_t)n > ss->o->max_sandboxes)
		return sbx_err_set(e, SBX_EX_TEMPFAIL, "%g more would pass this session's %zu live "
		    "sandboxes (sbx-mcp --max-sandboxes)", n, ss->o->max_sandboxes);
	if (sbx_fork(ss->s, src, (long)n, NULL, NULL, &ids, e) == -1)
		return -1;
	if ((list = sbx_node_new(SBX_SEQ)) == NULL)
		r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	for (i = 0; i < (long)n; i++) {
		if (r == 0 && (sbx_strv_add(&ss->own, ids[i]) == -1 ||
		    sbx_node_add(list, NULL, sbx_node_str(ids[i])) == -1))
			r = sbx_err_set(e, SBX_EX_OSERR, "out of memory");
		free(ids[i]);
	}
	free(ids);
	if (r == 0 && sbx_node_add(out, "sandbox_ids", list) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	if (r == -1)
		sbx_node_free(list);
	return r;
}

static int
tool_select(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	const char *winner = arg_id(ss, args, "winner", e);
	char snap[SBX_ID_MAX + 1];

	if (winner == NULL || sbx_fork_select(ss->s, winner, NULL, snap, e) == -1)
		return -1;
	if (sbx_strv_add(&ss->own, snap) == -1 || add_str(out, "snapshot_id", snap) == -1)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	return 0;
}

static int
tool_destroy(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	const char *id = arg_id(ss, args, "sandbox_id", e);
	char keep[SBX_ID_MAX + 1];

	if (id == NULL)
		return -1;
	snprintf(keep, sizeof keep, "%s", id);
	if (sbx_sandbox_destroy(ss->s, keep, e) == -1)
		return -1;
	forget(ss, keep);
	return add_str(out, "destroyed", keep) == -1 ? sbx_err_set(e, SBX_EX_OSERR,
	    "out of memory") : 0;
}

static int
tool_list(struct session *ss, const struct sbx_node *args, struct sbx_node *out,
    struct sbx_err *e)
{
	struct sbx_strv all = { NULL, 0 };
	struct sbx_node *list = sbx_node_new(SBX_SEQ), *one;
	struct sbx_manifest m;
	struct sbx_err ignored;
	size_t i;
	int r = 0;

	(void)args;
	if (ss->o->any_sandbox && sbx_store_list(ss->s, &all.v, &all.n, e) == -1) {
		sbx_node_free(list);
		return -1;
	}
	for (i = 0; list != NULL && i < (ss->o->any_sandbox ? all.n : ss->own.n); i++) {
		const char *id = ss->o->any_sandbox ? all.v[i] : ss->own.v[i];

		if (strncmp(id, "sbx-", 4) != 0 || sbx_sandbox_view(ss->s, id, &m, &ignored) == -1)
			continue;
		if ((one = sbx_node_new(SBX_MAP)) == NULL || add_str(one, "sandbox_id", id) == -1 ||
		    add_str(one, "status", sbx_status_name(m.status)) == -1 ||
		    add_str(one, "isolation_level", m.isolation_level) == -1 ||
		    add_str(one, "created_at", m.created_at) == -1 ||
		    add_str(one, "expires_at", m.expires_at) == -1 ||
		    sbx_node_add(list, NULL, one) == -1) {
			sbx_node_free(one);
			r = -1;
		}
		sbx_manifest_free(&m);
	}
	sbx_strv_free(&all);
	if (list == NULL || r == -1 || sbx_node_add(out, "sandboxes", list) == -1) {
		sbx_node_free(list);
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	}
	return 0;
}

#define ID_PROP(name, what) "\"" name "\":{\"type\":\"string\",\"description\":\"" what "\"}"

static const struct tool {
	const char *name, *description, *schema;
	tool_fn fn;
} tools[] = {
	{ "create", "Create a sandbox from a manifest (sbx-manifest(5) keys) or from a manifest "
	  "the operator named; held to the operator's policy. Returns its sandbox_id.",
	  "{\"type\":\"object\",\"properties\":{\"manifest\":{\"type\":\"object\",\"description\":"
	  "\"manifest keys, e.g. {\\\"resource_allocation\\\":{\\\"memory_mb\\\":256}}\"},"
	  "\"manifest_name\":{\"type\":\"string\",\"description\":\"a manifest of the operator's\"}}}",
	  tool_create },
	{ "run", "Run a command in a sandbox: a shell line (command) or an argv; optional stdin, "
	  "env, workdir, timeout_s. Returns exit_code, signal, stdout, stderr (bounded), "
	  "truncated and the run's trace. With session (a name), the command runs in that "
	  "persistent shell of the sandbox instead: cd, exported variables and functions "
	  "carry over between calls (no argv, stdin, env, workdir; a timeout ends the session).",
	  "{\"type\":\"object\",\"properties\":{" ID_PROP("sandbox_id", "the sandbox") ","
	  "\"command\":{\"type\":\"string\",\"description\":\"a shell line, run by sh -c\"},"
	  "\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	  "\"stdin\":{\"type\":\"string\"},\"workdir\":{\"type\":\"string\"},"
	  "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
	  "\"timeout_s\":{\"type\":\"number\"},\"session\":{\"type\":\"string\","
	  "\"description\":\"a persistent shell's name\"}},\"required\":[\"sandbox_id\"]}",
	  tool_run },
	{ "read_file", "Read a file of a sandbox (bounded); encoding utf-8 (default) or base64.",
	  "{\"type\":\"object\",\"properties\":{" ID_PROP("sandbox_id", "the sandbox") ","
	  "\"path\":{\"type\":\"string\"},\"encoding\":{\"type\":\"string\",\"enum\":"
	  "[\"utf-8\",\"base64\"]}},\"required\":[\"sandbox_id\",\"path\"]}",
	  tool_read },
	{ "write_file", "Write a file in a sandbox (its directories made); content in utf-8 "
	  "(default) or base64.",
	  "{\"type\":\"object\",\"properties\":{" ID_PROP("sandbox_id", "the sandbox") ","
	  "\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"},\"encoding\":"
	  "{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"]}},"
	  "\"required\":[\"sandbox_id\",\"path\",\"content\"]}",
	  tool_write },
	{ "list_files", "List a directory of a sandbox: name, type, size, mode, mtime of each entry.",
	  "{\"type\":\"object\",\"properties\":{" ID_PROP("sandbox_id", "the sandbox") ","
	  "\"path\":{\"type\":\"string\"}},\"required\":[\"sandbox_id\",\"path\"]}",
	  tool_list_files },
	{ "snapshot", "Snapshot a sandbox (its files, and its memory where the tier can unless "
	  "memory is false). Returns snapshot_id.",
	  "{\"type\":\"object\",\"properties\":{" ID_PROP("sandbox_id", "the sandbox") ","
	  "\"memory\":{\"type\":\"boolean\"}},\"required\":[\"sandbox_id\"]}",
	  tool_snapshot },
	{ "fork", "Make count sandboxes from a snapshot (or a sandbox, snapshotted first). "
	  "Returns sandbox_ids.",
	  "{\"type\":\"object\",\"properties\":{" ID_PROP("source", "a snapshot or sandbox") ","
	  "\"count\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":64}},\"required\":[\"source\"]}",
	  tool_fork },
	{ "select", "Keep the winning fork: snapshot it as its lineage's head and destroy its "
	  "siblings. Returns snapshot_id.",
	  "{\"type\":\"object\",\"properties\":{" ID_PROP("winner", "the sandbox to keep") "},"
	  "\"required\":[\"winner\"]}",
	  tool_select },
	{ "destroy", "Destroy a sandbox.",
	  "{\"type\":\"object\",\"properties\":{" ID_PROP("sandbox_id", "the sandbox") "},"
	  "\"required\":[\"sandbox_id\"]}",
	  tool_destroy },
	{ "list", "List this session's sandboxes: sandbox_id, status, isolation_level, "
	  "created_at, expires_at.",
	  "{\"type\":\"object\",\"properties\":{}}",
	  tool_list },
};

/* JSON-RPC */

static void
respond(FILE *out, struct sbx_node *msg)
{
	/* One line each: the JSON form ends with its newline. */
	if (msg != NULL)
		sbx_doc_emit(out, msg, SBX_FMT_JSON);
	fflush(out);
	sbx_node_free(msg);
}

/* A message with the request's id (a copy; NULL: null). */
static struct sbx_node *
message(const struct sbx_node *id)
{
	struct sbx_node *m = sbx_node_new(SBX_MAP);

	if (m == NULL || add_str(m, "jsonrpc", "2.0") == -1 ||
	    sbx_node_add(m, "id", id ? sbx_node_scalar_copy(id) : sbx_node_raw("null")) == -1) {
		sbx_node_free(m);
		return NULL;
	}
	return m;
}

static struct sbx_node *
rpc_error(const struct sbx_node *id, int code, const char *text)
{
	struct sbx_node *m = message(id), *err = sbx_node_new(SBX_MAP);

	if (m == NULL || err == NULL || sbx_node_add(err, "code", sbx_node_int(code)) == -1 ||
	    add_str(err, "message", text) == -1 || sbx_node_add(m, "error", err) == -1) {
		sbx_node_free(err);
		sbx_node_free(m);
		return NULL;
	}
	return m;
}

static struct sbx_node *
rpc_result(const struct sbx_node *id, struct sbx_node *result)
{
	struct sbx_node *m = message(id);

	if (m == NULL || result == NULL || sbx_node_add(m, "result", result) == -1) {
		sbx_node_free(result);
		sbx_node_free(m);
		return NULL;
	}
	return m;
}

static struct sbx_node *
initialize(const struct sbx_node *params)
{
	const struct sbx_node *want = params ? sbx_node_get(params, "protocolVersion") : NULL;
	struct sbx_node *r = sbx_node_new(SBX_MAP), *caps = sbx_node_new(SBX_MAP);
	struct sbx_node *tl = sbx_node_new(SBX_MAP), *info = sbx_node_new(SBX_MAP);
	const char *version = versions[1];
	size_t i;

	/* The client's revision when it is one of ours, else our choice (the
	 * client then decides whether it can go on). */
	for (i = 0; want != NULL && want->type == SBX_SCALAR && versions[i]; i++)
		if (strcmp(want->str, versions[i]) == 0)
			version = versions[i];
	if (r == NULL || caps == NULL || tl == NULL || info == NULL ||
	    add_str(r, "protocolVersion", version) == -1 ||
	    sbx_node_add(tl, "listChanged", sbx_node_bool(0)) == -1 ||
	    sbx_node_add(caps, "tools", tl) == -1 || (tl = NULL, sbx_node_add(r, "capabilities",
	    caps) == -1) || (caps = NULL, add_str(info, "name", "sbx-mcp") == -1) ||
	    add_str(info, "version", SBX_VERSION) == -1 ||
	    sbx_node_add(r, "serverInfo", info) == -1 || (info = NULL, add_str(r, "instructions",
	    "Sandboxes for untrusted code: create one, run commands and move files in it, "
	    "snapshot and fork it, destroy it when done. Each has a lifetime set by the "
	    "operator's policy.") == -1)) {
		sbx_node_free(tl);
		sbx_node_free(caps);
		sbx_node_free(info);
		sbx_node_free(r);
		return NULL;
	}
	return r;
}

static struct sbx_node *
tools_list(void)
{
	struct sbx_node *r = sbx_node_new(SBX_MAP), *list = sbx_node_new(SBX_SEQ), *t, *schema;
	struct sbx_err e;
	size_t i;

	for (i = 0; r != NULL && list != NULL && i < SBX_ARRAY_LEN(tools); i++) {
		schema = NULL;
		if ((t = sbx_node_new(SBX_MAP)) == NULL || add_str(t, "name", tools[i].name) == -1 ||
		    add_str(t, "description", tools[i].description) == -1 ||
		    sbx_doc_parse(tools[i].name, tools[i].schema, strlen(tools[i].schema), &schema,
		    &e) == -1 || sbx_node_add(t, "inputSchema", schema) == -1 ||
		    sbx_node_add(list, NULL, t) == -1) {
			sbx_node_free(t);
			sbx_node_free(list);
			list = NULL;
		}
	}
	if (r == NULL || list == NULL || sbx_node_add(r, "tools", list) == -1) {
		sbx_node_free(list);
		sbx_node_free(r);
		return NULL;
	}
	return r;
}

/* A tool's answer: the structured result, and the same as JSON text. */
static struct sbx_node *
tool_result(struct sbx_node *structured, const char *error)
{
	struct sbx_node *r = sbx_node_new(SBX_MAP), *content = sbx_node_new(SBX_SEQ);
	struct sbx_node *text = sbx_node_new(SBX_MAP);
	char *buf = NULL;
	size_t len;

	if (error == NULL && structured != NULL)
		sbx_doc_render(structured, SBX_FMT_JSON, &buf, &len);
	if (r == NULL || content == NULL || text == NULL || add_str(text, "type", "text") == -1 ||
	    add_str(text, "text", error ? error : buf ? buf : "{}") == -1 ||
	    sbx_node_add(content, NULL, text) == -1 || (text = NULL,
	    sbx_node_add(r, "content", content) == -1) || (content = NULL,
	    error == NULL && sbx_node_add(r, "structuredContent", structured) == -1) ||
	    sbx_node_add(r, "isError", sbx_node_bool(error != NULL)) == -1) {
		free(buf);
		sbx_node_free(text);
		sbx_node_free(content);
		sbx_node_free(r);
		return NULL;
	}
	if (error != NULL)
		sbx_node_free(structured);
	free(buf);
	return r;
}

static struct sbx_node *
tools_call(struct session *ss, const struct sbx_node *id, const struct sbx_node *params)
{
	const struct sbx_node *name = params ? sbx_node_get(params, "name") : NULL;
	const struct sbx_node *args = params ? sbx_node_get(params, "arguments") : NULL;
	struct sbx_err e = { 0 };
	struct sbx_node *out;
	char why[sizeof e.msg + 64];
	size_t i;

	if (name == NULL || name->type != SBX_SCALAR || name->plain)
		return rpc_error(id, RPC_PARAMS, "tools/call: params.name must be a tool's name");
	if (args != NULL && args->type != SBX_MAP)
		return rpc_error(id, RPC_PARAMS, "tools/call: params.arguments must be an object");
	for (i = 0; i < SBX_ARRAY_LEN(tools); i++)
		if (strcmp(tools[i].name, name->str) == 0)
			break;
	if (i == SBX_ARRAY_LEN(tools)) {
		snprintf(why, sizeof why, "unknown tool '%.64s' (tools/list names them)", name->str);
		return rpc_error(id, RPC_PARAMS, why);
	}
	if ((out = sbx_node_new(SBX_MAP)) == NULL)
		return NULL;
	if (tools[i].fn(ss, args, out, &e) == -1) {
		/* The exit code an sbx program would have given, for a program to read. */
		snprintf(why, sizeof why, "%s (exit %d)", e.msg, e.code ? e.code : SBX_EX_SOFTWARE);
		return rpc_result(id, tool_result(out, why));
	}
	return rpc_result(id, tool_result(out, NULL));
}

/* One message; NULL: nothing to answer (a notification, or out of memory). */
static struct sbx_node *
handle(struct session *ss, const char *line, size_t len)
{
	const struct sbx_node *id, *method, *params, *ver;
	struct sbx_node *req, *r = NULL;
	struct sbx_err e = { 0 };
	char why[sizeof e.msg + 32];

	if (line[strspn(line, " \t\r")] == '[')
		return rpc_error(NULL, RPC_INVALID, "invalid request: batches are not part of MCP");
	if (sbx_doc_parse("request", line, len, &req, &e) == -1) {
		snprintf(why, sizeof why, "parse error: %s", e.msg);
		return rpc_error(NULL, RPC_PARSE, why);
	}
	id = req->type == SBX_MAP ? sbx_node_get(req, "id") : NULL;
	method = req->type == SBX_MAP ? sbx_node_get(req, "method") : NULL;
	params = req->type == SBX_MAP ? sbx_node_get(req, "params") : NULL;
	ver = req->type == SBX_MAP ? sbx_node_get(req, "jsonrpc") : NULL;
	if (id != NULL && (id->type != SBX_SCALAR || strcmp(id->str, "null") == 0))
		id = NULL;
	if (req->type != SBX_MAP || ver == NULL || ver->type != SBX_SCALAR ||
	    strcmp(ver->str, "2.0") != 0 || method == NULL || method->type != SBX_SCALAR ||
	    method->plain || (params != NULL && params->type != SBX_MAP)) {
		/* A response of the client's (it sends none we asked for) is dropped. */
		if (req->type != SBX_MAP || sbx_node_get(req, "method") != NULL ||
		    (sbx_node_get(req, "result") == NULL && sbx_node_get(req, "error") == NULL))
			r = rpc_error(id, RPC_INVALID, "invalid request: a JSON-RPC 2.0 object with "
			    "jsonrpc \"2.0\", a method and object params (no batches)");
	} else if (id == NULL && sbx_node_get(req, "id") == NULL) {
		r = NULL;  /* a notification: notifications/initialized, cancelled... */
	} else if (strcmp(method->str, "initialize") == 0) {
		r = rpc_result(id, initialize(params));
	} else if (strcmp(method->str, "ping") == 0) {
		r = rpc_result(id, sbx_node_new(SBX_MAP));
	} else if (strcmp(method->str, "tools/list") == 0) {
		r = rpc_result(id, tools_list());
	} else if (strcmp(method->str, "tools/call") == 0) {
		r = tools_call(ss, id, params);
	} else {
		snprintf(why, sizeof why, "method not found: %.64s", method->str);
		r = rpc_error(id, RPC_NO_METHOD, why);
	}
	sbx_node_free(req);
	return r;
}

/* The next line of in, at most LINE_MAX_BYTES (a longer one is read to its
 * end and refused). 0 at the end of input. */
static int
next_line(FILE *in, char *buf, size_t *len, int *too_long)
{
	int c;

	*len = 0;
	*too_long = 0;
	while ((c = getc(in)) != EOF && c != '\n') {
		if (*len < LINE_MAX_BYTES)
			buf[(*len)++] = (char)c;
		else
			*too_long = 1;
	}
	buf[*len] = '\0';
	return c != EOF || *len > 0 || *too_long;
}

int
sbx_mcp_serve(const struct sbx_store *s, const struct sbx_mcp_opts *o, FILE *in, FILE *out,
    struct sbx_err *e)
{
	struct session ss = { s, o, { NULL, 0 } };
	char *buf = malloc(LINE_MAX_BYTES + 1);
	size_t len, k;
	int too_long;

	if (buf == NULL)
		return sbx_err_set(e, SBX_EX_OSERR, "out of memory");
	while (next_line(in, buf, &len, &too_long)) {
		for (k = 0; k < len && isspace((unsigned char)buf[k]); k++)
			;
		if (too_long)
			respond(out, rpc_error(NULL, RPC_INVALID, "request over 1 MiB"));
		else if (k < len)
			respond(out, handle(&ss, buf, len));
		if (ferror(out)) {
			sbx_err_set(e, SBX_EX_IOERR, "stdout: the client is gone");
			break;
		}
	}
	free(buf);
	sbx_strv_free(&ss.own);
	return ferror(out) ? -1 : 0;
}
