# log.sh: logging helpers shared by the deploy scripts.

log() {
	printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2
}

die() {
	log "fatal: $*"
	exit 1
}
