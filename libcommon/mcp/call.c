/*
 * call.c: tool calls (libcommon/mcp, mcp.h): a tools/call's arguments
 * checked, confined and mapped, then queued; the loop moves each call on
 * (waiting for a job slot or the index, its command running, its fallback
 * standing in) and answers it from what its command said.
 */
#include "mcp/internal.h"

#include <errno.h>

void mcp_call_free(struct mcp_call *c)
{
	struct mcp_server *srv = c->srv;

	mcp_proc_release(&c->p);
	if (c->state == CALL_RUNNING)
		srv->running_jobs--;
	mcp_stream_unref(c->st);
	json_decref(c->id);
	json_decref(c->args);
	json_decref(c->token);
	free(c->label);
	free(c->preparing);
	free(c);
}

void mcp_call_unlink(struct mcp_call *c)
{
	struct mcp_server *srv = c->srv;
	struct mcp_call **pp;

	for (pp = &srv->calls; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

void mcp_call_progress(struct mcp_call *c, const char *msg)
{
	if (!c->token)
		return;
	mcp_send_json(c->st, json_pack("{s:s, s:s, s:{s:O, s:i, s:s}}", "jsonrpc", "2.0",
				   "method", "notifications/progress", "params",
				   "progressToken", c->token, "progress", (json_int_t)c->ticks++,
				   "message", msg), 0);
}

/*
 * The answer of a resources/read from the result its command gave (consumed):
 * the "text" of its first record as the resource's contents, a tool error as a
 * JSON-RPC error.
 */
static void resource_answer(struct mcp_call *c, json_t *r)
{
	json_t *sc = json_object_get(r, "structuredContent");
	const char *text = json_string_value(json_object_get(json_array_get(json_object_get(sc, "results"), 0),
							     "text"));
	const char *err = json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0),
							    "text"));
	const char *uri = json_string_value(json_object_get(c->tool, "uri"));

	if (json_is_true(json_object_get(r, "isError")) || !text) {
		const char *prep = json_string_value(json_object_get(sc, "preparing"));
		const char *msg = json_string_value(json_object_get(sc, "message"));
		char *m = xasprintf("cannot read %s: %s", uri,
				    json_is_true(json_object_get(r, "isError")) && err ? err :
				    prep && *prep ? prep : msg && *msg ? msg : "its command gave no text");

		mcp_reply_error(c->st, c->id, -32603, m);
		free(m);
	} else {
		mcp_reply(c->st, c->id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType",
					      json_string_value(json_object_get(c->tool, "mimeType")) ?
					      json_string_value(json_object_get(c->tool, "mimeType")) : "text/plain",
					      "text", text));
	}
	json_decref(r);
}

/* Answer c with result r (consumed) and forget it. */
void mcp_call_answer(struct mcp_call *c, json_t *r)
{
	mcp_call_unlink(c);
	if (c->resource)
		resource_answer(c, r);
	else
		mcp_reply(c->st, c->id, r);
	mcp_call_free(c);
}

/*
 * The answer of a tool with an "output" program (mcp_map_answer(); in is
 * consumed); an error in its programs is a tool error.
 */
static json_t *mapped_result(struct mcp_server *srv, json_t *tool, json_t *in)
{
	json_t *sc, *text, *r;
	char *err = mcp_map_answer(&srv->map, tool, in, &sc, &text);

	json_decref(in);
	if (err) {
		r = mcp_tool_error("%s", err);
		free(err);
		return r;
	}
	if (!text)
		return mcp_tool_result(sc);
	r = json_pack("{s:[{s:s, s:o}], s:o}", "content", "type", "text", "text", text, "structuredContent", sc);
	return r;
}

/*
 * mapped_result() with what the tool remembers of the client's session as
 * .session, and its "session" program's view of the answer remembered.
 */
static json_t *session_result(struct mcp_call *c, json_t *in)
{
	struct mcp_server *srv = c->srv;
	json_t *old = mcp_map_session_get(&srv->map, c->st->sess, c->tool), *r, *sc, *st;
	char *err = NULL;

	json_object_set(in, "session", old ? old : json_null());
	r = mapped_result(srv, c->tool, in);
	sc = json_object_get(r, "structuredContent");
	if (!json_is_object(sc) || json_is_true(json_object_get(r, "isError")))
		return r;
	st = json_pack("{s:O, s:O, s:O}", "session", old ? old : json_null(), "structuredContent", sc,
		       "args", c->args);
	old = mcp_map_run(&srv->map, c->tool, "session", st, &err);
	json_decref(st);
	if (old)
		mcp_map_session_set(&srv->map, c->st->sess, c->tool, old);
	else if (err)
		mcp_log(srv, c->st, MCP_LOG_WARNING, "the session program of %s: %s",
		       json_string_value(json_object_get(c->tool, "name")), err);
	free(err);
	return r;
}

/* The records of a command's output, each line parsed (a line that is not JSON is left out). */
static json_t *output_records(const struct mcp_proc *p)
{
	json_t *records = json_array();
	const char *s, *e;

	for (s = p->out.buf; s < p->out.buf + p->out.len; s = e + 1) {
		json_t *rec;
		e = memchr(s, '\n', (size_t)(p->out.buf + p->out.len - s));
		if (!e)
			e = p->out.buf + p->out.len;
		rec = json_loadb(s, (size_t)(e - s), 0, NULL);
		if (rec)
			json_array_append_new(records, rec);
	}
	return records;
}

/*
 * What the output program of c's tool reads: args, records, exit (the
 * command's status), message (its stderr), truncated, preparing, session.
 */
static json_t *command_mapped(struct mcp_call *c)
{
	struct mcp_proc *p = &c->p;
	json_t *records = output_records(p), *in;

	buf_rtrim(&p->err);
	in = json_pack("{s:O, s:o, s:i, s:s%, s:b}", "args", c->args, "records", records,
		       "exit", (json_int_t)p->status, "message", p->err.buf, p->err.len, "truncated", p->truncated);
	if (!in)	/* stderr not UTF-8 */
		in = json_pack("{s:O, s:o, s:i, s:s, s:b}", "args", c->args, "records", records,
			       "exit", (json_int_t)p->status, "message", "", "truncated", p->truncated);
	if (c->preparing)
		json_object_set_new(in, "preparing", json_string(c->preparing));
	return session_result(c, in);
}

/* Turn the finished command's output into the answer. */
json_t *mcp_command_result(struct mcp_call *c)
{
	struct mcp_server *srv = c->srv;
	struct mcp_proc *p = &c->p;
	json_t *results, *sc;
	/* exit 2 after records: a limit cut the search short (ci-grep(1)); usage errors write none */
	int partial = p->status == 2 && p->out.len && !p->truncated;

	if (p->status == 127 || p->status == 126) {
		buf_rtrim(&p->err);
		return mcp_tool_error("cannot run the command for this tool: %s",
				  p->err.len ? p->err.buf : "is ci installed?");
	}
	if (json_object_get(c->tool, "output") &&
	    (p->status < 2 || p->truncated || partial ||
	     (p->status < 128 && json_is_true(json_object_get(c->tool, "map_errors")))))
		return command_mapped(c);
	if (p->status >= 2 && !p->truncated && !partial) {
		buf_rtrim(&p->err);
		mcp_log(srv, c->st, MCP_LOG_WARNING, "%s failed: %s", c->label, p->err.len ? p->err.buf : "exit status");
		if (p->status >= 128)
			return mcp_tool_error("the command %s died of signal %d", c->label, p->status - 128);
		return mcp_tool_error("%s", p->err.len ? p->err.buf : "the command failed");
	}
	results = output_records(p);
	sc = json_pack("{s:o, s:i}", "results", results, "count", (json_int_t)json_array_size(results));
	if (p->truncated)
		json_object_set_new(sc, "truncated", json_true());
	if (p->status == 1) {
		buf_rtrim(&p->err);
		json_object_set_new(sc, "message", json_string(p->err.len ? p->err.buf : "nothing found"));
	}
	if (partial) {
		buf_rtrim(&p->err);
		json_object_set_new(sc, "incomplete", json_true());
		json_object_set_new(sc, "message", json_stringn(p->err.buf, p->err.len));
	}
	if (c->preparing)
		json_object_set_new(sc, "preparing", json_string(c->preparing));
	return mcp_tool_result(sc);
}

/*
 * Start the command of c (the tool's argv, or its fallback when fallback); on
 * failure answer c (which is then freed) and return -1.
 */
static int call_start(struct mcp_call *c, int fallback)
{
	struct mcp_server *srv = c->srv;
	json_t *schema = json_object_get(c->tool, "inputSchema");
	json_t *groups = fallback ? json_object_get(c->tool, "fallback") : mcp_pick_argv(c->tool, c->args);
	char **argv = mcp_build_argv(groups, c->args, schema);
	struct buf b = BUF_INIT;
	const char *stdin_param = json_string_value(json_object_get(c->tool, "stdin"));
	json_t *in;
	int rc, in_fd = -1;

	for (size_t i = 0; argv[i]; i++)
		buf_addf(&b, i ? " '%s'" : "%s", argv[i]);
	mcp_log(srv, c->st, MCP_LOG_DEBUG, "run %s", b.buf);
	buf_release(&b);
	free(c->label);
	c->label = xstrdup(argv[0] ? argv[0] : "?");
	srv->root = c->root;
	if (srv->shards) {
		argv = mcp_shards_argv(c->tool, c->args, argv);
		mcp_shard_servers_check(srv, argv[0]);
	}
	if (!argv[0]) {
		mcp_free_argv(argv);
		mcp_call_answer(c, mcp_tool_error("this tool's argv is empty"));
		return -1;
	}
	/* the tool's "stdin": that parameter's value is the command's standard input */
	in = stdin_param && !fallback ? json_object_get(c->args, stdin_param) : NULL;
	if (json_is_string(in) && (in_fd = mcp_text_fd(json_string_value(in), json_string_length(in))) < 0) {
		char *m = xasprintf("cannot pass '%s' to '%s': %s", stdin_param, argv[0], strerror(errno));
		mcp_log(srv, c->st, MCP_LOG_WARNING, "%s", m);
		mcp_call_answer(c, mcp_tool_error("%s", m));
		free(m);
		mcp_free_argv(argv);
		return -1;
	}
	rc = mcp_proc_start(srv, &c->p, argv, in_fd);
	if (in_fd >= 0)
		close(in_fd);
	if (rc < 0) {
		int e = errno;
		char *m = rc == -2 ? xasprintf("cannot enter '%s': %s", srv->root, strerror(e)) :
				     xasprintf("cannot run '%s': %s", argv[0], strerror(e));
		mcp_log(srv, c->st, MCP_LOG_WARNING, "%s", m);
		mcp_call_answer(c, mcp_tool_error("%s", m));
		free(m);
		mcp_free_argv(argv);
		return -1;
	}
	mcp_free_argv(argv);
	if (fallback)
		c->p.max_lines = (long)json_integer_value(json_object_get(c->tool, "fallback_limit"));
	b = (struct buf)BUF_INIT;
	buf_addf(&b, "running %s", c->label);
	mcp_call_progress(c, b.buf);
	buf_release(&b);
	return 0;
}

/* Start the command of c and count it as a running job. */
static void call_run(struct mcp_call *c, int fallback)
{
	struct mcp_server *srv = c->srv;

	if (call_start(c, fallback) < 0)
		return;
	c->state = CALL_RUNNING;
	srv->running_jobs++;
}

static char *fallback_note(struct mcp_server *srv)
{
	char *d = mcp_indexer_doing(srv);
	char *r = xasprintf("the index is %s; until it is ready these are lexical matches (ci-grep), "
			    "not ranked results: ask again later", d);

	free(d);
	return r;
}

/* What a call waiting for the index does once it may go on. */
static void call_after_index(struct mcp_call *c, int index_ready)
{
	struct mcp_server *srv = c->srv;

	if (index_ready) {
		call_run(c, 0);
		return;
	}
	if (mcp_index_exists(srv)) {
		char *d = mcp_indexer_doing(srv);
		c->preparing = xasprintf("the index is %s; these results may miss the latest changes", d);
		free(d);
		call_run(c, 0);
	} else if (json_object_get(c->tool, "fallback")) {
		c->preparing = fallback_note(srv);
		call_run(c, 1);
	} else if (json_object_get(c->tool, "output")) {
		char *d = mcp_indexer_doing(srv);
		char *m = xasprintf("the index is %s; this tool needs it: ask again in a little while", d);
		json_t *in = json_pack("{s:O, s:[], s:i, s:s, s:b, s:s}", "args", c->args, "records", "exit", 0,
				       "message", "", "needs_index", 1, "preparing", m);
		free(d);
		free(m);
		mcp_call_answer(c, mapped_result(srv, c->tool, in));
	} else {
		json_t *sc = json_pack("{s:[], s:i, s:s}", "results", "count", 0, "preparing", "");
		char *d = mcp_indexer_doing(srv);
		char *m = xasprintf("the index is %s; this tool needs it: ask again in a little while "
				    "(grep works now)", d);
		free(d);
		json_object_set_new(sc, "preparing", json_string(m));
		free(m);
		mcp_call_answer(c, mcp_tool_result(sc));
	}
}

/* Move the calls on: start what may start, give up waiting, time out. */
void mcp_advance_calls(struct mcp_server *srv)
{
	long long now = mcp_now_ms();
	struct mcp_call *c, *next;

	for (c = srv->calls; c; c = next) {
		next = c->next;
		if (c->state == CALL_QUEUED) {
			if (srv->running_jobs >= srv->max_jobs)
				continue;
			if (!c->wants_index) {
				call_run(c, 0);
				continue;
			}
			if (!srv->indexer.running && (c->force_index || !srv->indexer.done || now - srv->indexer.done >= 10000) &&
			    !(c->force_index && srv->indexer.done > c->started))
				mcp_indexer_start(srv);
			if (!srv->indexer.running) {
				call_run(c, 0);
				continue;
			}
			c->state = CALL_WAIT_INDEX;
			mcp_call_progress(c, mcp_index_exists(srv) ? "updating the index" : "building the index");
			/*
			 * No index yet: start the lexical stand-in now, so that its
			 * answer is ready when the wait is over.
			 */
			if (!mcp_index_exists(srv) && !c->force_index && json_object_get(c->tool, "fallback")) {
				if (call_start(c, 1) < 0)
					continue;
				c->spec = 1;
			}
		}
		if (c->state == CALL_WAIT_INDEX) {
			if (!srv->indexer.running && !mcp_index_exists(srv) && srv->indexer.last_error &&
			    json_object_get(c->tool, "fallback")) {
				/* no index and none coming: the lexical stand-in, saying why */
				c->preparing = xasprintf("the index could not be built (%s); these are lexical "
							 "matches (ci-grep), not ranked results", srv->indexer.last_error);
				if (!c->spec) {
					call_run(c, 1);
				} else if (c->spec_done) {
					mcp_call_answer(c, mcp_command_result(c));
				} else {
					c->spec = 0;
					c->state = CALL_RUNNING;
					srv->running_jobs++;
				}
				continue;
			}
			if (!srv->indexer.running) {
				if (c->spec) {
					mcp_proc_release(&c->p);
					memset(&c->p, 0, sizeof(c->p));
					c->p.fd[0] = c->p.fd[1] = -1;
					c->p.out = (struct buf)BUF_INIT;
					c->p.err = (struct buf)BUF_INIT;
					c->spec = c->spec_done = 0;
				}
				c->state = CALL_QUEUED;
				if (srv->running_jobs < srv->max_jobs)
					call_after_index(c, 1);
			} else if (!c->force_index && now >= c->started + srv->wait_s * 1000) {
				if (!c->spec) {
					call_after_index(c, 0);
					continue;
				}
				c->preparing = fallback_note(srv);
				c->spec = 0;
				if (c->spec_done) {
					mcp_call_answer(c, mcp_command_result(c));
				} else {
					c->state = CALL_RUNNING;
					srv->running_jobs++;
				}
			}
		}
	}
}

int mcp_call_uses_id(struct mcp_server *srv, struct mcp_session *sess, json_t *id)
{
	for (struct mcp_call *c = srv->calls; c; c = c->next)
		if (c->st->sess == sess && json_equal(c->id, id))
			return 1;
	return 0;
}

/*
 * Refuse a call's arguments: a tool error saying why, or, for a tool with
 * "map_errors", what its output program makes of {"args", "error"}.
 */
static void reply_invalid(struct mcp_stream *st, json_t *id, json_t *tool, json_t *args, const char *why)
{
	struct mcp_server *srv = st->srv;

	if (json_object_get(tool, "output") && json_is_true(json_object_get(tool, "map_errors")))
		mcp_reply(st, id, mapped_result(srv, tool, json_pack("{s:O, s:[], s:i, s:s, s:s}", "args", args,
							    "records", "exit", 2, "message", why, "error", why)));
	else
		mcp_reply(st, id, mcp_tool_error("%s", why));
}

/* Confine a path parameter's value (a string or an array of them) in place; NULL or why not. */
static char *confine_param(struct mcp_server *srv, json_t *args, const char *k, json_t *v)
{
	json_t *e;
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, e) {
			const char *w = NULL;
			char *rel = json_is_string(e) ? mcp_confine(srv->root, json_string_value(e), &w) : NULL;
			if (!rel)
				return xasprintf("parameter '%s': '%s' %s", k, json_string_value(e),
						 w ? w : "is not a path");
			json_array_set_new(v, i, json_string(rel));
			free(rel);
		}
	} else if (json_is_string(v)) {
		const char *w = NULL;
		char *rel = mcp_confine(srv->root, json_string_value(v), &w);
		if (!rel)
			return xasprintf("parameter '%s': '%s' %s", k, json_string_value(v), w);
		json_object_set_new(args, k, json_string(rel));
		free(rel);
	}
	return NULL;
}

/*
 * With --repo, the call's "repo" argument (default: the first repository)
 * becomes the root its paths are confined to and its command runs in, and
 * args.repo names it for the output program.  NULL or why not.
 */
static char *pick_repo(struct mcp_server *srv, json_t *schema, json_t *args)
{
	const char *want = json_string_value(json_object_get(args, "repo"));
	struct buf b = BUF_INIT;
	size_t i;

	srv->root = srv->home;
	if (!json_object_get(json_object_get(schema, "properties"), "repo"))
		return NULL;
	/* bobbin's "all": one command answers for one repository */
	if (want && !strcmp(want, "all")) {
		if (srv->repos_nr > 1) {
			for (i = 0; i < srv->repos_nr; i++)
				buf_addf(&b, "%s%s", i ? ", " : "", srv->repos[i].name);
			char *why = xasprintf("parameter 'repo': 'all' answers for one repository and "
					      "this server has %zu: name one (%s)", srv->repos_nr, b.buf);
			buf_release(&b);
			return why;
		}
		want = NULL;
	}
	for (i = 0; i < srv->repos_nr; i++)
		if (!want || !strcmp(want, srv->repos[i].name)) {
			srv->root = srv->repos[i].root;
			json_object_set_new(args, "repo", json_string(srv->repos[i].name));
			return NULL;
		}
	for (i = 0; i < srv->repos_nr; i++)
		buf_addf(&b, "%s%s", i ? ", " : "", srv->repos[i].name);
	{
		char *why = xasprintf("parameter 'repo': unknown repository '%s' (known: %s)", want, b.buf);
		buf_release(&b);
		return why;
	}
}

/*
 * A tools/call: validate, confine paths, then answer at once (an error, a
 * built-in) or queue a call for the loop.
 */

void mcp_tools_call(struct mcp_stream *st, json_t *id, json_t *tool, json_t *args, json_t *token)
{
	struct mcp_server *srv = st->srv;
	json_t *schema = json_object_get(tool, "inputSchema"), *props;
	const char *k;
	json_t *v;
	char *why;

	args = args ? json_deep_copy(args) : json_object();
	if ((why = mcp_validate(schema, args))) {
		reply_invalid(st, id, tool, args, why);
		free(why);
		json_decref(args);
		return;
	}
	if (json_is_true(json_object_get(tool, mcp_shards_repo_key))) {
		srv->root = srv->home;	/* --shards: "repo" names shards (shards_argv), not a --repo */
	} else if ((why = pick_repo(srv, schema, args))) {
		reply_invalid(st, id, tool, args, why);
		free(why);
		json_decref(args);
		return;
	}
	if (json_is_string(json_object_get(tool, "builtin"))) {
		/* its input program, then the built-in, then its output program on that */
		json_t *prepared = mcp_map_prepare(&srv->map, tool, args, &why), *r;
		if (!prepared) {
			reply_invalid(st, id, tool, args, why);
			free(why);
			json_decref(args);
			return;
		}
		json_decref(args);
		r = mcp_builtin_read(srv, prepared);
		if (json_object_get(tool, "output") && !json_is_true(json_object_get(r, "isError"))) {
			json_t *in = json_pack("{s:O, s:[O], s:i}", "args", prepared, "records",
					       json_object_get(r, "structuredContent"), "exit", 0);
			json_decref(r);
			r = mapped_result(srv, tool, in);
		}
		mcp_reply(st, id, r);
		json_decref(prepared);
		return;
	}
	/* parameters that are paths stay inside the repository */
	props = json_object_get(schema, "properties");
	json_object_foreach(args, k, v) {
		json_t *pp = json_object_get(props, k);
		const char *fmt = json_string_value(json_object_get(pp, "format"));
		if (!fmt)
			fmt = json_string_value(json_object_get(json_object_get(pp, "items"), "format"));
		if (fmt && !strcmp(fmt, "path") && (why = confine_param(srv, args, k, v))) {
			reply_invalid(st, id, tool, args, why);
			free(why);
			json_decref(args);
			return;
		}
	}
	{
		json_t *prepared = mcp_map_prepare(&srv->map, tool, args, &why);
		if (!prepared) {
			reply_invalid(st, id, tool, args, why);
			free(why);
			json_decref(args);
			return;
		}
		json_decref(args);
		args = prepared;
	}
	if (!mcp_pick_argv(tool, args)) {
		struct buf b = BUF_INIT;
		json_t *var;
		size_t i;
		json_array_foreach(json_object_get(tool, "variants"), i, var) {
			const char *w = json_string_value(json_object_get(var, "when"));
			size_t l = w ? strcspn(w, "=") : 0;
			if (l && !strstr(b.buf, w))
				buf_addf(&b, "%s%.*s", b.len ? ", " : "", (int)l, w);
		}
		mcp_reply(st, id, mcp_tool_error("give one of these parameters: %s", b.buf));
		buf_release(&b);
		json_decref(args);
		return;
	}
	mcp_queue_call(st, id, tool, args, token, 0);
}

/* Queue a call of tool (a tool, or a resource when resource) for the loop; steals args. */
void mcp_queue_call(struct mcp_stream *st, json_t *id, json_t *tool, json_t *args, json_t *token, int resource)
{
	struct mcp_server *srv = st->srv;
	struct mcp_call *c, **tail;
	const char *rp;

	c = xcalloc(1, sizeof(*c));
	c->srv = srv;
	c->resource = resource;
	c->id = json_incref(id);
	c->st = st;
	if (st->http) {
		pthread_mutex_lock(&srv->lock);
		st->refs++;
		pthread_mutex_unlock(&srv->lock);
	}
	c->tool = tool;
	c->args = args;
	c->token = json_incref(token);
	c->state = CALL_QUEUED;
	/* a shard set's indexes are built by ci fleet, not here */
	c->wants_index = !srv->shards && json_is_true(json_object_get(tool, "index"));
	c->root = srv->root;
	rp = json_string_value(json_object_get(tool, "refresh"));
	c->force_index = rp && json_is_true(json_object_get(args, rp));
	c->started = mcp_now_ms();
	c->deadline = c->started + srv->timeout_s * 1000;
	c->next_tick = c->started + 1000;
	c->p.pid = 0;
	c->p.fd[0] = c->p.fd[1] = -1;
	c->p.out = (struct buf)BUF_INIT;
	c->p.err = (struct buf)BUF_INIT;
	for (tail = &srv->calls; *tail; tail = &(*tail)->next)
		;
	*tail = c;
}

/* notifications/cancelled: kill the call's group; answer nothing for it. */
void mcp_cancel(struct mcp_server *srv, struct mcp_session *sess, json_t *rid, const char *reason)
{
	for (struct mcp_call *c = srv->calls; c; c = c->next) {
		if (c->st->sess != sess || !json_equal(c->id, rid))
			continue;
		mcp_log(srv, NULL, MCP_LOG_INFO, "cancelled a call of %s%s%s", json_string_value(json_object_get(c->tool, "name")),
		       reason ? ": " : "", reason ? reason : "");
		mcp_call_unlink(c);
		mcp_stream_close(c->st);
		mcp_call_free(c);
		return;
	}
}

