#!/usr/bin/env bash
# deploy.sh: build a release tarball and roll it out to the given hosts.
#
# usage: deploy.sh [-n] <version> <host>...

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/log.sh"
source ./lib/log.sh

readonly RELEASES=/srv/app/releases
DRY_RUN=0

usage() {
	echo "usage: deploy.sh [-n] <version> <host>..." >&2
	exit 2
}

# Build the tarball for $1 into dist/.
build() {
	local version=$1
	log "building $version"
	mkdir -p dist
	git archive --format=tar.gz --prefix="app-$version/" "v$version" >"dist/app-$version.tar.gz"
}

function upload {
	local host=$1 tarball=$2
	if [ "$DRY_RUN" = 1 ]; then
		log "would copy $tarball to $host"
		return 0
	fi
	scp -q "$tarball" "$host:$RELEASES/"
}

# Switch the "current" symlink, keeping the last five releases.
activate() {
	local host=$1 version=$2
	ssh "$host" "ln -sfn $RELEASES/app-$version $RELEASES/current" || die "cannot activate on $host"
	ssh "$host" "ls -1dt $RELEASES/app-* | tail -n +6 | xargs -r rm -rf"
}

main() {
	while getopts n opt; do
		case $opt in
		n) DRY_RUN=1 ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# -ge 2 ] || usage

	version=$1
	shift
	build "$version"
	for host in "$@"; do
		upload "$host" "dist/app-$version.tar.gz"
		activate "$host" "$version"
	done
	log "deployed $version to $# host(s)"
}

main "$@"
