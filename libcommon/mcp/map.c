/*
 * map.c: the jq programs of ci-mcp's tool tables, run with libjq.
 *
 * A profile serves another system's tools under that system's names and
 * response fields, while the commands answer in ci's records.  The mapping
 * between the two is data: per tool, an "input" program turns the call's
 * arguments into the parameters the argv is built from (and refuses what JSON
 * Schema cannot say, with error("...")), an "output" program turns what the
 * command said into the result's structuredContent, and a "text" program
 * renders that as the result's text block.
 *
 * The workload: a few programs per table, each run once per call on a few
 * hundred records, in the one thread that serves calls.  So each program is
 * compiled once: when the table is loaded (a bad program is a bad table), or,
 * for the tables compiled in (which the tests compile whole), when a call first
 * runs it, since compiling jq's builtins for each of a large table's programs
 * costs the server a second before its first answer.  Values cross between
 * Jansson and jq as JSON text, which costs little at that size and keeps one
 * representation per side.
 */
#include "core/common.h"
#include "mcp/map.h"

#include <jq.h>

/* A compiled program of a tool. */
struct mcp_prog {
	json_t *tool;		/* the tool's table entry (borrowed) */
	const char *key;	/* one of prog_keys (static) */
	jq_state *jq;		/* compiled; NULL until first run, when lazy */
	char *text;		/* the program, until compiled */
};

/* What a tool remembers of one client's session (its "session" program's output). */
struct mcp_memo {
	const void *sess;	/* the client's session (an address that lives as long as the server) */
	json_t *tool;		/* the tool (borrowed) */
	json_t *state;		/* owned */
};

static const char *const prog_keys[] = { "input", "output", "text", "session", "defaults" };

void mcp_map_lazy(struct mcp_map *m, int on)
{
	m->lazy = on;
}

json_t *mcp_map_session_get(struct mcp_map *m, const void *sess, json_t *tool)
{
	for (size_t i = 0; i < m->memos_nr; i++)
		if (m->memos[i].sess == sess && m->memos[i].tool == tool)
			return m->memos[i].state;
	return NULL;
}

void mcp_map_session_set(struct mcp_map *m, const void *sess, json_t *tool, json_t *state)
{
	for (size_t i = 0; i < m->memos_nr; i++)
		if (m->memos[i].sess == sess && m->memos[i].tool == tool) {
			json_decref(m->memos[i].state);
			m->memos[i].state = state;
			return;
		}
	ALLOC_GROW(m->memos, m->memos_nr + 1, m->memos_alloc);
	m->memos[m->memos_nr++] = (struct mcp_memo){ sess, tool, state };
}

/* Collects compile errors (jq reports them through a callback). */
static void on_jq_error(void *data, jv msg)
{
	struct buf *b = data;

	msg = jq_format_error(msg);
	if (b->len)
		buf_addstr(b, "; ");
	for (const char *s = jv_string_value(msg); *s; s++)	/* one line */
		buf_addch(b, *s == '\n' ? ' ' : *s);
	buf_rtrim(b);
	jv_free(msg);
}

/* A program's text: a string, or an array of strings joined by newlines. */
static int prog_text(struct buf *out, json_t *v)
{
	json_t *line;
	size_t i;

	if (json_is_string(v)) {
		buf_addstr(out, json_string_value(v));
		return 0;
	}
	if (!json_is_array(v))
		return -1;
	json_array_foreach(v, i, line) {
		if (!json_is_string(line))
			return -1;
		buf_addstr(out, json_string_value(line));
		buf_addch(out, '\n');
	}
	return 0;
}

/* Compile text; the state, or NULL with *err (malloc'd) saying why. */
static jq_state *compile_prog(const char *key, const char *text, char **err)
{
	struct buf msg = BUF_INIT;
	jq_state *jq = jq_init();

	if (!jq)
		die("cannot start jq");
	jq_set_error_cb(jq, on_jq_error, &msg);
	if (!jq_compile(jq, text)) {
		*err = xasprintf("\"%s\": %s", key, msg.len ? msg.buf : "the jq program does not compile");
		jq_teardown(&jq);
		buf_release(&msg);
		return NULL;
	}
	jq_set_error_cb(jq, NULL, NULL);
	buf_release(&msg);
	return jq;
}

int mcp_map_compile(struct mcp_map *m, json_t *tool, char **err)
{
	for (size_t k = 0; k < ARRAY_SIZE(prog_keys); k++) {
		json_t *v = json_object_get(tool, prog_keys[k]);
		struct buf text = BUF_INIT;
		jq_state *jq = NULL;

		if (!v)
			continue;
		if (prog_text(&text, v) < 0) {
			buf_release(&text);
			*err = xasprintf("\"%s\" must be a jq program: a string or an array of strings",
					 prog_keys[k]);
			return -1;
		}
		if (!m->lazy && !(jq = compile_prog(prog_keys[k], text.buf, err))) {
			buf_release(&text);
			return -1;
		}
		ALLOC_GROW(m->progs, m->progs_nr + 1, m->progs_alloc);
		m->progs[m->progs_nr++] = (struct mcp_prog){ tool, prog_keys[k], jq, jq ? NULL : buf_detach(&text, NULL) };
		buf_release(&text);
	}
	return 0;
}

/* The tool's program key, compiled now if it was not; NULL (with *err when it does not compile). */
static jq_state *tool_prog(struct mcp_map *m, json_t *tool, const char *key, char **err)
{
	for (size_t i = 0; i < m->progs_nr; i++) {
		struct mcp_prog *p = &m->progs[i];

		if (p->tool == tool && !strcmp(p->key, key)) {
			if (!p->jq && p->text) {
				p->jq = compile_prog(key, p->text, err);
				if (!p->jq)
					return NULL;
				free(p->text);
				p->text = NULL;
			}
			return p->jq;
		}
	}
	return NULL;
}

json_t *mcp_map_run(struct mcp_map *m, json_t *tool, const char *key, json_t *input, char **err)
{
	char *s;
	jv in, r;
	json_t *out = NULL;
	jq_state *jq;

	*err = NULL;
	if (!(jq = tool_prog(m, tool, key, err)))
		return NULL;
	s = json_dumps(input, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	if (!s)
		die("cannot encode the input of a jq program");
	in = jv_parse(s);
	free(s);
	if (!jv_is_valid(in)) {
		jv_free(in);
		*err = xasprintf("the %s program's input is not valid JSON", key);
		return NULL;
	}
	jq_start(jq, in, 0);
	r = jq_next(jq);
	if (jv_is_valid(r)) {
		jv d = jv_dump_string(r, 0);
		out = json_loads(jv_string_value(d), JSON_DECODE_ANY, NULL);
		jv_free(d);
		if (!out)
			*err = xasprintf("the %s program gave a value Jansson cannot read", key);
	} else if (jv_invalid_has_msg(jv_copy(r))) {
		jv msg = jv_invalid_get_msg(r);
		if (jv_get_kind(msg) == JV_KIND_STRING) {
			*err = xstrdup(jv_string_value(msg));
			jv_free(msg);
		} else {
			jv d = jv_dump_string(msg, 0);
			*err = xstrdup(jv_string_value(d));
			jv_free(d);
		}
	} else {
		jv_free(r);
		*err = xasprintf("the %s program gave nothing", key);
	}
	/* drop what else it would give: the first output is the answer */
	jq_start(jq, jv_null(), 0);
	return out;
}

json_t *mcp_map_prepare(struct mcp_map *m, json_t *tool, json_t *args, char **why)
{
	json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
	json_t *in = json_copy(args), *p, *out;
	const char *k;

	*why = NULL;
	if (!json_object_get(tool, "input") && !json_object_get(tool, "output")) {
		json_decref(in);
		return json_incref(args);
	}
	json_object_foreach(props, k, p)
		if (!json_object_get(in, k) && json_object_get(p, "default"))
			json_object_set(in, k, json_object_get(p, "default"));
	if (!json_object_get(tool, "input"))
		return in;
	out = mcp_map_run(m, tool, "input", in, why);
	json_decref(in);
	if (out && !json_is_object(out)) {
		json_decref(out);
		out = NULL;
	}
	if (!out && !*why)
		*why = xstrdup("the input program of this tool gave no object");
	return out;
}

char *mcp_map_answer(struct mcp_map *m, json_t *tool, json_t *in, json_t **sc, json_t **text)
{
	char *err = NULL;

	*sc = *text = NULL;
	*sc = mcp_map_run(m, tool, "output", in, &err);
	if (!*sc || !json_is_object(*sc)) {
		json_decref(*sc);
		*sc = NULL;
		return err ? err : xstrdup("the output program of this tool gave no object");
	}
	*text = mcp_map_run(m, tool, "text", *sc, &err);
	if (!err && *text && !json_is_string(*text))
		err = xstrdup("the text program of this tool gave no string");
	if (err) {
		json_decref(*sc);
		json_decref(*text);
		*sc = *text = NULL;
	}
	return err;
}

void mcp_map_release(struct mcp_map *m)
{
	for (size_t i = 0; i < m->progs_nr; i++) {
		if (m->progs[i].jq)
			jq_teardown(&m->progs[i].jq);
		free(m->progs[i].text);
	}
	free(m->progs);
	m->progs = NULL;
	m->progs_nr = m->progs_alloc = 0;
	for (size_t i = 0; i < m->memos_nr; i++)
		json_decref(m->memos[i].state);
	free(m->memos);
	m->memos = NULL;
	m->memos_nr = m->memos_alloc = 0;
}
