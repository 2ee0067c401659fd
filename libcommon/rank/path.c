/*
 * rank/path.c: the path signal: traceback frames of the query that name a
 * file, file names the query gives, and query terms that are a file's stem
 * or part of its path.
 */
#include "core/common.h"
#include "rank/signal.h"

#include <ctype.h>

/* Files named by the query: traceback frames, file names, and terms that are a file's stem. */
void rank_signal_path(struct rank_query *rq)
{
	/* every file, from the server's memory or the table, in path order */
	sqlite3_stmt *files = rq->meta ? NULL : rank_stmt(rq->r, "SELECT f.path FROM files f");
	sqlite3_stmt *first = rank_stmt(rq->r, "SELECT " CHUNK_COLS " FROM chunks c "
					"JOIN files f ON f.blob_id = c.blob_id JOIN blobs b ON b.id = c.blob_id "
					"WHERE f.path = ?1 ORDER BY c.start_line");
	size_t i, fi = 0;
	int step = SQLITE_DONE;

	while (rq->meta ? fi < rq->meta->head->nfiles : (step = sqlite3_step(files)) == SQLITE_ROW) {
		const char *path = rq->meta ? rank_meta_str(rq->meta, rq->meta->files[fi]) : rank_col(files, 0);
		const char *base = strrchr(path, '/');
		double s = 0;
		char stem[256];
		size_t sl;

		fi++;
		base = base ? base + 1 : path;
		sl = strcspn(base, ".");
		if (sl >= sizeof(stem))
			continue;
		for (i = 0; i < sl; i++)
			stem[i] = (char)tolower((unsigned char)base[i]);
		stem[sl] = '\0';
		if (rank_frame_names(rq, path) || rank_mentions_name(rq, path))
			s = 1.0;
		for (i = 0; i < rq->terms_nr && s < 1.0; i++) {
			if (sl >= 3 && !strcmp(rq->terms[i].text, stem))
				s = s < 0.8 ? 0.8 : s;
			else if (strlen(rq->terms[i].text) >= 4 && strstr(path, rq->terms[i].text))
				s = s < 0.3 ? 0.3 : s;
		}
		if (s <= 0)
			continue;
		/* give the signal to the file's chunks already found, or its first chunk */
		{
			int any = 0;
			for (i = 0; i < rq->cands_nr; i++)
				if (!strcmp(rq->cands[i].path, path)) {
					rq->cands[i].sig[SIG_PATH] = s;
					any = 1;
				}
			if (!any && s >= 0.8) {
				int fs;

				sqlite3_bind_text(first, 1, path, -1, SQLITE_STATIC);
				if ((fs = sqlite3_step(first)) == SQLITE_ROW) {
					struct rank_cand *c = rank_add_cand(rq, first, 0);
					if (c)
						c->sig[SIG_PATH] = s;
				} else if (fs != SQLITE_DONE) {	/* a damaged index: not a file left out */
					die("index: %s", sqlite3_errmsg(rq->db));
				}
				sqlite3_reset(first);
			}
		}
	}
	/* a damaged index: not a path signal of the files read before it */
	if (step != SQLITE_DONE)
		die("index: %s", sqlite3_errmsg(rq->db));
	/* every file read: their count, which a calibration may weigh (rank_index_files) */
	rq->index_files = (long long)fi;
	if (files)
		rank_stmt_done(rq->r, files);
	rank_stmt_done(rq->r, first);
}

/* Does the path long end with the path end, whole or after a '/'? */
static int ends_at_slash(const char *lng, const char *end)
{
	size_t ll = strlen(lng), el = strlen(end);

	return ll >= el && !strcmp(lng + ll - el, end) && (ll == el || lng[ll - el - 1] == '/');
}

/*
 * A file name of the query ("run_trace.py", "pkg/mod.py") is the end of the
 * path, after a '/', or the path the end of it ("/home/u/proj/pkg/mod.py").
 */
int rank_path_named(const char *mention, const char *path)
{
	return ends_at_slash(path, mention) || ends_at_slash(mention, path);
}

/* Does a file name of the query name path?  The mentions are in file name order. */
int rank_mentions_name(const struct rank_query *rq, const char *path)
{
	const char *base = rank_file_name(path);
	size_t lo = 0, hi = rq->mentions_nr;

	while (lo < hi) {	/* the first mention whose file name is not below base's */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(rank_file_name(rq->mentions[mid]), base) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < rq->mentions_nr; lo++) {
		if (strcmp(rank_file_name(rq->mentions[lo]), base))
			break;
		if (rank_path_named(rq->mentions[lo], path))
			return 1;
	}
	return 0;
}

/* A traceback frame's path ("/x/y/src/pkg/mod.py") ends with the file's, at a '/'. */
int rank_frame_names(const struct rank_query *rq, const char *path)
{
	for (size_t i = 0; i < rq->frames_nr; i++)
		if (ends_at_slash(rq->frames[i], path))
			return 1;
	return 0;
}
