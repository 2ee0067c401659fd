#!/bin/sh
# t0760-rank-chunks: ci-rank orders the chunks within a file by their own
# evidence (libcommon/rank/chunks.c): when a class header repeats the words of
# the query, the method is the file's hit, not the header (--chunk-order fused,
# the fused score alone, shows the header); the files' order and scores are the
# same either way; a class with no candidate method stays the hit of its file;
# the context bundle starts from the method too; a bad value is an error.
# --chunk-features writes each chunk's features (a call, a traceback frame, a
# name the query has, the share of the query's terms it holds); a model's
# chunk member orders them (--chunk-order model, the default with the learned
# fusion); every chunk of the first files is a candidate for that order
# (--chunk-expand), not only those a signal found.

. "$(dirname "$0")/lib.sh"

if ! test_have_lang python; then
	test_skip 'ci-rank chunk order' 'the python grammar is not compiled in'
	test_done
fi

hits() {	# hits <file>: path kind name of each hit
	"$JQ" -r 'select(._type == "hit") | "\(.path) \(.kind) \(.name)"' "$1"
}

test_expect_success 'setup: a class whose docstring repeats the words, its methods, a class alone' '
	git init -q repo && cd repo &&
	mkdir -p web &&
	cat >web/sessions.py <<-\EOF &&
	class SecureCookieSessionInterface:
	    """The session cookie interface: the session cookie is signed.

	    A session cookie holds the session; the signed session cookie is read
	    back when the session cookie comes with a request, and the session
	    cookie is signed again on the response.  Cookie, session, signed.
	    """

	    salt = "cookie-session"

	    def get_signing_serializer(self, app):
	        if not app.secret_key:
	            return None
	        return URLSafeTimedSerializer(app.secret_key, salt=self.salt)

	    def save_session(self, app, session, response):
	        val = self.get_signing_serializer(app).dumps(dict(session))
	        response.set_cookie(app.cookie_name, val)

	    def open_session(self, app, request):
	        s = self.get_signing_serializer(app)
	        return s.loads(request.cookies.get(app.cookie_name))
	EOF
	cat >web/models.py <<-\EOF &&
	class CookieJar:
	    """A jar of cookies: each cookie signed for the session."""

	    cookies = {}
	    signed = True
	EOF
	printf "def render(template):\n    return template.format()\n" >web/other.py &&
	git add . && git commit -q -m init &&
	ci-index build
'

for mode in keyword hybrid; do
	test_expect_success "$mode: the fused order shows the class header, the default a method" '
		(cd repo && ci-rank --mode '$mode' --chunk-order fused where is the session cookie signed >../fused &&
		 ci-rank --mode '$mode' where is the session cookie signed >../ev) &&
		hits fused | grep "^web/sessions.py " | head -n 1 >got &&
		echo "web/sessions.py class SecureCookieSessionInterface" >want && test_cmp want got &&
		hits ev | grep "^web/sessions.py " | head -n 1 >got &&
		echo "web/sessions.py method save_session" >want && test_cmp want got
	'
done

test_expect_success 'the files, their order and scores do not change, only which chunk shows' '
	(cd repo && ci-rank --mode keyword --limit 20 --chunk-order fused cookie jar for the session >../f &&
	 ci-rank --mode keyword --limit 20 cookie jar for the session >../e) &&
	"$JQ" -c "select(._type == \"hit\") | [.path, .score]" f >a &&
	"$JQ" -c "select(._type == \"hit\") | [.path, .score]" e >b &&
	test "$(wc -l <a)" -ge 2 && test_cmp a b &&
	"$JQ" -c "select(._type == \"summary\") | del(.query)" f >sa &&
	"$JQ" -c "select(._type == \"summary\") | del(.query)" e >sb && test_cmp sa sb
'

test_expect_success 'a class with no candidate method stays its file'"'"'s hit; every chunk of a file still shows' '
	hits e >got &&
	test_grep "^web/models.py class CookieJar$" got &&
	(cd repo && ci-rank --mode keyword --per-file 5 --chunk-order fused where is the session cookie signed >../f5 &&
	 ci-rank --mode keyword --per-file 5 where is the session cookie signed >../e5) &&
	hits f5 | sort >a && hits e5 | sort >b && test_cmp a b &&
	hits e5 | grep "^web/sessions.py" | tail -n 1 >got &&
	echo "web/sessions.py class SecureCookieSessionInterface" >want && test_cmp want got
'

test_expect_success 'the context bundle starts from the method' '
	(cd repo && ci-rank context --mode keyword where is the session cookie signed >../ctx) &&
	"$JQ" -r "select(._type == \"context_chunk\" and .path == \"web/sessions.py\" and .reason == \"hit\") | .name" ctx >got &&
	echo save_session >want && test_cmp want got &&
	(cd repo && ci-rank context --mode keyword --chunk-order fused where is the session cookie signed >../ctxf) &&
	"$JQ" -r "select(._type == \"context_chunk\" and .path == \"web/sessions.py\" and .reason == \"hit\") | .name" ctxf >got &&
	echo SecureCookieSessionInterface >want && test_cmp want got
'

test_expect_code 2 '--chunk-order takes model, evidence or fused' \
	'(cd repo && ci-rank --chunk-order best session cookie) 2>err'
test_expect_success '... says so' 'test_grep "chunk-order: expected model, evidence or fused" err'

test_expect_success '--chunk-features: each chunk of the best files, its name and features' '
	printf "%s\n" "the session cookie is not signed: open_session() fails" \
		"Traceback (most recent call last):" \
		"  File \"web/sessions.py\", line 16, in save_session" \
		"    val = self.get_signing_serializer(app).dumps(dict(session))" >q &&
	(cd repo && ci-rank --mode keyword --query-file ../q --chunk-features ../cf >../out) &&
	"$JQ" -r "select(.path == \"web/sessions.py\") | \"\(.name) \(.x.q_calls) \(.x.q_frame) \(.x.function) \(.x.class)\"" cf | sort >got &&
	cat >want <<-\EOF &&
	SecureCookieSessionInterface 0 0 0 1
	get_signing_serializer 1 0 1 0
	open_session 1 0 1 0
	save_session 0 1 1 0
	EOF
	test_cmp want got &&
	"$JQ" -r "select(._type != \"chunk_features\" or .file_rank < 1 or (.x | length) != 26) | .path" cf >bad &&
	test_must_be_empty bad &&
	"$JQ" -r "select(.name == \"open_session\") | .x.name_parts" cf >got && echo 1 >want && test_cmp want got
'

test_expect_success '--chunk-features: coverage, the share of the query'"'"'s terms each chunk holds' '
	(cd repo && ci-rank --mode keyword --chunk-features ../cov where is the session cookie signed >/dev/null) &&
	"$JQ" -s -e "map(select(.name == \"SecureCookieSessionInterface\")) | .[0].x.coverage == 1" cov &&
	"$JQ" -s -e "map(select(.name == \"open_session\")) | .[0].x.coverage | . > 0 and . < 1" cov &&
	"$JQ" -s -e "map(select(.path == \"web/models.py\")) | length > 0 and all(.x.coverage > 0)" cov &&
	"$JQ" -s -e "map(.x.coverage) | all(. >= 0 and . <= 1)" cov
'

test_expect_success '--chunk-features writes the same with --chunk-order fused, which orders nothing' '
	(cd repo && ci-rank --mode keyword --query-file ../q --chunk-order fused --chunk-features ../cf2 >../out2 &&
	 ci-rank --mode keyword --query-file ../q --chunk-order fused >../out3) &&
	test_cmp cf cf2 && test_cmp out3 out2
'

test_expect_success 'a model'"'"'s chunk member orders a file'"'"'s chunks; evidence without one' '
	"$JQ" -c ". + {chunk: {bias: 0, features: [{name: \"class\", mean: 0, scale: 1, weight: 5}]}}" \
		"$CI_SRC_DIR/share/rank/model.json" >first.json &&
	(cd repo && ci-rank --mode hybrid --model ../first.json where is the session cookie signed >../m1 &&
	 ci-rank --mode hybrid --model ../first.json --chunk-order evidence where is the session cookie signed >../m2 &&
	 ci-rank --mode hybrid --model "$CI_SRC_DIR/share/rank/model.json" --chunk-order model where is the session cookie signed >../m3) &&
	hits m1 | grep "^web/sessions.py " | head -n 1 >got &&
	echo "web/sessions.py class SecureCookieSessionInterface" >want && test_cmp want got &&
	hits m2 | grep "^web/sessions.py " | head -n 1 >got &&
	echo "web/sessions.py method save_session" >want && test_cmp want got &&
	hits m3 | grep "^web/sessions.py " | head -n 1 >got && test_cmp want got
'

test_expect_code 3 '--chunk-features to a file that cannot be written: an error' \
	'(cd repo && ci-rank --mode keyword --chunk-features /nonexistent/dir/cf session cookie) 2>err'
test_expect_success '... that says so' 'test_grep "cannot open ./nonexistent/dir/cf" err'

test_expect_success 'setup: a function no signal finds, after one that a signal does' '
	cat >repo/web/signing.py <<-\EOF &&
	def sign_cookie(value):
	    """Sign the session cookie."""
	    return hmac_digest(value)


	def hmac_digest(value):
	    return value[::-1]
	EOF
	(cd repo && git add . && git commit -q -m signing && ci-index update)
'

test_expect_success '--chunk-expand (5 by default): every chunk of the first files a candidate, the files unchanged' '
	"$JQ" -c ". + {chunk: {bias: 0, features: [{name: \"position\", mean: 0, scale: 1, weight: 5}]}}" \
		"$CI_SRC_DIR/share/rank/model.json" >last.json &&
	(cd repo && ci-rank --model ../last.json --chunk-expand 0 --chunk-features ../x0 where is the session cookie signed >../e0 &&
	 ci-rank --model ../last.json --chunk-features ../x5 where is the session cookie signed >../e5) &&
	"$JQ" -r "select(.path == \"web/signing.py\") | .name" x0 >got && echo sign_cookie >want && test_cmp want got &&
	"$JQ" -r "select(.path == \"web/signing.py\") | .name" x5 | sort >got &&
	printf "hmac_digest\nsign_cookie\n" >want && test_cmp want got &&
	"$JQ" -r "select(.path == \"web/signing.py\" and .name == \"hmac_digest\") | .x.keyword" x5 >got &&
	echo 0 >want && test_cmp want got &&
	hits e0 | grep "^web/signing.py " >got && echo "web/signing.py function sign_cookie" >want && test_cmp want got &&
	hits e5 | grep "^web/signing.py " >got && echo "web/signing.py function hmac_digest" >want && test_cmp want got &&
	"$JQ" -r "select(._type == \"hit\") | \"\(.path) \(.score)\"" e0 >f0 &&
	"$JQ" -r "select(._type == \"hit\") | \"\(.path) \(.score)\"" e5 >f5 && test_cmp f0 f5 &&
	(cd repo && ci-rank --model ../last.json --chunk-expand 5 where is the session cookie signed >../e55) &&
	test_cmp e5 e55
'

test_expect_success '--chunk-expand 1 reaches the first file in scope only' '
	(cd repo && ci-rank --model ../last.json --chunk-expand 1 --chunk-features ../x1 where is the session cookie signed >/dev/null) &&
	"$JQ" -r "select(.file_rank == 1) | .path" x1 | sort -u >first && test_line_count = 1 first &&
	"$JQ" -r "select(.file_rank > 1) | .path" x1 | sort -u >rest &&
	"$JQ" -r "select(.file_rank > 1) | .path" x0 | sort -u >rest0 && test_cmp rest0 rest
'

test_expect_success '--chunk-expand keeps --type and --path: the chunks it adds pass them too' '
	(cd repo && ci-rank --model ../last.json --type class --limit 50 --per-file 50 where is the session cookie signed >../t5 &&
	 ci-rank --model ../last.json --path web/signing.py --limit 50 --per-file 50 where is the session cookie signed >../p5) &&
	"$JQ" -r "select(._type == \"hit\") | .kind" t5 | sort -u >got && echo class >want && test_cmp want got &&
	"$JQ" -r "select(._type == \"hit\") | .path" p5 | sort -u >got && echo web/signing.py >want && test_cmp want got &&
	"$JQ" -r "select(._type == \"hit\") | .name" p5 | sort >got &&
	printf "hmac_digest\nsign_cookie\n" >want && test_cmp want got
'

test_expect_success '--chunk-expand: an added chunk has its file'"'"'s path signal, no keyword of its own' '
	(cd repo && ci-rank --model ../last.json --explain --per-file 5 where does web/signing.py sign the session cookie >../ps) &&
	"$JQ" -r "select(._type == \"hit\" and .path == \"web/signing.py\") | \"\(.name) \(.signals.keyword) \(.signals.path > 0)\"" ps |
		sort >got &&
	printf "hmac_digest 0 true\nsign_cookie 1 true\n" >want && test_cmp want got
'

test_expect_code 2 '--chunk-expand takes 0 to 20' \
	'(cd repo && ci-rank --chunk-expand 21 session cookie) 2>err'
test_expect_success '... says so' 'test_grep "chunk-expand" err'

test_done
