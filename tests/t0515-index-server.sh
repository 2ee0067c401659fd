#!/bin/sh
# t0515-index-server: every test of t0510-index-update with each update run by
# the repository's `ci-index serve` (started by the first update and waited
# for: CI_INDEX_SERVER=always), which takes the files of a directory where
# inotify saw nothing as recorded; then what only the server does: the
# directories it vouches for, a worker killed mid-update, --no-server, --stop.
CI_TEST_INDEX_SERVER=1
. "$(dirname "$0")/t0510-index-update.sh"
