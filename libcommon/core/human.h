/*
 * human.h: records for people.  On a terminal, ci-rank, ci-refs and ci-couple
 * write what they would write as NDJSON through a formatter instead: grouped
 * by file under a heading, as rg's heading mode does, and git log's one line a
 * commit, in colour unless NO_COLOR is set.  NDJSON stays the format of pipes
 * and of --json (or CI_FORMAT=json).
 */
#ifndef CI_HUMAN_H
#define CI_HUMAN_H

#include <stdio.h>
#include <sys/types.h>

/*
 * Whether records should be written for people: standard output is a terminal,
 * json (the command's --json) is 0, and CI_FORMAT is not "json".
 */
int human_wanted(int json);

/*
 * $CI_FORMAT: 1 for "json", 0 for "text", -1 unset or empty; any other value
 * exits 2 naming the variable (env_choice).
 */
int human_env_format(void);

/*
 * Start the formatter: a child process reading this process's records from a
 * pipe that becomes its standard output, writing to the terminal.  Returns the
 * child's pid, or 0 when it could not be started (records are then written as
 * they are).
 */
pid_t human_start(void);

/*
 * Flush and close standard output and wait for the formatter started by
 * human_start (pid > 0): the text is on the terminal when the command exits.
 */
void human_finish(pid_t pid);

/* The formatter: NDJSON lines from in, text to out (color: ANSI colours). */
void human_format(FILE *in, FILE *out, int color);

#endif
