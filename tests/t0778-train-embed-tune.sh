#!/bin/sh
# t0778-train-embed-tune: scripts/train-embed --tune takes the training units
# whose SHA-1 is 1 mod 10 out of training and reports its figures on them (the
# validation split untouched); --decay linear lowers the learning rate to
# about 0 at the last step; a split with no pairs is an error that names it.
# A tiny synthetic data set (a few seconds).

. "$(dirname "$0")/lib.sh"

train=$CI_SRC_DIR/scripts/train-embed
unset CI_MODEL

need_torch 'train-embed --tune'

test_expect_success 'setup: pairs of twelve units, one of them validation' '
	mkdir data &&
	/usr/bin/python3 - >counts <<-\EOF &&
	import hashlib, json
	# the units by their SHA-1 mod 10, as embed-pairs (0: validation) and --tune (1) cut them
	kind = lambda u: int(hashlib.sha1(u.encode()).hexdigest()[:8], 16) % 10
	n = [0, 0, 0]
	with open("data/pairs.jsonl", "w") as out:
	    for i in range(120):
	        verb, obj, what = ("parse config sections|send request retry|multiply matrix rows|"
	                           "free buffer pool|sort list order|open socket port").split("|")[i % 6].split()
	        unit = "u%d" % (i % 12)
	        n[min(kind(unit), 2)] += 1
	        out.write(json.dumps({"unit": unit, "split": "valid" if kind(unit) == 0 else "train",
	                              "lang": "c", "query": "%s the %s %s" % (verb, obj, what),
	                              "name": "%s_%s_%d" % (verb, obj, i), "signature": "(%s)" % what,
	                              "text": "%s %s %s code%d" % (obj, what, verb, i % 5)}) + "\n")
	print(*n)
	EOF
	read valid tune other <counts &&
	test "$valid" -gt 0 && test "$tune" -gt 0 && test "$other" -gt 0
'

test_expect_success 'without --tune: trained on the training units, figures of the validation ones' '
	read valid tune other <counts &&
	/usr/bin/python3 "$train" --data data --out plain --dim 8 --epochs 1 --batch 8 --block 4 \
		--min-df 1 2>log &&
	test_grep "train-embed: $((tune + other)) train pairs (0 of commits), $valid validation pairs" log &&
	head -c 600 plain/ci-code.safetensors | tr -d "\\000" >head &&
	test_grep "\"figures_of\":\"valid\"" head
'

test_expect_success '--tune: the 1 mod 10 units out of training, the figures theirs' '
	read valid tune other <counts &&
	/usr/bin/python3 "$train" --tune --data data --out tuned --dim 8 --epochs 1 --batch 8 --block 4 \
		--min-df 1 2>log &&
	test_grep "train-embed: $other train pairs (0 of commits), $tune validation pairs" log &&
	head -c 600 tuned/ci-code.safetensors | tr -d "\\000" >head &&
	test_grep "\"figures_of\":\"tune\"" head &&
	/usr/bin/python3 "$train" --eval-only --tune --data data --out tuned 2>log &&
	test_grep "tuned: valid MRR [01]\\.[0-9]" log
'

test_expect_success 'no pairs to measure on: a message naming the split, non-zero, no model' '
	mkdir none &&
	grep -v "\"split\": \"valid\"" data/pairs.jsonl >none/pairs.jsonl &&
	test_must_fail /usr/bin/python3 "$train" --data none --out nomodel --dim 8 --epochs 1 --min-df 1 2>err &&
	test_grep "train-embed: none: no validation pairs to measure on" err &&
	/usr/bin/python3 - <<-\EOF &&
	import hashlib, json
	with open("none/pairs.jsonl", "w") as out:
	    for line in open("data/pairs.jsonl"):
	        u = json.loads(line)["unit"]
	        if int(hashlib.sha1(u.encode()).hexdigest()[:8], 16) % 10 != 1:
	            out.write(line)
	EOF
	test_must_fail /usr/bin/python3 "$train" --tune --data none --out nomodel --dim 8 --epochs 1 --min-df 1 2>err &&
	test_grep "no tuning (training units whose SHA-1 is 1 mod 10) pairs" err &&
	test_must_fail /usr/bin/python3 "$train" --eval-only --tune --data none --out tuned 2>err &&
	test_grep "no tuning" err &&
	! test -e nomodel
'

test_expect_success '--decay linear: the rate falls to about 0 by the last epoch; none keeps it' '
	/usr/bin/python3 "$train" --data data --out decay --dim 8 --epochs 3 --batch 8 --block 4 \
		--min-df 1 --lr 0.05 --decay linear 2>log &&
	sed -n "s/.*epoch \\([0-9]\\) loss.* lr \\([^ ]*\\) .*/\\1 \\2/p" log >lr &&
	test_line_count = 3 lr &&
	awk "NR == 1 && \$2 < 0.02 { exit 1 } NR == 3 && \$2 > 0.01 { exit 1 } NR > 1 && \$2 >= prev { exit 1 } { prev = \$2 }" lr &&
	head -c 600 decay/ci-code.safetensors | tr -d "\\000" >head &&
	test_grep "\"decay\":\"linear\"" head &&
	/usr/bin/python3 "$train" --data data --out flat --dim 8 --epochs 2 --batch 8 --block 4 \
		--min-df 1 --lr 0.05 2>log &&
	sed -n "s/.*epoch \\([0-9]\\) loss.* lr \\([^ ]*\\) .*/\\2/p" log >lr &&
	printf "0.05\n0.05\n" >expect &&
	test_cmp expect lr &&
	{ /usr/bin/python3 "$train" --data data --out bad --decay cosine 2>err; test $? -ne 0; } &&
	test_grep "invalid choice" err
'

test_done
