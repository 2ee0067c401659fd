#!/bin/sh
# t1210-fleet-parallel: ci fleet on GNU parallel, for real: a manifest of generated
# repositories indexed with several job slots; the shards equal single-machine
# builds (index_dump and the same queries); a second run re-indexes only the
# repository whose revision changed; a repository that cannot be indexed is
# retried, reported (a fleet_job record, exit 3) and does not stop the others;
# and --sshlogin to this machine through an sshd the test starts (on loopback, a
# port of its own, keys made here), when there is an sshd to start.
#
# GNU parallel is a Debian package that scripts/setup installs: without it this
# test fails (it does not skip), as CI on a fresh machine must notice.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

test_expect_success 'GNU parallel is installed (Debian: parallel; scripts/setup installs it)' '
	parallel --version | head -1 | grep -q "GNU parallel"
'

test_expect_success 'setup: four generated repositories and their manifest' '
	make_fleet_repos repos 4 &&
	test_line_count = 4 repos/manifest.tsv
'

test_expect_success 'ci fleet builds one shard a repository, three job slots' '
	ci fleet --engine parallel --jobs 3 --out shards repos/manifest.tsv >jobs 2>err &&
	jq -r "\"\\(.repo) \\(.status) \\(.attempts) \\(.engine)\"" jobs >actual &&
	for r in r01 r02 r03 r04; do echo "$r built 1 parallel"; done >expect &&
	test_cmp expect actual &&
	ls shards/*.db | sed "s,.*/,," >actual &&
	for r in r01 r02 r03 r04; do echo "$r.db"; done >expect &&
	test_cmp expect actual &&
	test_line_count = 4 shards/.fleet/state.tsv &&
	fleet_no_temporaries shards
'

test_expect_success 'the shards equal single-machine builds of the same commits' '
	fleet_check_shards shards repos r01 r02 r03 r04
'

test_expect_success 'one query over the shard set names each repository' '
	ci-grep --shards shards shared_marker >out &&
	jq -r "select(._type == \"match\") | .repo" out | uniq >actual &&
	for r in r01 r02 r03 r04; do echo $r; done >expect &&
	test_cmp expect actual
'

test_expect_success 'a second run with no change re-indexes nothing' '
	cp shards/r01.db r01.before &&
	ci fleet --engine parallel --jobs 3 --out shards repos/manifest.tsv >jobs 2>err &&
	jq -r .status jobs | sort | uniq -c | sed "s/^ *//" >actual &&
	echo "4 unchanged" >expect &&
	test_cmp expect actual &&
	cmp r01.before shards/r01.db
'

test_expect_success 'a new commit in one repository: only it is re-indexed' '
	(cd repos/r03 && printf "int added_later(void) { return 3; }\n" >src/late.c &&
	 git add src/late.c && git commit -q -m "r03: later") &&
	ci fleet --engine parallel --jobs 3 --out shards repos/manifest.tsv >jobs 2>err &&
	jq -r "\"\\(.repo) \\(.status)\"" jobs >actual &&
	printf "r01 unchanged\nr02 unchanged\nr03 built\nr04 unchanged\n" >expect &&
	test_cmp expect actual &&
	cmp r01.before shards/r01.db &&
	test "$(awk -F "\t" "\$1 == \"r03\" { print \$2 }" shards/.fleet/state.tsv)" = "$(git -C repos/r03 rev-parse HEAD)" &&
	ci-refs --shards shards defs added_later | jq -r "select(._type != \"fleet\") | .repo" >actual &&
	echo r03 >expect &&
	test_cmp expect actual &&
	fleet_check_shards shards repos r03 &&
	fleet_no_temporaries shards
'

test_expect_success 'a repository that cannot be indexed is retried, reported, and the others still built' '
	sed "s,	,	repos/," repos/manifest.tsv >bad.tsv &&
	printf "r06\t%s\tHEAD\nr07\t%s\tno-such-branch\n" "$PWD/repos/r04" "$PWD/repos/r04" >>bad.tsv &&
	# r06 resolves (the commit of r04) but its clone is made to fail: its
	# checkout directory is taken by a file (r06 is r04 under another name)
	mkdir -p shards/trees &&
	: >"shards/trees/r06@$(git -C repos/r04 rev-parse HEAD)" &&
	test_status 3 ci fleet --engine parallel --jobs 2 --retries 1 --out shards bad.tsv >jobs 2>err &&
	jq -r "\"\\(.repo) \\(.status) \\(.attempts)\"" jobs >actual &&
	printf "r01 unchanged 0\nr02 unchanged 0\nr03 unchanged 0\nr04 unchanged 0\nr06 failed 2\nr07 failed 0\n" >expect &&
	test_cmp expect actual &&
	jq -r "select(.status == \"failed\") | .message" jobs >msgs &&
	test_grep "r06.log" msgs &&
	test_grep "cannot resolve revision .no-such-branch." msgs &&
	test_grep "r06: " err &&
	test_grep "attempt 2 of 2" err &&
	test ! -e shards/r06.db &&
	rm -f "shards/trees/r06@$(git -C repos/r04 rev-parse HEAD)"
'

test_expect_success 'bad manifests and options: a message and exit 2 or 3' '
	printf "bad name\tx\n" >m1.tsv &&
	test_status 3 ci fleet --out s1 m1.tsv 2>err &&
	test_grep "m1.tsv:1: bad repository name" err &&
	printf "a\trepos/r01\na\trepos/r02\n" >m2.tsv &&
	test_status 3 ci fleet --out s1 m2.tsv 2>err &&
	test_grep "repository .a. is named twice" err &&
	printf "{\"name\":1}\n" >m3.tsv &&
	test_status 3 ci fleet --out s1 m3.tsv 2>err &&
	test_grep "m3.tsv:1: expected" err &&
	test_status 2 ci fleet --engine nope m2.tsv 2>err &&
	test_grep "engine: expected parallel, slurm or local" err &&
	test_status 2 ci fleet 2>err &&
	test_grep "expected one manifest" err &&
	test_status 3 ci fleet missing.tsv 2>err &&
	test_grep "cannot read manifest" err &&
	ci fleet -h >out && test_grep "^usage: ci-fleet" out
'

test_expect_success 'an NDJSON manifest builds the same shards' '
	head -2 repos/manifest.tsv | jq -R -c "split(\"\t\") | {name: .[0], url: (\"repos/\" + .[1]), rev: .[2]}" >m.ndjson &&
	ci fleet --engine parallel --jobs 2 --out nd m.ndjson >jobs &&
	jq -r .status jobs | sort -u >actual &&
	echo built >expect &&
	test_cmp expect actual &&
	for r in r01 r02; do
		index_dump --no-mtime shards/$r.db >a && index_dump --no-mtime nd/$r.db >b && test_cmp a b || return 1
	done
'

# --sshlogin: an sshd of the test's own (loopback, its own port, host and user
# keys made here), reached through $PARALLEL_SSH (ssh -F <config>).  sshd needs
# root (it changes user) and /run/sshd; where it cannot start, the reason is
# said in the test's output and the check fails rather than passing unseen.
ssh_dir=$TEST_TMP/ssh
if test "$(id -u)" = 0 && test -x /usr/sbin/sshd && command -v ssh >/dev/null 2>&1; then
	ssh_port=$((20000 + $$ % 20000))
	test_expect_success 'setup: an sshd on loopback for --sshlogin' '
		mkdir -p "$ssh_dir" /run/sshd &&
		ssh-keygen -q -t ed25519 -N "" -f "$ssh_dir/host_key" &&
		ssh-keygen -q -t ed25519 -N "" -f "$ssh_dir/id" &&
		cp "$ssh_dir/id.pub" "$ssh_dir/authorized_keys" &&
		cat >"$ssh_dir/sshd_config" <<-EOF &&
		Port $ssh_port
		ListenAddress 127.0.0.1
		HostKey $ssh_dir/host_key
		AuthorizedKeysFile $ssh_dir/authorized_keys
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		PermitRootLogin prohibit-password
		StrictModes no
		UsePAM no
		PidFile $ssh_dir/sshd.pid
		EOF
		cat >"$ssh_dir/ssh_config" <<-EOF &&
		Host fleethost
		  HostName 127.0.0.1
		  Port $ssh_port
		  User $(id -un)
		  IdentityFile $ssh_dir/id
		  IdentitiesOnly yes
		  StrictHostKeyChecking no
		  UserKnownHostsFile /dev/null
		  LogLevel ERROR
		  BatchMode yes
		EOF
		/usr/sbin/sshd -f "$ssh_dir/sshd_config" -E "$ssh_dir/sshd.log" &&
		i=0 && while ! ssh -F "$ssh_dir/ssh_config" fleethost true 2>/dev/null; do
			i=$((i + 1)) && test $i -lt 50 && sleep 0.1 || return 1
		done
	'
	test_expect_success '--sshlogin: every job runs through ssh, the shards are the same' '
		PARALLEL_SSH="ssh -F $ssh_dir/ssh_config" &&
		export PARALLEL_SSH &&
		before=$(grep -c "Accepted publickey" "$ssh_dir/sshd.log") &&
		head -3 repos/manifest.tsv >repos/three.tsv &&
		ci fleet --engine parallel --jobs 2 --sshlogin fleethost --out remote repos/three.tsv >jobs &&
		unset PARALLEL_SSH &&
		jq -r .status jobs | sort -u >actual &&
		echo built >expect &&
		test_cmp expect actual &&
		after=$(grep -c "Accepted publickey" "$ssh_dir/sshd.log") &&
		test $((after - before)) -ge 3 &&
		for r in r01 r02 r03; do
			index_dump --no-mtime shards/$r.db >a && index_dump --no-mtime remote/$r.db >b && test_cmp a b || return 1
		done
	'
	test -f "$ssh_dir/sshd.pid" && kill "$(cat "$ssh_dir/sshd.pid")" 2>/dev/null
else
	test_expect_success '--sshlogin needs an sshd to start: root and /usr/sbin/sshd (Debian: openssh-server)' '
		echo "cannot start sshd here: uid $(id -u), sshd: $(ls /usr/sbin/sshd 2>&1)" >&7 &&
		false
	'
fi

test_done
