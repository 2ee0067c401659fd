/*
 * libcommon/index/server.h: ci-index serve, the index's resident server.
 *
 * An update looks at every file of the tree to find the few that changed;
 * the server does the start once, watches every directory of the index with
 * inotify, and forks a worker per update (fork-server.h), which looks only in
 * the directories where something happened since the last update that
 * succeeded.  It also answers ci-grep's questions ("dirty": where to look;
 * "cand <query>": the candidate files of a trigram query, from a map of the
 * index's files kept in memory).  Anything it cannot vouch for counts as
 * changed.
 *
 * A struct ix_server is the server's state; fork_server_ops' callbacks (which
 * carry no payload) call the functions below with it.  In a worker (the same
 * memory, forked) the update reads its hint through the run's srv (run.h).
 */
#ifndef CI_INDEX_SERVER_H
#define CI_INDEX_SERVER_H

#include <sys/types.h>

struct buf;
struct ix_server;

/* A server whose workers run the command line through run (ci-index's main).  Cannot fail. */
struct ix_server *ix_server_new(int (*run)(int argc, char **argv));
void ix_server_free(struct ix_server *s);

/* fork_server_ops: preload (the watch, the first update), refresh (before
 * each fork), watch_fd and on_watch (inotify), forked, ended, query. */
void ix_server_preload(struct ix_server *s, const char *path);
void ix_server_refresh(struct ix_server *s, const char *path);
int ix_server_watch_fd(struct ix_server *s);
void ix_server_events(struct ix_server *s);
void ix_server_forked(struct ix_server *s, pid_t pid);
void ix_server_ended(struct ix_server *s, pid_t pid, int status);
void ix_server_query(struct ix_server *s, const char *q, struct buf *out);

/* In a worker, first: it is one (its report pipe's read end closed). */
void ix_server_worker_init(struct ix_server *s);
/* In a worker (s may be NULL: not one): the server watches the tree at root
 * of the index at path. */
int ix_server_hint_applies(struct ix_server *s, const char *path, const char *root);
/* ... and its watch can say which directories are clean (ix_server_clean). */
int ix_server_hint(struct ix_server *s, const char *path, const char *root);
/* walk_known_hint.clean (ctx: the server): nothing happened in dir since the last update. */
int ix_server_clean(const char *dir, void *ctx);
/* Some directory could not be watched. */
int ix_server_broken(const struct ix_server *s);
/* In a worker, its update of the server's index in (stamped so): tell the server. */
void ix_server_report_done(struct ix_server *s, const char *stamp);

#endif
