#!/bin/sh
# t1220-fleet-slurm: ci fleet on a Slurm job array, for real: the test starts a
# one-node Slurm of its own (munged with a key made here, slurmctld and slurmd
# with a generated slurm.conf in the test's directory, on ports of their own,
# SLURM_CONF pointing at it), indexes a manifest of generated repositories with
# `sbatch --array`, checks that the shards equal single-machine builds, that a
# second run submits nothing and that a failing repository is retried and
# reported; then stops the daemons.
#
# The daemons run as root (slurmd starts jobs as their users; SlurmUser=root),
# with proctrack/linuxproc and task/none (no cgroups, which a container may not
# delegate).  The Debian packages are slurm-wlm and munge (scripts/setup installs
# them); without them, or without root, the test fails saying so: it does not
# skip, so CI on a fresh machine notices.

. "$(dirname "$0")/lib.sh"
. "$CI_SRC_DIR/tests/index-lib.sh"
. "$CI_SRC_DIR/tests/fleet-lib.sh"

slurm=$TEST_TMP/slurm
port=$((21000 + $$ % 20000))
host=$(hostname -s 2>/dev/null || hostname)
SLURM_CONF=$slurm/slurm.conf
export SLURM_CONF

# stop_slurm: stop the daemons this test started (by their pid files)
stop_slurm() {
	for p in slurmd slurmctld munged; do
		test -f "$slurm/$p.pid" && kill "$(cat "$slurm/$p.pid")" 2>/dev/null
	done
	return 0
}

test_expect_success 'Slurm and munge are installed, and this is root (Debian: slurm-wlm, munge)' '
	for p in munged slurmctld slurmd; do
		test -x /usr/sbin/$p || { echo "no /usr/sbin/$p: install slurm-wlm and munge" >&7; return 1; }
	done &&
	for p in sbatch squeue sinfo; do
		command -v $p >/dev/null || { echo "no $p: install slurm-wlm" >&7; return 1; }
	done &&
	{ test "$(id -u)" = 0 || { echo "slurmd and munged must run as root here, uid is $(id -u)" >&7; false; }; }
'

test_expect_success 'setup: munged, slurmctld and slurmd of the test own' '
	mkdir -p "$slurm/state" "$slurm/spool" "$slurm/log" &&
	chmod 700 "$slurm" &&
	dd if=/dev/urandom of="$slurm/munge.key" bs=1024 count=1 2>/dev/null &&
	chmod 400 "$slurm/munge.key" &&
	/usr/sbin/munged --key-file="$slurm/munge.key" --socket="$slurm/munge.sock" \
		--pid-file="$slurm/munged.pid" --log-file="$slurm/munged.log" --seed-file="$slurm/munge.seed" -f &&
	cat >"$SLURM_CONF" <<-EOF &&
	ClusterName=cifleet
	SlurmctldHost=$host(127.0.0.1)
	SlurmctldPort=$port
	SlurmdPort=$((port + 1))
	AuthType=auth/munge
	AuthInfo=socket=$slurm/munge.sock
	CredType=cred/munge
	SlurmUser=root
	SlurmdUser=root
	StateSaveLocation=$slurm/state
	SlurmdSpoolDir=$slurm/spool
	SlurmctldPidFile=$slurm/slurmctld.pid
	SlurmdPidFile=$slurm/slurmd.pid
	SlurmctldLogFile=$slurm/log/slurmctld.log
	SlurmdLogFile=$slurm/log/slurmd.log
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	SchedulerType=sched/builtin
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core
	MpiDefault=none
	ReturnToService=2
	MinJobAge=300
	KillWait=5
	Waittime=0
	NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
	PartitionName=fleet Nodes=$host Default=YES MaxTime=INFINITE State=UP
	EOF
	/usr/sbin/slurmctld -f "$SLURM_CONF" &&
	/usr/sbin/slurmd -f "$SLURM_CONF" &&
	i=0 && while ! sinfo -h -o "%t" 2>/dev/null | grep -q idle; do
		i=$((i + 1))
		test $i -lt 100 || {
			echo "the node never became idle:" >&7
			sinfo >&7 2>&1; tail -5 "$slurm/log/slurmctld.log" "$slurm/log/slurmd.log" >&7 2>&1
			return 1
		}
		sleep 0.1
	done
'

test_expect_success 'setup: three generated repositories' '
	make_fleet_repos repos 3
'

test_expect_success 'ci fleet --engine slurm: one array task a repository, all built' '
	# arrays of two tasks at most (Slurm limits their size): two arrays, both waited for
	CI_FLEET_ARRAY_MAX=2 ci fleet --engine slurm --jobs 2 --partition fleet --out shards repos/manifest.tsv >jobs 2>err &&
	jq -r "\"\\(.repo) \\(.status) \\(.attempts) \\(.engine)\"" jobs >actual &&
	printf "r01 built 1 slurm\nr02 built 1 slurm\nr03 built 1 slurm\n" >expect &&
	test_cmp expect actual &&
	ls shards/.fleet/logs/ | sed -n "s/^slurm-[0-9]*_\([0-9]*\)\.out\$/\1/p" | sort >actual &&
	printf "1\n1\n2\n" >expect &&
	test_cmp expect actual &&
	fleet_no_temporaries shards
'

test_expect_success 'the array ran on Slurm: the controller knows it, completed' '
	id=$(ls shards/.fleet/logs/ | sed -n "s/^slurm-\([0-9]*\)_1\.out\$/\1/p" | head -1) &&
	test -n "$id" &&
	scontrol show job "$id" >job 2>&1 &&
	test_grep "JobName=ci-fleet" job &&
	test_grep "JobState=COMPLETED" job
'

test_expect_success 'the shards equal single-machine builds of the same commits' '
	fleet_check_shards shards repos r01 r02 r03
'

test_expect_success 'a second run submits nothing; a changed repository alone is rebuilt' '
	ci fleet --engine slurm --out shards repos/manifest.tsv >jobs &&
	jq -r .status jobs | sort -u >actual &&
	echo unchanged >expect &&
	test_cmp expect actual &&
	(cd repos/r02 && printf "def later():\n    return 2\n" >py/later.py && git add py && git commit -q -m later) &&
	ci fleet --engine slurm --out shards repos/manifest.tsv >jobs &&
	jq -r "\"\\(.repo) \\(.status)\"" jobs >actual &&
	printf "r01 unchanged\nr02 built\nr03 unchanged\n" >expect &&
	test_cmp expect actual &&
	fleet_check_shards shards repos r02
'

test_expect_success 'a failing task is retried on Slurm and reported' '
	commit=$(git -C repos/r03 rev-parse HEAD) &&
	printf "r09\t%s\tHEAD\n" "$PWD/repos/r03" >bad.tsv &&
	mkdir -p shards/trees && : >"shards/trees/r09@$commit" &&
	test_status 3 ci fleet --engine slurm --retries 1 --out shards bad.tsv >jobs 2>err &&
	jq -r "\"\\(.repo) \\(.status) \\(.attempts)\"" jobs >actual &&
	echo "r09 failed 2" >expect &&
	test_cmp expect actual &&
	test_grep "r09: ci-index build failed" err &&
	rm -f "shards/trees/r09@$commit"
'

test_expect_success 'teardown: the daemons stop' '
	stop_slurm &&
	i=0 && while kill -0 "$(cat "$slurm/slurmctld.pid" 2>/dev/null)" 2>/dev/null; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || return 1
	done
'
stop_slurm

test_done
