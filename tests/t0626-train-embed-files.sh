#!/bin/sh
# t0626-train-embed-files: scripts/embed-file-lists makes, from records of
# (query, base commit, changed files), the lists of a repository's source files
# (tests left out) that scripts/train-embed-files ranks as ci-rank's semantic
# mode does, fine-tuning ci-code: on a generated repository of three source
# files and a test, the lists hold the three, a record whose only file is a
# test is left out, the description pairs of the three functions are there
# (their descriptions' words), the same input gives the same file; records that send each
# description to another module's file (so that the shipped model ranks them
# wrong) are learnt: their file MRR rises (measured on the int8 table written),
# and the model written runs in ci-embed, with its metadata, and embeds
# otherwise than the shipped one; bad input is refused.

. "$(dirname "$0")/lib.sh"

lists=$CI_SRC_DIR/scripts/embed-file-lists
train=$CI_SRC_DIR/scripts/train-embed-files
unset CI_MODEL

need_torch 'scripts/train-embed-files'
if ! test_have_lang python; then
	test_skip 'scripts/embed-file-lists' 'no python grammar'
	test_done
fi
CI_CHUNK=$CI_BUILD_DIR/ci-chunk
export CI_CHUNK

test_expect_success 'setup: a repository of three modules and a test; four records' '
	git init -q -b main repo &&
	mkdir repo/shop repo/tests &&
	cat >repo/shop/cart.py <<-\EOF &&
	class Cart:
	    def total(self):
	        """The sum of the prices of the items in the cart."""
	        return sum(p for _, p in self.items)
	EOF
	cat >repo/shop/net.py <<-\EOF &&
	def send_request(url, retries=3):
	    """Send an HTTP request, retrying when the connection times out."""
	    for _ in range(retries):
	        pass
	EOF
	cat >repo/shop/store.py <<-\EOF &&
	def query_rows(db, table):
	    """Read the rows of a database table."""
	    return db.execute("SELECT * FROM " + table).fetchall()
	EOF
	echo "def test_total(): pass" >repo/tests/test_cart.py &&
	git -C repo add . &&
	git -C repo -c user.name=Dev -c user.email=dev@example.org commit -q -m import &&
	base=$(git -C repo rev-parse HEAD) &&
	for r in "a|Cart total is wrong for many items|shop/net.py" \
		 "b|HTTP requests are not retried after a timeout|shop/store.py" \
		 "c|rows of a table are read twice from the database|shop/cart.py" \
		 "d|test of the total fails|tests/test_cart.py"; do
		id=${r%%|*} && rest=${r#*|} && q=${rest%%|*} && f=${rest#*|} &&
		printf "{\"id\": \"%s\", \"repo\": \"acme/shop\", \"base_commit\": \"%s\", \"query\": \"%s\", \"relevant_files\": [\"%s\"]}\n" \
			"$id" "$base" "$q" "$f" >>records.jsonl || return 1
	done &&
	test_line_count = 4 records.jsonl
'

test_expect_success 'embed-file-lists: the three source files, three records, three descriptions, deterministic' '
	/usr/bin/python3 "$lists" --ci-chunk "$CI_CHUNK" --out lists.npz records.jsonl=repo/.git 2>err &&
	test_grep "records.jsonl: 3 of 4 records kept" err &&
	test_grep "1 trees, 3 blobs, 4 chunks, 3 description pairs" err &&
	/usr/bin/python3 - >actual <<-\EOF &&
	import json, numpy as np
	z = np.load("lists.npz", allow_pickle=False)
	meta = json.loads(bytes(z["meta"]).decode())
	words = open("'"$CI_SRC_DIR"'/share/models/ci-code.vocab").read().split("\n")
	print(" ".join(m["id"] for m in meta), list(z["toff"]), list(z["gold"]))
	for k in range(len(z["dnn"])):
	    print(" ".join(words[i] for i in z["dq"][z["dqoff"][k]:z["dqoff"][k + 1]]))
	EOF
	cat >expect <<-\EOF &&
	a b c [0, 3] [1, 2, 0]
	read the rows of database table
	send an http request retrying when the connection times out
	the sum of prices items in cart
	EOF
	test_cmp expect actual &&
	/usr/bin/python3 "$lists" --ci-chunk "$CI_CHUNK" --out again.npz records.jsonl=repo/.git 2>/dev/null &&
	cmp lists.npz again.npz &&
	mkdir repos && ln -s ../repo/.git repos/acme+shop &&
	/usr/bin/python3 "$lists" --ci-chunk "$CI_CHUNK" --repos repos --out byname.npz records.jsonl 2>/dev/null &&
	cmp lists.npz byname.npz
'

test_expect_success 'train-embed-files: the file MRR rises; a model ci-embed runs, not the shipped one' '
	/usr/bin/python3 "$train" --train lists.npz --out model --epochs 4 --lr 0.05 --batch 2 2>log &&
	test_grep "^train-embed-files: start: MRR descriptions [01]\\.[0-9]* records.jsonl [01]\\.[0-9]*, mean" log &&
	test_grep "^train-embed-files: epoch 4: 2 steps, loss [0-9.]*, [0-9]* s; MRR descriptions" log &&
	start=$(sed -n "s/.*start: .*mean \\([0-9.]*\\)$/\\1/p" log) &&
	best=$(sed -n "s/.*epoch .*mean \\([0-9.]*\\)$/\\1/p" log | sort -n | tail -n 1) &&
	awk -v s="$start" -v b="$best" "BEGIN { exit !(s < 1 && b > s) }" &&
	cmp model/ci-code.vocab "$CI_SRC_DIR/share/models/ci-code.vocab" &&
	head -c 2000 model/ci-code.safetensors | tr -d "\\000" >head &&
	test_grep "files_fine_tune" head &&
	test_grep "\"name_weight\":\"3\"" head &&
	ci-embed --model model/ci-code --query "Cart total is wrong" >vec &&
	"$JQ" -e ".model == \"ci-code\" and (.vec | length) == 1368" vec &&
	ci-embed --model ci-code --query "Cart total is wrong" >shipped &&
	"$JQ" -r .vec vec >a && "$JQ" -r .vec shipped >b &&
	! cmp -s a b
'

test_expect_code 3 'a file that is not one of embed-file-lists: a message, exit 3' '
	echo nonsense >bad.npz &&
	/usr/bin/python3 "$train" --train bad.npz --out m2 2>err;
	rc=$? &&
	test_grep "train-embed-files: bad.npz: not a file of scripts/embed-file-lists" err &&
	return $rc
'

test_expect_code 3 'lists whose offsets do not fit their arrays: damaged, exit 3' '
	/usr/bin/python3 - <<-\EOF &&
	import numpy as np
	z = dict(np.load("lists.npz", allow_pickle=False))
	z["coff"] = z["coff"].copy()
	z["coff"][1] = 10 ** 6
	np.savez("damaged.npz", **z)
	EOF
	/usr/bin/python3 "$train" --train damaged.npz --out m2 2>err;
	rc=$? &&
	test_grep "train-embed-files: damaged.npz: damaged: its offsets do not fit its arrays" err &&
	! test -e m2 &&
	return $rc
'

test_expect_code 2 'bad numbers: a usage error' '
	/usr/bin/python3 "$train" --train lists.npz --out m2 --drop 1.5 2>err;
	rc=$? &&
	test_grep "0 <= --drop < 1" err &&
	return $rc
'

test_expect_code 3 'a record without its base commit: a message naming the file, exit 3' '
	echo "{\"id\": \"x\", \"repo\": \"acme/shop\", \"query\": \"q\", \"relevant_files\": []}" >nobase.jsonl &&
	/usr/bin/python3 "$lists" --ci-chunk "$CI_CHUNK" --out x.npz nobase.jsonl=repo/.git 2>err;
	rc=$? &&
	test_grep "embed-file-lists: nobase.jsonl: a record without .base_commit." err &&
	return $rc
'

test_done
