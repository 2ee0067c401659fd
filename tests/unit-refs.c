/*
 * unit-refs.c: TAP tests of ci-refs' engine without an index: the import
 * graph's components and shortest cycles (digraph.h), reverse import
 * distances, the impact score and order, the symbol search's fuzzy score and
 * the splitting of qualified names (refs.h).
 */
#include "core/common.h"
#include "graph/digraph.h"
#include "graph/refs.h"

static int test_nr;	/* tests run so far */
static int failures;	/* of which failed */

static void ok(int cond, const char *desc)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_nr, desc);
	failures += !cond;
}

static void is_int(long got, long want, const char *desc)
{
	ok(got == want, desc);
	if (got != want)
		printf("#   got %ld, expected %ld\n", got, want);
}

static void is_str(const char *got, const char *want, const char *desc)
{
	int same = got && want ? !strcmp(got, want) : got == want;

	ok(same, desc);
	if (!same)
		printf("#   got '%s', expected '%s'\n", got ? got : "(null)", want ? want : "(null)");
}

/*
 * a.c -> b.c -> c.c -> a.c (a cycle of three), c.c -> d.c -> e.c (no cycle),
 * f.c -> f.c (imports itself), g.c alone.  Edges given twice are kept once.
 */
static void build(struct digraph *g)
{
	static const char *const names[] = { "a.c", "b.c", "c.c", "d.c", "e.c", "f.c", "g.c" };
	static const int edges[][2] = { { 0, 1 }, { 1, 2 }, { 2, 0 }, { 2, 3 }, { 3, 4 }, { 5, 5 },
					{ 0, 1 }, { 2, 3 } };

	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		digraph_add_node(g, names[i]);
	digraph_nodes_done(g);
	for (size_t i = 0; i < ARRAY_SIZE(edges); i++)
		digraph_add_edge(g, edges[i][0], edges[i][1]);
	digraph_finish(g);
}

static void test_graph(void)
{
	struct digraph g;
	int comp[7], path[8], dist[7];
	size_t ncomp, len;

	build(&g);
	is_int(digraph_node(&g, "d.c"), 3, "node by name");
	is_int(digraph_node(&g, "x.c"), -1, "unknown node");
	is_int((long)g.adj_nr[0], 1, "duplicate edge kept once");
	ncomp = digraph_scc(&g, comp);
	is_int((long)ncomp, 5, "components: {a,b,c} {d} {e} {f} {g}");
	ok(comp[0] == comp[1] && comp[1] == comp[2], "a, b, c in one component");
	ok(comp[3] != comp[0] && comp[3] != comp[4], "d alone");
	ok(comp[5] != comp[6], "f and g apart");
	len = digraph_cycle_path(&g, comp, 0, path);
	is_int((long)len, 4, "cycle through a: a b c a");
	ok(len == 4 && path[0] == 0 && path[1] == 1 && path[2] == 2 && path[3] == 0, "cycle path order");
	len = digraph_cycle_path(&g, comp, 5, path);
	ok(len == 2 && path[0] == 5 && path[1] == 5, "self-import: f f");
	is_int((long)digraph_cycle_path(&g, comp, 3, path), 0, "no cycle through d");
	/* who imports e.c: d (1), c (2), b (3); a (4, through b) is beyond --depth 3 */
	digraph_reverse_distance(&g, 4, 3, dist);
	is_int(dist[4], 0, "distance to itself");
	is_int(dist[3], 1, "d imports e");
	is_int(dist[2], 2, "c imports d");
	is_int(dist[1], 3, "b imports c");
	is_int(dist[0], -1, "a is beyond depth 3");
	is_int(dist[6], -1, "g never reaches e");
	digraph_reverse_distance(&g, 4, 0, dist);
	is_int(dist[3], -1, "depth 0: nothing but the file");
	digraph_release(&g);
}

static void test_impact(void)
{
	char *names[] = { "a.py", "b.py", "c.py", "d.py" };
	struct impact_hit h[4] = {
		{ .imp = 1.0, .depth = 1 },			/* imports it, never uses the symbol */
		{ .ref = 0.5, .refs = 2 },			/* references the symbol */
		{ .cpl = 0.5, .co_changes = 3 },		/* changes with it */
		{ .ref = 0.5, .refs = 2 },			/* the same as b.py */
	};
	struct impact_rank r[4];
	double s;

	s = impact_score(&h[0], REFS_M_ALL);
	ok(s > 0.899 && s < 0.901, "combined: 0.9 x import");
	s = impact_score(&(struct impact_hit){ .imp = 1, .ref = 1 }, REFS_M_ALL);
	ok(s > 0.979 && s < 0.981, "combined: 1 - 0.1 x 0.2");
	ok(impact_score(&h[2], REFS_M_COUPLING) == 0.5, "coupling alone: its value");
	ok(impact_score(&h[2], REFS_M_SEMANTIC) == 0, "semantic alone: its value");
	for (int i = 3; i >= 0; i--) {
		r[3 - i].v = i;
		r[3 - i].s = impact_score(&h[i], REFS_M_ALL);
	}
	/* a file: by score, then path */
	impact_order(r, 4, h, names, 0);
	ok(r[0].v == 0 && r[1].v == 1 && r[2].v == 3 && r[3].v == 2, "file: by score, ties by path");
	/* a symbol: its referencing files first, though the importer scores more */
	impact_order(r, 4, h, names, 1);
	ok(r[0].v == 1 && r[1].v == 3 && r[2].v == 0 && r[3].v == 2, "symbol: referencing files first");
}

static void test_names(void)
{
	char *scope, *name;

	refs_split_qualified("Session.get", &scope, &name);
	is_str(scope, "Session", "split: scope");
	is_str(name, "get", "split: name");
	free(scope), free(name);
	refs_split_qualified("ns::Parser::parse", &scope, &name);
	is_str(scope, "ns.Parser", "split: C++ scope, dotted");
	is_str(name, "parse", "split: C++ name");
	free(scope), free(name);
	refs_split_qualified("list.h", &scope, &name);
	is_str(scope, NULL, "split: a file has no scope");
	is_str(name, "list.h", "split: a file is its name");
	free(scope), free(name);
	ok(refs_qualifier_matches("api", NULL, "src/requests/api.py"), "qualifier: module of a path");
	ok(refs_qualifier_matches("sessions.Session", "Session", "src/requests/sessions.py"),
	   "qualifier: module and class");
	ok(!refs_qualifier_matches("api", NULL, "src/requests/xapi.py"), "qualifier: not a suffix of a word");
	is_int((long)(refs_fuzzy_score("prs", "parse") > 0), 1, "fuzzy: a subsequence scores");
	ok(refs_fuzzy_score("xyz", "parse") == 0, "fuzzy: not a subsequence: 0");
	ok(refs_fuzzy_score("par", "parse") > refs_fuzzy_score("pse", "parse"), "fuzzy: contiguous beats scattered");
}

int main(int argc, char **argv)
{
	util_init(argv[0]);
	printf("1..36\n");
	test_graph();
	test_impact();
	test_names();
	return failures ? 1 : 0;
}
