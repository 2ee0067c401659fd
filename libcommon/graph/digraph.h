/*
 * digraph.h: a directed graph of named nodes, and what ci-refs asks of it:
 * strongly connected components (import cycles), a shortest cycle through a
 * node, the reverse distance from a node (who imports it, and how far).
 *
 * Nothing here reads the index: refs.c loads the import graph into a digraph,
 * so the algorithms are unit-tested on small graphs built in memory
 * (tests/unit-refs.c).  Node numbers are indices into the sorted names.
 */
#ifndef CI_GRAPH_DIGRAPH_H
#define CI_GRAPH_DIGRAPH_H

#include <stddef.h>

struct digraph {
	char **names;		/* node names (file paths), sorted, owned */
	size_t n;		/* nodes */
	int **adj;		/* per node: successors, sorted, deduplicated after digraph_finish() */
	size_t *adj_nr;		/* per node: how many */
	size_t *adj_alloc;	/* per node: allocated */
	size_t names_alloc;	/* allocated names */
};

/* Add a node; names must come in strictly increasing strcmp order.  The
 * digraph is zeroed to start (memset or = { 0 }). */
void digraph_add_node(struct digraph *g, const char *name);

/* Allocate the adjacency lists once every node is added. */
void digraph_nodes_done(struct digraph *g);

/* Add the edge x -> y (duplicates are removed by digraph_finish()). */
void digraph_add_edge(struct digraph *g, int x, int y);

/* Sort and deduplicate every node's successors. */
void digraph_finish(struct digraph *g);

/* The node named name, or -1.  Cannot fail. */
int digraph_node(const struct digraph *g, const char *name);

void digraph_release(struct digraph *g);

/*
 * Strongly connected components (Tarjan's, iterative: import chains can be
 * long).  comp[v] gets v's component number, 0-based; returns the number of
 * components.  comp has room for g->n ints.
 */
size_t digraph_scc(const struct digraph *g, int *comp);

/*
 * A shortest cycle through start inside its component comp[start] (BFS), as
 * the nodes from start back to start (the last is start again) in path, which
 * has room for g->n + 1 ints; returns its length, 0 when there is none.
 */
size_t digraph_cycle_path(const struct digraph *g, const int *comp, int start, int *path);

/*
 * The import distance to start, following edges backwards (who imports
 * start, who imports them...), breadth first to max_depth: dist[v] is the
 * number of edges, -1 when v does not reach start within max_depth.  dist has
 * room for g->n ints.
 */
void digraph_reverse_distance(const struct digraph *g, int start, long max_depth, int *dist);

#endif
