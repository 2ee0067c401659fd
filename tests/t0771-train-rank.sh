#!/bin/sh
# t0771-train-rank: scripts/train-rank on generated feature dumps (the shape
# bench/eval/run.sh writes): with --vectors it writes both members of the
# model, each with a calibration chosen cross-fitted by repository and the
# figures of that choice; the same inputs give the same model; --keep adds a
# with_history member to a model and keeps the rest, --semantic a semantic
# member (semantic mode's, from dumps of that mode); --choose cv chooses by the
# training repositories; --report gives a model's calibration on a dump; ci-rank reads the model; a missing dump or a
# model without calibration is an error with a message.  The calibration is
# fitted on the training queries' out-of-fold logits (or, with --calibrate-on
# validation, on the validation queries); platt-margin maps the logit and the
# margin over the second file, and ci-rank reads that map; platt-margin-files
# also the logarithm of the index's files (index_files in the dumps, which
# ci-rank --features writes), when every dump says it; --recalibrate
# fits only the maps of a kept model again.  --chunks fits the
# chunk member on chunk dumps (a gold function by name), which ci-rank reads;
# --chunk-gold functions takes a class header for gold only where none of its
# file's functions is, --chunk-drop leaves features out.

. "$(dirname "$0")/lib.sh"

train=$CI_SRC_DIR/scripts/train-rank
if ! /usr/bin/python3 -c 'import sklearn, numpy' 2>/dev/null; then
	test_skip 'scripts/train-rank' 'no /usr/bin/python3 with scikit-learn (python3-sklearn)'
	test_done
fi

# dump <seed> <repos...>: 12 queries a repository, 6 files a query; the
# relevant file is the one with the highest signal, except in some queries
dump() {
	seed=$1; shift
	for r in "$@"; do echo "$r"; done | awk -v seed="$seed" 'BEGIN { srand(seed) }
	{
		for (q = 1; q <= 12; q++) {
			good = int(rand() * 6) + 1
			for (f = 1; f <= 6; f++) {
				kw = rand() * 0.6 + (f == good ? 0.3 + 0.3 * (q % 3) / 2 : 0)
				printf "{\"_type\":\"features\",\"path\":\"f%d.py\",\"rank\":%d,\"x\":{\"keyword\":%.4f,\"fused_rr\":%.4f,\"test\":%d},\"id\":\"%s-%d\",\"repo\":\"%s\",\"mode\":\"hybrid\",\"label\":%d}\n",
					f, f, kw, 1 / f, (f == 6), $1, q, $1, (f == good)
			}
		}
	}'
}

test_expect_success 'setup: training and validation dumps, without and with vectors' '
	dump 1 t/a t/b t/c >ntrain.jsonl &&
	dump 2 v/a v/b v/c >nval.jsonl &&
	dump 3 t/a t/b t/c >vtrain.jsonl &&
	dump 4 v/a v/b v/c >vval.jsonl &&
	test "$(wc -l <nval.jsonl)" -eq 216
'

test_expect_success '--vectors: both members, each calibrated, with the cross-fitted figures' '
	/usr/bin/python3 "$train" --c 1 --vectors vtrain.jsonl vval.jsonl -o m.json ntrain.jsonl nval.jsonl 2>log &&
	"$JQ" -e ".format == \"ci-rank-linear/1\" and (.features | length > 0) and
		(.calibration.method | test(\"^(platt|isotonic)$\")) and
		(.with_vectors.features | length > 0) and (.with_vectors.calibration.method | test(\"^(platt|isotonic)$\")) and
		(.trained.calibration.cross_fitted_ece | . >= 0 and . <= 1) and
		(.trained.with_vectors.calibration.cross_fitted_ece | . >= 0 and . <= 1) and
		(.trained.calibration.validation_queries == 36) and
		(.trained.calibration.cross_fitted_bins | map(.n) | add == 36)" m.json &&
	test_grep "cross-fitted by repository: ECE" log
'

test_expect_success 'the same inputs give the same model' '
	/usr/bin/python3 "$train" --c 1 --vectors vtrain.jsonl vval.jsonl ntrain.jsonl nval.jsonl >m2.json 2>/dev/null &&
	test_cmp m.json m2.json
'

test_expect_success '--report: the calibration of the model on a dump' '
	/usr/bin/python3 "$train" --report m.json nval.jsonl >r.json &&
	"$JQ" -e ".queries == 36 and (.ece | . >= 0 and . <= 1) and (.mean_confidence | . > 0 and . < 1) and
		(.bins | map(.n) | add == 36) and ([.verdicts[].n] | add == 36) and
		(.verdicts | keys == [\"high\", \"low\", \"medium\"]) and
		all(.verdicts[]; .n == 0 or (.accuracy >= 0 and .accuracy <= 1))" r.json &&
	# a constant map of 0.6996 is shown 0.7: every verdict high, as ci-rank says
	"$JQ" -c ".calibration = {\"method\": \"isotonic\", \"x\": [0], \"y\": [0.6996]}" m.json >m7.json &&
	/usr/bin/python3 "$train" --report m7.json nval.jsonl >r7.json &&
	"$JQ" -e ".verdicts.high.n == 36 and .verdicts.medium.n == 0 and .verdicts.low.n == 0" r7.json &&
	/usr/bin/python3 "$train" --report m.json --vectors-model vval.jsonl >rv.json &&
	"$JQ" -e ".queries == 36" rv.json
'

test_expect_success 'ci-rank reads the model and reports its confidence' '
	git init -q repo && printf "def total_price(items):\n    return sum(items)\n" >repo/shop.py &&
	(cd repo && git add . && git commit -q -m init && ci-index build &&
	 ci-rank --model ../m.json total price >../out) &&
	"$JQ" -e "select(._type == \"summary\") | .confidence >= 0 and .confidence <= 1" out
'

test_expect_success 'calibrated on the training queries out of fold, measured on validation' '
	"$JQ" -e ".trained.calibration | (.fitted_on | test(\"out-of-fold\")) and .queries == 36 and
		(.cross_fitted_ece_by_method | keys == [\"isotonic\", \"platt\", \"platt-margin\"]) and
		(.validation_ece | . >= 0 and . <= 1) and (.validation_bins | map(.n) | add == 36)" m.json &&
	test_grep "on the validation queries (held out): ECE" log &&
	/usr/bin/python3 "$train" --c 1 --calibrate-on validation ntrain.jsonl nval.jsonl -o mv.json 2>logv &&
	"$JQ" -e ".trained.calibration | .fitted_on == \"validation queries\" and .queries == 36 and
		(has(\"validation_ece\") | not)" mv.json &&
	test_grep "fitted on all the validation queries (in-sample)" logv
'

test_expect_success 'platt-margin: a map of the logit and the margin, which ci-rank reads' '
	/usr/bin/python3 "$train" --c 1 --calibration platt-margin ntrain.jsonl nval.jsonl -o mm.json 2>/dev/null &&
	"$JQ" -e ".calibration.method == \"platt\" and (.calibration.margin | type == \"number\") and
		(.calibration.a >= 0) and .trained.calibration.method == \"platt-margin\"" mm.json &&
	/usr/bin/python3 "$train" --report mm.json nval.jsonl >rm.json &&
	"$JQ" -e ".queries == 36 and (.ece | . >= 0 and . <= 1)" rm.json &&
	# logistic(0 z + 1 margin - 10): one file in the repository, so the
	# margin is the cap, 10, and the confidence 0.5
	"$JQ" -c ".calibration = {\"method\": \"platt\", \"a\": 0, \"b\": -10, \"margin\": 1}" m.json >m1.json &&
	(cd repo && ci-rank --model ../m1.json total price >../out1) &&
	"$JQ" -e "select(._type == \"summary\") | .confidence == 0.5" out1
'

test_expect_success 'platt-margin-files: and the index'"'"'s files, when the dumps say them; ci-rank reads it' '
	"$JQ" -c ".index_files = (if .repo | test(\"a$\") then 20 elif .repo | test(\"b$\") then 400 else 3000 end)" \
		ntrain.jsonl >ftrain.jsonl &&
	"$JQ" -c ".index_files = 250" nval.jsonl >fval.jsonl &&
	/usr/bin/python3 "$train" --c 1 ftrain.jsonl fval.jsonl -o mf.json 2>/dev/null &&
	"$JQ" -e ".trained.calibration.cross_fitted_ece_by_method | keys ==
		[\"isotonic\", \"platt\", \"platt-margin\", \"platt-margin-files\"]" mf.json &&
	/usr/bin/python3 "$train" --c 1 --calibration platt-margin-files ftrain.jsonl fval.jsonl -o mf2.json 2>/dev/null &&
	"$JQ" -e "(.calibration.files | type == \"number\") and .trained.calibration.method == \"platt-margin-files\"" mf2.json &&
	/usr/bin/python3 "$train" --report mf2.json fval.jsonl >rf.json &&
	"$JQ" -e ".queries == 36 and (.ece | . >= 0 and . <= 1)" rf.json &&
	# logistic(-ln(files)) = 1 / (1 + files): three files in the index, 0.25
	git init -q repo3 &&
	printf "def total_price(items):\n    return sum(items)\n" >repo3/shop.py &&
	printf "def ship(order):\n    return order\n" >repo3/ship.py &&
	printf "def pay(order):\n    return order\n" >repo3/pay.py &&
	"$JQ" -c ".calibration = {\"method\": \"platt\", \"a\": 0, \"b\": 0, \"margin\": 0, \"files\": -1}" m.json >mf1.json &&
	(cd repo3 && git add . && git commit -q -m init && ci-index build &&
	 ci-rank --model ../mf1.json total price >../outf &&
	 ci-rank --model ../mf1.json --features ../featf.jsonl total price >/dev/null) &&
	"$JQ" -e "select(._type == \"summary\") | .confidence == 0.25" outf &&
	"$JQ" -e ".index_files == 3" featf.jsonl
'

test_expect_success '... asked for (or reported) on dumps without index_files: says so' '
	test_must_fail /usr/bin/python3 "$train" --c 1 --calibration platt-margin-files ntrain.jsonl nval.jsonl \
		-o none.json 2>err &&
	test_grep "the dumps do not say the index.s files" err &&
	! test -e none.json &&
	test_must_fail /usr/bin/python3 "$train" --report mf2.json nval.jsonl >out 2>err &&
	test_grep "the map weighs the index.s files, which nval.jsonl does not say" err
'

test_expect_success '--recalibrate: the kept weights, each given member'"'"'s map fitted again' '
	/usr/bin/python3 "$train" --c 1 --calibration platt --vectors vtrain.jsonl vval.jsonl ntrain.jsonl nval.jsonl \
		-o mp.json 2>/dev/null &&
	/usr/bin/python3 "$train" --keep mp.json --recalibrate --calibration platt-margin --note again \
		--vectors vtrain.jsonl vval.jsonl ntrain.jsonl nval.jsonl -o mr.json 2>log &&
	"$JQ" -c "[.bias, .features, .with_vectors.bias, .with_vectors.features]" mp.json >a &&
	"$JQ" -c "[.bias, .features, .with_vectors.bias, .with_vectors.features]" mr.json >b &&
	test_cmp a b &&
	"$JQ" -e "(.calibration | has(\"margin\")) and (.with_vectors.calibration | has(\"margin\")) and
		.trained.calibration.recalibrated == \"again\" and .trained.with_vectors.calibration.recalibrated == \"again\" and
		.trained.calibration.method == \"platt-margin\"" mr.json &&
	"$JQ" -e "(.calibration | has(\"margin\") | not)" mp.json &&
	test_grep "no vectors: the kept weights: validation MRR" log &&
	test_status 2 /usr/bin/python3 "$train" --recalibrate ntrain.jsonl nval.jsonl 2>err &&
	test_grep "expected --keep" err &&
	test_status 1 /usr/bin/python3 "$train" --keep mp.json --recalibrate --history ntrain.jsonl nval.jsonl 2>err &&
	test_grep "has no with_history member to calibrate" err
'

# added <kept model> <new model> <member>: the new model is the kept one with
# that member added, fitted and calibrated on the 36 validation queries
added() {
	"$JQ" -c "del(.$3, .trained)" "$1" >a &&
	"$JQ" -c "del(.$3, .trained)" "$2" >b &&
	test_cmp a b &&
	"$JQ" -e "(.$3.features | length > 0) and
		(.$3.calibration.method | test(\"^(platt|isotonic)$\")) and
		(.trained.$3.validation_queries == 36) and
		.trained.with_vectors == $("$JQ" -c .trained.with_vectors "$1")" "$2"
}

test_expect_success '--keep with --history: the kept members as they were, with_history added' '
	dump 5 t/a t/b t/c >htrain.jsonl &&
	dump 6 v/a v/b v/c >hval.jsonl &&
	/usr/bin/python3 "$train" --keep m.json --history htrain.jsonl hval.jsonl -o mh.json 2>log &&
	added m.json mh.json with_history &&
	/usr/bin/python3 "$train" --report mh.json --member with_history hval.jsonl >rh.json &&
	"$JQ" -e ".queries == 36" rh.json &&
	test_status 2 /usr/bin/python3 "$train" --keep m.json --history htrain.jsonl hval.jsonl ntrain.jsonl 2>err &&
	test_grep "no positional dumps" err
'

test_expect_success '--keep with --semantic: the semantic member, from the dumps of semantic mode' '
	dump 7 t/a t/b t/c | sed "s/\"mode\":\"hybrid\"/\"mode\":\"semantic\"/" >strain.jsonl &&
	dump 8 v/a v/b v/c | sed "s/\"mode\":\"hybrid\"/\"mode\":\"semantic\"/" >sval.jsonl &&
	/usr/bin/python3 "$train" --keep m.json --semantic strain.jsonl sval.jsonl -o ms.json 2>log &&
	added m.json ms.json semantic &&
	test_grep "^train-rank: semantic mode: chose " log &&
	/usr/bin/python3 "$train" --report ms.json --member semantic sval.jsonl >rs.json &&
	"$JQ" -e ".queries == 36" rs.json &&
	/usr/bin/python3 "$train" --keep ms.json --recalibrate --semantic strain.jsonl sval.jsonl -o msr.json 2>log &&
	"$JQ" -c ".semantic.features" ms.json >a && "$JQ" -c ".semantic.features" msr.json >b && test_cmp a b &&
	test_grep "semantic mode: the kept weights: validation MRR" log &&
	(cd repo && ci-rank --model ../ms.json total price >../outs) &&
	"$JQ" -e "select(._type == \"summary\") | .confidence >= 0" outs
'

test_expect_code 1 '--semantic with dumps of hybrid mode only' '
	/usr/bin/python3 "$train" --keep m.json --semantic vtrain.jsonl vval.jsonl -o none.json 2>err
'
test_expect_success '... says so' 'test_grep "no features records of mode semantic" err'

test_expect_success '--choose cv: chosen by the training repositories, one left out at a time' '
	/usr/bin/python3 "$train" --choose cv --c 0.01,1 ntrain.jsonl nval.jsonl -o mcv.json 2>log &&
	test_grep "cross-validated [01]\.[0-9]* validation MRR" log &&
	"$JQ" -e ".trained.chosen_by | test(\"one repository left out\")" mcv.json &&
	test_grep "^train-rank: no vectors: held out t/a: 12 queries, MRR [01]\.[0-9]* (hand-set [01]\.[0-9]*)\$" log &&
	test $(grep -c "held out t/" log) = 3 &&
	"$JQ" -e ".trained.held_out | (keys == [\"t/a\", \"t/b\", \"t/c\"]) and all(.[]; .queries == 12 and .mrr_dumped >= 0 and .mrr_dumped <= 1)" mcv.json &&
	/usr/bin/python3 "$train" --c 1 ntrain.jsonl nval.jsonl -o mval.json 2>/dev/null &&
	"$JQ" -e ".trained | has(\"held_out\") | not" mval.json &&
	head -n 36 ntrain.jsonl | sed "s/t\/[abc]/t\/a/g" >one-repo.jsonl &&
	test_status 1 /usr/bin/python3 "$train" --choose cv one-repo.jsonl nval.jsonl 2>err &&
	test_grep "needs training queries of two repositories" err &&
	test_status 1 /usr/bin/python3 "$train" --c 1 one-repo.jsonl nval.jsonl 2>err &&
	test_grep "calibration on the training queries needs two repositories" err &&
	/usr/bin/python3 "$train" --c 1 --calibrate-on validation one-repo.jsonl nval.jsonl -o m1r.json 2>/dev/null &&
	"$JQ" -e ".trained.calibration.fitted_on == \"validation queries\"" m1r.json
'

# chunks <seed> <repos...>: 10 queries a repository, a relevant file of 5
# chunks whose gold function has the highest keyword value mostly, an
# irrelevant file, and a relevant file without gold functions (both skipped)
chunks() {
	seed=$1; shift
	for r in "$@"; do echo "$r"; done | awk -v seed="$seed" 'BEGIN { srand(seed) }
	{
		for (q = 1; q <= 10; q++) {
			good = int(rand() * 5) + 1
			for (c = 1; c <= 5; c++) {
				kw = rand() * 0.5 + (c == good && q % 4 ? 0.5 : 0)
				printf "{\"_type\":\"chunk_features\",\"path\":\"a.py\",\"file_rank\":1,\"name\":\"f%d\",\"scope\":\"K\",\"x\":{\"keyword\":%.4f,\"evidence\":%.4f,\"header\":%d},\"id\":\"%s-%d\",\"repo\":\"%s\",\"mode\":\"hybrid\",\"relevant_file\":true,\"spans\":[\"K.f%d\"],\"lines\":[]}\n",
					c, kw, 1 - c / 10, (c == 1), $1, q, $1, good
				printf "{\"_type\":\"chunk_features\",\"path\":\"b.py\",\"file_rank\":2,\"name\":\"g%d\",\"scope\":null,\"x\":{\"keyword\":0.9,\"evidence\":1,\"header\":0},\"id\":\"%s-%d\",\"repo\":\"%s\",\"mode\":\"hybrid\",\"relevant_file\":%s,\"spans\":[],\"lines\":[]}\n",
					c, $1, q, $1, (q % 2 ? "true" : "false")
			}
		}
	}'
}

test_expect_success '--chunks: the chunk member, fitted on the gold functions of relevant files' '
	chunks 7 t/a t/b t/c >ctrain.jsonl &&
	chunks 8 v/a v/b >cval.jsonl &&
	/usr/bin/python3 "$train" --keep m.json --choose cv --c 0.1,1 --chunks ctrain.jsonl cval.jsonl -o mc.json 2>log &&
	"$JQ" -c "del(.chunk, .trained)" m.json >a &&
	"$JQ" -c "del(.chunk, .trained)" mc.json >b &&
	test_cmp a b &&
	"$JQ" -e "(.chunk.features | map(.name) | index(\"keyword\") != null) and
		(.chunk.features[] | select(.name == \"keyword\") | .weight > 0) and
		.trained.chunk.train_queries == 30 and .trained.chunk.validation_queries == 20 and
		.trained.chunk.train_files == 150" mc.json &&
	test_grep "chunks: hand-set fusion: train MRR" log &&
	(cd repo && ci-rank --model ../mc.json total price >../outc) &&
	"$JQ" -se "map(select(._type == \"hit\"))[0].name == \"total_price\"" outc
'

test_expect_code 3 'dumps of two versions mixed (a feature more): an error' '
	sed "5s/\"header\":/\"extra\":0,\"header\":/" ctrain.jsonl >mixed.jsonl &&
	/usr/bin/python3 "$train" --keep m.json --chunks mixed.jsonl cval.jsonl 2>err
'
test_expect_success '... that says which line' 'test_grep "mixed.jsonl:5: its features are not those of the first" err'

test_expect_code 1 '--chunks with no relevant file that has gold functions' '
	grep "\"b.py\"" ctrain.jsonl >nogold.jsonl &&
	/usr/bin/python3 "$train" --keep m.json --chunks nogold.jsonl cval.jsonl 2>err
'
test_expect_success '... says so' 'test_grep "no relevant file with a gold function" err'

# cchunks <seed> <repos...>: 10 queries a repository, a relevant file of a
# class header K and four methods, the gold spans the class and one method (as
# mine-history names a class whose lines outside its methods a commit touched)
cchunks() {
	seed=$1; shift
	for r in "$@"; do echo "$r"; done | awk -v seed="$seed" 'BEGIN { srand(seed) }
	{
		for (q = 1; q <= 10; q++) {
			good = int(rand() * 4) + 1
			printf "{\"_type\":\"chunk_features\",\"path\":\"a.py\",\"file_rank\":1,\"kind\":\"class\",\"name\":\"K\",\"scope\":null,\"x\":{\"keyword\":%.4f,\"evidence\":0.5,\"header\":1},\"id\":\"%s-%d\",\"repo\":\"%s\",\"mode\":\"hybrid\",\"relevant_file\":true,\"spans\":[\"K\",\"K.f%d\"],\"lines\":[]}\n",
				rand() * 0.5, $1, q, $1, good
			for (c = 1; c <= 4; c++)
				printf "{\"_type\":\"chunk_features\",\"path\":\"a.py\",\"file_rank\":1,\"kind\":\"method\",\"name\":\"f%d\",\"scope\":\"K\",\"x\":{\"keyword\":%.4f,\"evidence\":%.4f,\"header\":0},\"id\":\"%s-%d\",\"repo\":\"%s\",\"mode\":\"hybrid\",\"relevant_file\":true,\"spans\":[\"K\",\"K.f%d\"],\"lines\":[]}\n",
					c, rand() * 0.5 + (c == good ? 0.5 : 0), 1 - c / 10, $1, q, $1, good
		}
	}'
}

# weight <model> <feature>: the chunk member's weight of a feature
weight() { "$JQ" -r ".chunk.features[] | select(.name == \"$2\") | .weight" "$1"; }

test_expect_success '--chunk-gold functions: a class header is not gold where one of its methods is' '
	cchunks 3 t/a t/b t/c >htrain.jsonl &&
	cchunks 4 v/a v/b >hval.jsonl &&
	/usr/bin/python3 "$train" --keep m.json --c 1 --objective pointwise --chunks htrain.jsonl hval.jsonl -o many.json 2>/dev/null &&
	/usr/bin/python3 "$train" --keep m.json --c 1 --objective pointwise --chunk-gold functions \
		--chunks htrain.jsonl hval.jsonl -o mfn.json 2>/dev/null &&
	"$JQ" -e ".trained.chunk.training_gold == \"any\"" many.json &&
	"$JQ" -e ".trained.chunk.training_gold == \"functions\"" mfn.json &&
	awk -v a="$(weight many.json header)" -v f="$(weight mfn.json header)" "BEGIN { exit !(a > 0 && f < 0) }"
'

test_expect_success '--chunk-drop: the features named are left out of the chunk member' '
	/usr/bin/python3 "$train" --keep m.json --c 1 --objective pointwise --chunk-drop "header, header" \
		--chunks htrain.jsonl hval.jsonl -o mdrop.json 2>/dev/null &&
	"$JQ" -e "(.chunk.features | map(.name) | index(\"header\") == null and index(\"keyword\") != null) and
		.trained.chunk.features_left_out == [\"header\"]" mdrop.json
'

test_expect_code 2 '--chunk-drop of a feature the dumps lack' '
	/usr/bin/python3 "$train" --keep m.json --chunk-drop nosuch --chunks htrain.jsonl hval.jsonl -o none.json 2>err
'
test_expect_success '... says so' 'test_grep "no chunk feature nosuch to leave out" err'

test_expect_code 2 '--chunk-drop without --chunks' '
	/usr/bin/python3 "$train" --keep m.json --chunk-drop header --history htrain.jsonl hval.jsonl -o none.json 2>err
'
test_expect_success '... says so, and writes nothing' '
	test_grep "chunk-drop: expected --chunks" err &&
	test ! -e none.json
'

test_expect_code 3 'a missing dump' '/usr/bin/python3 "$train" none.jsonl nval.jsonl 2>err'
test_expect_success '... says so' 'test_grep "cannot open .none.jsonl." err'
test_expect_code 1 '--report with a model without calibration' '
	echo "{\"format\":\"ci-rank-linear/1\",\"bias\":0,\"features\":[]}" >plain.json &&
	/usr/bin/python3 "$train" --report plain.json nval.jsonl 2>err
'
test_expect_success '... says so' 'test_grep "has no calibration" err'

test_done
