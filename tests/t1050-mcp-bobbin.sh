#!/bin/sh
# ci-mcp --profile bobbin: the 24 tools of seeds/bobbin-tools.md on a small
# Python repository with a year of history, look-alike functions, beads
# (.beads/issues.jsonl) and an archive source (.bobbin/config.toml), indexed
# with vectors and history: tools/list with the documented parameters and
# defaults, every documented response field of every tool, the feedback loop
# (a context bundle's injection rated, linked to a fix, counted), and the
# validation errors.
. "$(dirname "$0")/lib.sh"

NODE_MODULES=${CI_NODE_MODULES:-$CI_SRC_DIR/deps/node/node_modules}

if ! test_have_lang python; then
	test_skip 'bobbin profile tests' 'the python grammar is not compiled in'
	test_done
fi
need_model 'bobbin profile tests'
SOURCE_DATE_EPOCH=1795000000
GT_ROLE=tester
export SOURCE_DATE_EPOCH GT_ROLE

# call <tool> <arguments>: one tools/call; the result in ../res
call() {
	printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" |
	ci-mcp --profile bobbin --wait 60 >"$TRASH_DIRECTORY/out" 2>"$TRASH_DIRECTORY/err" &&
	jq -c .result "$TRASH_DIRECTORY/out" >"$TRASH_DIRECTORY/res"
}

# res_is <jq condition>: the result meets it (shown when not)
res_is() {
	jq -e "$1" "$TRASH_DIRECTORY/res" >/dev/null ||
	{ echo "result fails: $1" >&7; cat "$TRASH_DIRECTORY/res" >&7; return 1; }
}

# sc_is <jq condition>: the structuredContent meets it, and the call was no error
sc_is() {
	res_is "(.isError | not) and (.structuredContent | $1)"
}

# commit <date> <subject> [<author>]: commit everything at that date
commit() {
	git add -A . &&
	GIT_AUTHOR_DATE="$1T12:00:00Z" GIT_COMMITTER_DATE="$1T12:00:00Z" \
		GIT_AUTHOR_NAME="${3:-ann}" GIT_AUTHOR_EMAIL=a@example.com git commit -qm "$2"
}

test_expect_success 'setup: history, look-alike code, beads and an archive, indexed with vectors and history' '
	git init -q repo && mkdir -p repo/src repo/tests repo/.beads repo/.bobbin repo/notes/2026/05/02 && (
		cd repo &&
		cat >src/config.py <<-\EOF &&
		import json


		def parse_config(path):
		    """Read the JSON configuration file at path."""
		    with open(path) as f:
		        return json.load(f)


		class Config:
		    def __init__(self, path):
		        self.data = parse_config(path)

		    def get(self, key, default=None):
		        if key in self.data:
		            return self.data[key]
		        elif key.upper() in self.data:
		            return self.data[key.upper()]
		        for k in self.data:
		            if k.lower() == key.lower():
		                return self.data[k]
		        return default
		EOF
		cat >src/app.py <<-\EOF &&
		from src.config import Config, parse_config


		def main():
		    cfg = Config("app.json")
		    print(cfg.get("name"))
		EOF
		commit 2025-06-01 "feat: config reader (#12)" &&
		cat >src/http.py <<-\EOF &&
		def get(session, url, params=None, **kwargs):
		    """Send a GET request through the session and return the response."""
		    kwargs.setdefault("allow_redirects", True)
		    return session.request("get", url, params=params, **kwargs)


		def post(session, url, data=None, **kwargs):
		    """Send a POST request through the session and return the response."""
		    kwargs.setdefault("allow_redirects", True)
		    return session.request("post", url, data=data, **kwargs)
		EOF
		cat >tests/test_config.py <<-\EOF &&
		from src.config import parse_config


		def test_parse_config(tmp_path):
		    p = tmp_path / "c.json"
		    p.write_text("{}")
		    assert parse_config(p) == {}
		EOF
		echo "# retry on a locked file" >>src/config.py && echo "# read once" >>src/app.py &&
		commit 2026-03-01 "fix: retry reading a locked config" bob &&
		echo "# cache" >>src/config.py && echo "# log" >>src/app.py &&
		commit 2026-05-01 "refactor: config cache" &&
		printf "%s\n" \
			"{\"id\":\"bd-1\",\"title\":\"Config reader crashes on empty file\",\"description\":\"parse_config raises on an empty JSON file\",\"status\":\"open\",\"priority\":1,\"assignee\":\"ann\"}" \
			"{\"id\":\"bd-2\",\"title\":\"Add HTTP retries\",\"description\":\"retry GET requests on timeouts\",\"status\":\"closed\",\"priority\":3}" >.beads/issues.jsonl &&
		printf "[archive]\nenabled = true\n[[archive.sources]]\nname = \"pensieve\"\npath = \"notes\"\nschema = \"agent-memory\"\nname_field = \"agent\"\n" >.bobbin/config.toml &&
		printf -- "---\nschema: agent-memory\nid: mem-1\ntimestamp: 2026-05-02T10:00:00Z\nagent: stryder\n---\n\nDecided to cache the parsed configuration in Config.\n" >notes/2026/05/02/mem-1.md &&
		ci-index --embed --history build 2>/dev/null &&
		ci-index status | jq -e ".vectors > 0 and .commits == 3 and .couplings > 0" >/dev/null
	)
'

test_expect_success 'tools/list: the 24 tools with their parameters, types and defaults' '
	cd repo &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}" | ci-mcp --profile bobbin >../out &&
	jq -c ".result.tools[] | {name, required: (.inputSchema.required // []), params: [.inputSchema.properties | to_entries[] |
		[.key, .value.type, .value.default]]}" ../out >../actual &&
	cat >../expect <<-\EOF &&
	{"name":"search","required":["query"],"params":[["query","string",null],["type","string","all"],["limit","integer",10],["mode","string","hybrid"],["repo","string","all"]]}
	{"name":"grep","required":["pattern"],"params":[["pattern","string",null],["ignore_case","boolean",false],["regex","boolean",false],["type","string","all"],["limit","integer",10],["repo","string","all"]]}
	{"name":"context","required":["query"],"params":[["query","string",null],["budget","integer",500],["depth","integer",1],["max_coupled","integer",3],["limit","integer",20],["coupling_threshold","number",0.1],["repo","string","all"]]}
	{"name":"related","required":["file"],"params":[["file","string",null],["limit","integer",10],["threshold","number",0]]}
	{"name":"find_refs","required":["symbol"],"params":[["symbol","string",null],["type","string","all"],["limit","integer",20],["repo","string","all"]]}
	{"name":"list_symbols","required":["file"],"params":[["file","string",null],["repo","string","all"]]}
	{"name":"read_chunk","required":["file","start_line","end_line"],"params":[["file","string",null],["start_line","integer",null],["end_line","integer",null],["context","integer",0]]}
	{"name":"hotspots","required":[],"params":[["since","string","1 year ago"],["limit","integer",20],["threshold","number",0]]}
	{"name":"prime","required":[],"params":[["section","string","all"],["brief","boolean",false]]}
	{"name":"impact","required":["target"],"params":[["target","string",null],["depth","integer",1],["mode","string","combined"],["threshold","number",0.1],["limit","integer",20]]}
	{"name":"review","required":[],"params":[["diff","string","unstaged"],["budget","integer",500],["depth","integer",1]]}
	{"name":"similar","required":[],"params":[["target","string",null],["scan","boolean",false],["threshold","number",0.85],["limit","integer",10],["cross_repo","boolean",false]]}
	{"name":"search_beads","required":["query"],"params":[["query","string",null],["priority","integer",null],["status","string","all"],["assignee","string","all"],["limit","integer",10],["enrich","boolean",true]]}
	{"name":"dependencies","required":["file"],"params":[["file","string",null],["reverse","boolean",false],["both","boolean",false],["repo","string","all"]]}
	{"name":"file_history","required":["file"],"params":[["file","string",null],["limit","integer",20]]}
	{"name":"status","required":[],"params":[["languages","boolean",false]]}
	{"name":"commit_search","required":["query"],"params":[["query","string",null],["author","string","all"],["file","string","all"],["limit","integer",10]]}
	{"name":"feedback_submit","required":["injection_id","rating"],"params":[["injection_id","string",null],["rating","string",null],["agent","string","auto"],["reason","string",null]]}
	{"name":"feedback_list","required":[],"params":[["rating","string","all"],["agent","string","all"],["limit","integer",20]]}
	{"name":"feedback_stats","required":[],"params":[]}
	{"name":"feedback_lineage_store","required":["feedback_ids","action_type","description"],"params":[["feedback_ids","array",null],["action_type","string",null],["bead","string",null],["commit_hash","string",null],["description","string",null],["agent","string","auto"]]}
	{"name":"feedback_lineage_list","required":[],"params":[["feedback_id","integer",null],["bead","string","all"],["commit_hash","string","all"],["limit","integer",20]]}
	{"name":"archive_search","required":["query"],"params":[["query","string",null],["source","string","all"],["filter","string","all"],["after","string",null],["before","string",null],["limit","integer",10],["mode","string","hybrid"]]}
	{"name":"archive_recent","required":["after"],"params":[["after","string",null],["source","string","all"],["limit","integer",20]]}
	EOF
	test_cmp ../expect ../actual &&
	jq -e "[.result.tools[] | .outputSchema.type == \"object\" and (.description | length) > 20] | all" ../out &&
	jq -e "[.result.tools[] | select(.name == \"search\" or .name == \"impact\" or .name == \"feedback_submit\")] |
		(.[0].inputSchema.properties.mode.enum == [\"hybrid\",\"semantic\",\"keyword\"]) and
		(.[1].inputSchema.properties.mode.enum == [\"combined\",\"coupling\",\"semantic\",\"deps\"]) and
		(.[2].inputSchema.properties.rating.enum == [\"useful\",\"noise\",\"harmful\"])" ../out
'

# (hybrid mode's match_type is keyword: its learned fusion reads no semantic
# feature and leaves the vectors out; semantic mode's is semantic)
test_expect_success 'search: ranked chunks with every field; type and mode' '
	cd repo && call search "{\"query\":\"read the JSON configuration file\",\"limit\":3}" &&
	sc_is ".query == \"read the JSON configuration file\" and .mode == \"hybrid\" and .count == (.results | length) and .count >= 1" &&
	sc_is ".results[0] | .file_path == \"src/config.py\" and .name == \"parse_config\" and .chunk_type == \"function\" and
		.start_line == 4 and .end_line >= 7 and (.score | type) == \"number\" and .match_type == \"keyword\" and
		.language == \"python\" and (.content_preview | startswith(\"def parse_config(path):\"))" &&
	call search "{\"query\":\"read the JSON configuration file\",\"limit\":3,\"mode\":\"semantic\"}" &&
	sc_is ".mode == \"semantic\" and .count >= 1 and ([.results[] | .match_type == \"semantic\"] | all)" &&
	call search "{\"query\":\"Config\",\"type\":\"class\",\"mode\":\"keyword\"}" &&
	sc_is ".mode == \"keyword\" and .count >= 1 and ([.results[] | .chunk_type == \"class\" and .match_type == \"keyword\"] | all)"
'

test_expect_success 'grep: chunks holding the pattern with their matching lines; case and regex' '
	cd repo && call grep "{\"pattern\":\"parse_config\"}" &&
	sc_is ".pattern == \"parse_config\" and .count == 6 and ([.results[] | (.matching_lines | length) >= 1] | all)" &&
	sc_is "[.results[] | .file_path] | index(\"src/app.py\") != null" &&
	sc_is ".results | map(select(.file_path == \"src/config.py\"))[0] | (.file_path | type) == \"string\" and has(\"name\") and (.chunk_type | type) == \"string\" and
		(.start_line | type) == \"number\" and (.end_line | type) == \"number\" and (.score | type) == \"number\" and
		.language == \"python\" and (.content_preview | type) == \"string\" and
		(.matching_lines[0] | (.line_number | type) == \"number\" and (.content | test(\"parse_config\")))" &&
	call grep "{\"pattern\":\"PARSE_CONFIG\"}" &&
	sc_is ".count == 0 and .results == []" &&
	call grep "{\"pattern\":\"PARSE_CONFIG\",\"ignore_case\":true}" &&
	sc_is "[.results[] | .matching_lines | length] | add >= 3" &&
	call grep "{\"pattern\":\"def (get|post)\\\\(\",\"regex\":true}" &&
	sc_is "[.results[] | [.file_path, .name, .matching_lines[0].line_number]] ==
		[[\"src/config.py\", \"get\", 14], [\"src/http.py\", \"get\", 1], [\"src/http.py\", \"post\", 7]]" &&
	call grep "{\"pattern\":\"def (get|post)\\\\(\",\"regex\":true,\"type\":\"function\",\"limit\":1}" &&
	sc_is "[.results[] | [.file_path, .name]] == [[\"src/http.py\", \"get\"]]"
'

test_expect_success 'context: hits and coupled files within the budget, with an injection id' '
	cd repo && call context "{\"query\":\"read the JSON configuration file\",\"limit\":1,\"budget\":200}" &&
	sc_is ".query == \"read the JSON configuration file\" and .budget.max_lines == 200 and .budget.used_lines <= 200 and .budget.used_lines > 0" &&
	sc_is ".files[0] | .path == \"src/config.py\" and .language == \"python\" and .relevance == \"direct\" and (.score | type) == \"number\" and
		(.chunks[0] | .chunk_type == \"function\" and .start_line == 4 and (.content | startswith(\"def parse_config\")))" &&
	sc_is "[.files[] | select(.relevance == \"coupled\")] | length >= 1 and (.[0].coupled_to == [\"src/config.py\"])" &&
	sc_is ".summary | .total_files >= 2 and .direct_hits == 1 and .coupled_additions >= 1 and .total_chunks >= 2" &&
	sc_is ".injection_id == \"inj-1\"" &&
	res_is ".content[0].text | startswith(\"[injection_id: inj-1]\")" &&
	call context "{\"query\":\"read the JSON configuration file\",\"limit\":1,\"depth\":0}" &&
	sc_is ".summary.coupled_additions == 0 and .injection_id == \"inj-2\""
'

test_expect_success 'related, find_refs, list_symbols, read_chunk' '
	cd repo && call related "{\"file\":\"src/config.py\"}" &&
	sc_is ".file == \"src/config.py\" and .related[0].path == \"src/app.py\" and .related[0].co_changes == 3 and (.related[0].score | type) == \"number\"" &&
	call related "{\"file\":\"src/config.py\",\"threshold\":0.99,\"limit\":1}" &&
	sc_is ".related | length <= 1" &&
	call find_refs "{\"symbol\":\"parse_config\"}" &&
	sc_is ".symbol == \"parse_config\" and .definition == {name: \"parse_config\", chunk_type: \"function\", file_path: \"src/config.py\",
		start_line: 4, end_line: 7, signature: \"def parse_config(path):\"} and .usage_count == 2 and
		([.usages[] | .file_path] | sort) == [\"src/config.py\", \"tests/test_config.py\"] and (.usages[0].context | test(\"parse_config\"))" &&
	call find_refs "{\"symbol\":\"parse_config\",\"limit\":1,\"type\":\"class\"}" &&
	sc_is ".usage_count == 2 and (.usages | length) == 1 and (has(\"definition\") | not)" &&
	call list_symbols "{\"file\":\"src/config.py\"}" &&
	sc_is ".file == \"src/config.py\" and .count == 4 and [.symbols[] | .name] == [\"parse_config\", \"Config\", \"__init__\", \"get\"] and
		.symbols[1] == {name: \"Config\", chunk_type: \"class\", start_line: 10, end_line: 22, signature: \"class Config:\"}" &&
	call read_chunk "{\"file\":\"src/config.py\",\"start_line\":4,\"end_line\":5,\"context\":1}" &&
	sc_is ". == {file: \"src/config.py\", start_line: 4, end_line: 5, actual_start_line: 3, actual_end_line: 6,
		content: \"\ndef parse_config(path):\n    \\\"\\\"\\\"Read the JSON configuration file at path.\\\"\\\"\\\"\n    with open(path) as f:\n\", language: \"python\"}"
'

test_expect_success 'hotspots, prime, status' '
	cd repo && call hotspots "{\"since\":\"all\"}" &&
	sc_is ".since == \"all\" and .count == (.hotspots | length) and .count >= 1 and
		(.hotspots[0] | .file == \"src/config.py\" and (.score | type) == \"number\" and .churn == 3 and .complexity > 0 and .language == \"python\")" &&
	call hotspots "{}" &&
	sc_is ".since == \"1 year ago\"" &&
	call hotspots "{\"since\":\"2 seconds ago\"}" &&
	sc_is ".since == \"2 seconds ago\" and .count == 0" &&
	call hotspots "{\"since\":\"200 years ago\"}" &&
	sc_is ".count >= 1 and .hotspots[0].churn == 3" &&
	call hotspots "{\"since\":\"2400 months ago\"}" &&
	sc_is ".count >= 1 and .hotspots[0].churn == 3" &&
	call prime "{}" &&
	sc_is "(.primer | test(\"## Architecture\")) and .initialized and (has(\"section\") | not) and
		.stats.total_files == 7 and .stats.total_chunks > 5 and .stats.total_embeddings > 0 and
		(.stats.languages | map(select(.language == \"python\"))[0] | .file_count == 4 and .chunk_count > 4) and
		(.stats.last_indexed | test(\"^20[0-9-]+T\"))" &&
	call prime "{\"section\":\"Quick Start\"}" &&
	sc_is ".section == \"quick start\" and (.primer | test(\"## Quick Start\")) and (.primer | test(\"## Architecture\") | not)" &&
	call prime "{\"brief\":true}" &&
	sc_is "(.primer | test(\"## What Bobbin Does\")) and (.primer | test(\"## Architecture\") | not)" &&
	call status "{}" &&
	sc_is ".status == \"ready\" and .total_files == 7 and .total_chunks > 5 and .total_embeddings > 0 and
		.dependency_stats.total >= 3 and .dependency_stats.resolved >= 2 and .repos == [\"repo\"] and (has(\"languages\") | not)" &&
	call status "{\"languages\":true}" &&
	sc_is ".languages | map(.language) | index(\"python\") != null"
'

test_expect_success 'impact: the combined signals and each mode alone' '
	cd repo && call impact "{\"target\":\"src/config.py\"}" &&
	sc_is ".target == \"src/config.py\" and .mode == \"combined\" and .depth == 1 and .count == (.results | length)" &&
	sc_is ".results[0] | .file == \"src/app.py\" and .signal == \"deps\" and (.score | type) == \"number\" and
		(.reason | test(\"imports the target\")) and (.reason | test(\"changed with it in 3 commits\"))" &&
	call impact "{\"target\":\"src/config.py\",\"mode\":\"coupling\"}" &&
	sc_is "[.results[] | .signal == \"coupling\"] | all and length >= 1" &&
	call impact "{\"target\":\"src/config.py:parse_config\",\"mode\":\"deps\",\"threshold\":0}" &&
	sc_is "[.results[] | .file] | sort == [\"src/app.py\", \"tests/test_config.py\"]" &&
	call impact "{\"target\":\"src/http.py\",\"mode\":\"semantic\",\"threshold\":0}" &&
	sc_is ".mode == \"semantic\" and ([.results[] | .signal == \"semantic\" and (.reason | test(\"similar code\"))] | all)"
'

test_expect_success 'review: the changed lines with their files and coupled context' '
	cd repo && echo "# reviewed" >>src/config.py && call review "{}" &&
	sc_is ".changed_files == [{path: \"src/config.py\", status: \"modified\", added_lines: 1, removed_lines: 0}] and
		(.diff_description | startswith(\"unstaged: 1 changed file\")) and .budget.max_lines == 500 and .budget.used_lines > 0" &&
	sc_is "(.files[0] | .path == \"src/config.py\" and .relevance == \"direct\") and
		([.files[] | select(.relevance == \"coupled\") | .path] | index(\"src/app.py\") != null) and .summary.direct_hits == 1" &&
	git checkout -q src/config.py && call review "{\"diff\":\"commit:HEAD~1..HEAD\",\"depth\":0}" &&
	sc_is "(.changed_files | map(.path) | sort) == [\"src/app.py\", \"src/config.py\"] and .summary.coupled_additions == 0"
'

test_expect_success 'similar: a chunk'"'"'s look-alikes, and the near-duplicate scan' '
	cd repo && call similar "{\"target\":\"src/http.py:get\",\"threshold\":0.5}" &&
	sc_is ".mode == \"target\" and .target == \"src/http.py:get\" and .threshold == 0.5 and .count >= 1 and .clusters == []" &&
	sc_is ".results[0] | .file_path == \"src/http.py\" and .name == \"post\" and .chunk_type == \"function\" and .start_line == 7 and
		(.similarity | type) == \"number\" and .similarity >= 0.5 and .language == \"python\" and (.explanation | test(\"cosine\"))" &&
	call similar "{\"scan\":true,\"threshold\":0.7}" &&
	sc_is ".mode == \"scan\" and .count == (.clusters | length) and .count >= 1 and .results == []" &&
	sc_is ".clusters[0] | .member_count == (.members | length) and .member_count >= 2 and (.avg_similarity | type) == \"number\" and
		.representative.file_path == \"src/http.py\" and ([.members[] | .name] | index(\"get\") != null and index(\"post\") != null)"
'

test_expect_success 'dependencies, file_history, commit_search' '
	cd repo && call dependencies "{\"file\":\"src/config.py\"}" &&
	sc_is ". == {file: \"src/config.py\", imports: [{path: \"json\", dep_type: \"import\", symbol: \"json\", resolved: false}]}" &&
	call dependencies "{\"file\":\"src/config.py\",\"reverse\":true}" &&
	sc_is "(has(\"imports\") | not) and ([.imported_by[] | .path] | sort) == [\"src/app.py\", \"tests/test_config.py\"] and .imported_by[0].resolved" &&
	call dependencies "{\"file\":\"src/app.py\",\"both\":true}" &&
	sc_is ".imports == [{path: \"src/config.py\", dep_type: \"import\", resolved: true}] and .imported_by == []" &&
	call file_history "{\"file\":\"src/config.py\"}" &&
	sc_is ".file == \"src/config.py\" and (.entries | length) == 3 and
		.entries[0] == {date: \"2026-05-01\", author: \"ann\", message: \"refactor: config cache\"} and
		.entries[2] == {date: \"2025-06-01\", author: \"ann\", message: \"feat: config reader (#12)\", issues: [\"#12\"]} and
		.stats.total_commits == 3 and .stats.authors == [{name: \"ann\", commits: 2}, {name: \"bob\", commits: 1}] and .stats.churn_rate > 0" &&
	call file_history "{\"file\":\"src/config.py\",\"limit\":1}" &&
	sc_is "(.entries | length) == 1 and .stats.total_commits == 3" &&
	call commit_search "{\"query\":\"retry locked config\"}" &&
	sc_is ".query == \"retry locked config\" and .count >= 1 and (.results[0] | .message == \"fix: retry reading a locked config\" and
		.author == \"bob\" and (.hash | test(\"^[0-9a-f]{40}$\")) and .date == \"2026-03-01T12:00:00Z\" and
		(.files | index(\"src/config.py\") != null) and (.score | type) == \"number\")" &&
	call commit_search "{\"query\":\"config\",\"author\":\"bob\"}" &&
	sc_is "[.results[] | .author == \"bob\"] | all and length == 1"
'

test_expect_success 'feedback: rate an injection, list, link to a fix, count' '
	cd repo && call feedback_submit "{\"injection_id\":\"inj-1\",\"rating\":\"useful\",\"reason\":\"found the reader\"}" &&
	sc_is ".id == 1 and .injection_id == \"inj-1\" and .rating == \"useful\" and .agent == \"tester\" and .reason == \"found the reader\" and
		.timestamp == \"2026-11-18T11:06:40Z\"" &&
	res_is ".content[0].text == \"Feedback recorded: useful for inj-1\"" &&
	call feedback_submit "{\"injection_id\":\"inj-2\",\"rating\":\"noise\",\"agent\":\"other\"}" &&
	sc_is ".id == 2 and .agent == \"other\"" &&
	call feedback_list "{}" &&
	sc_is ".count == 2 and [.feedback[] | .id] == [2, 1]" &&
	call feedback_list "{\"rating\":\"useful\"}" &&
	sc_is ".count == 1 and .feedback[0].injection_id == \"inj-1\"" &&
	call feedback_list "{\"agent\":\"other\",\"limit\":1}" &&
	sc_is ".count == 1 and .feedback[0].rating == \"noise\"" &&
	call feedback_lineage_store "{\"feedback_ids\":[2],\"action_type\":\"exclusion_rule\",\"description\":\"left out the noise\",\"bead\":\"bd-1\"}" &&
	sc_is ".id == 1 and .feedback_ids == [2] and .action_type == \"exclusion_rule\" and .bead == \"bd-1\" and .description == \"left out the noise\"" &&
	res_is ".content[0].text == \"Lineage #1 recorded: exclusion_rule linking 1 feedback record(s) | bead: bd-1\"" &&
	call feedback_lineage_list "{\"feedback_id\":2}" &&
	sc_is ".count == 1 and .lineage[0].bead == \"bd-1\"" &&
	call feedback_lineage_list "{\"bead\":\"bd-9\"}" &&
	sc_is ".count == 0" &&
	call feedback_stats "{}" &&
	sc_is ".total_injections == 2 and .total_feedback == 2 and .coverage == 1 and .useful == 1 and .noise == 1 and .harmful == 0 and
		.lineage_records == 1 and .actioned == 1 and .unactioned == 1" &&
	res_is ".content[0].text | startswith(\"Injections: 2\nFeedback: 2 (100% coverage)\")" &&
	call feedback_lineage_store "{\"feedback_ids\":[99],\"action_type\":\"code_fix\",\"description\":\"d\"}" &&
	res_is ".isError and (.content[0].text | test(\"no feedback record 99\"))"
'

test_expect_success 'search_beads and the archive tools' '
	cd repo && call search_beads "{\"query\":\"empty configuration file crash\"}" &&
	sc_is ".query == \"empty configuration file crash\" and .count >= 1 and (.results[0] | .bead_id == \"bd-1\" and
		.title == \"Config reader crashes on empty file\" and (.priority | type) == \"string\" and .status == \"open\" and
		.assignee == \"ann\" and (.relevance_score | type) == \"number\" and (.snippet | test(\"empty JSON\")))" &&
	call search_beads "{\"query\":\"retry\",\"status\":\"closed\",\"priority\":3}" &&
	sc_is "[.results[] | .bead_id] == [\"bd-2\"]" &&
	call archive_search "{\"query\":\"cache the parsed configuration\",\"mode\":\"keyword\"}" &&
	sc_is ".count == 1 and (.results[0] | .source == \"pensieve\" and .date == \"2026-05-02\" and (.content | test(\"cache the parsed\")))" &&
	call archive_search "{\"query\":\"cache\",\"mode\":\"keyword\",\"after\":\"2026-06-01\"}" &&
	sc_is ".count == 0" &&
	call archive_recent "{\"after\":\"2026-01-01\"}" &&
	sc_is ".after == \"2026-01-01\" and .count == 1 and .results[0].source == \"pensieve\"" &&
	mv .beads/issues.jsonl ../issues.jsonl && call search_beads "{\"query\":\"x\"}" &&
	res_is ".isError and (.content[0].text | test(\"no beads in this repository\"))" &&
	mv .bobbin/config.toml ../config.toml && call archive_recent "{\"after\":\"2026-01-01\"}" &&
	res_is ".isError and (.content[0].text | test(\"no archive sources configured\"))"
'


cat >"$TRASH_DIRECTORY/cases" <<\EOF
search	{}	missing required parameter 'query'
search	{"query":" "}	parameter 'query' must not be empty
search	{"query":"x","mode":"fuzzy"}	parameter 'mode' must be one of ["hybrid","semantic","keyword"]
search	{"query":"x","type":"widget"}	parameter 'type' must be all or one of function, method, class, struct, enum, interface, module, impl, trait, got 'widget'
search	{"query":"x","limit":0}	parameter 'limit' must be from 1 to 200, got 0
search	{"query":"x","repo":"other"}	parameter 'repo': unknown repository 'other' (known: repo)
grep	{"pattern":"(open","regex":true}	ci-grep: invalid pattern '(open': missing closing parenthesis at offset 5 (use -F for a literal string)
grep	{"pattern":"x","ignore_case":"yes"}	parameter 'ignore_case' must be true or false
context	{"query":"x","budget":5}	parameter 'budget' must be from 10 to 100000, got 5
context	{"query":"x","coupling_threshold":2}	parameter 'coupling_threshold' must be from 0 to 1, got 2
related	{"file":"../x.py"}	parameter 'file': '../x.py' is outside the repository
read_chunk	{"file":"src/config.py","start_line":1}	missing required parameter 'end_line'
read_chunk	{"file":"src/config.py","start_line":5,"end_line":2}	parameter 'end_line' (2) must not be before 'start_line' (5)
hotspots	{"threshold":1.5}	parameter 'threshold' must be from 0 to 1, got 1.5
prime	{"section":"history"}	parameter 'section': unknown section 'history' (all, what bobbin does, architecture, supported languages, key commands, mcp tools, quick start, configuration)
impact	{"target":"src/config.py","depth":4}	parameter 'depth' must be from 0 to 3, got 4
impact	{"target":"src/config.py","mode":"all"}	parameter 'mode' must be one of ["combined","coupling","semantic","deps"]
similar	{}	give one of these parameters: scan, target
search_beads	{"query":"x","priority":5}	parameter 'priority' must be from 1 to 4, got 5
feedback_submit	{"injection_id":"inj-1","rating":"great"}	parameter 'rating' must be one of ["useful","noise","harmful"]
feedback_submit	{"injection_id":" ","rating":"useful"}	parameter 'injection_id' must not be empty
feedback_list	{"limit":51}	parameter 'limit' must be from 1 to 50, got 51
feedback_lineage_store	{"feedback_ids":[],"action_type":"code_fix","description":"d"}	parameter 'feedback_ids' must not be empty
feedback_lineage_store	{"feedback_ids":[1],"action_type":"rewrite","description":"d"}	parameter 'action_type' must be one of ["code_fix","config_change","tag_effect","access_rule","exclusion_rule"]
feedback_lineage_store	{"feedback_ids":["a"],"action_type":"code_fix","description":"d"}	parameter 'feedback_ids[0]' must be an integer
archive_search	{"query":"x","after":"May 2026"}	parameter 'after' must match ^[0-9]{4}-[0-9]{2}-[0-9]{2}$, got 'May 2026'
archive_recent	{}	missing required parameter 'after'
status	{"verbose":true}	unknown parameter 'verbose'
EOF

test_expect_success 'every invalid argument is an MCP tool error naming the parameter' '
	cd repo && : >../x.py &&
	test_mcp_errors bobbin "$TRASH_DIRECTORY/cases"
'

if command -v node >/dev/null 2>&1 && test -f "$NODE_MODULES/@modelcontextprotocol/sdk/package.json"; then
	test_expect_success 'the TypeScript SDK client: answers fit the outputSchemas' '
		cd repo && mv ../issues.jsonl .beads/ && mv ../config.toml .bobbin/ && echo "# sdk" >>src/app.py && cat >../cases.json <<-\EOF &&
	[
	["search", {"query": "configuration"}, {"mode": "hybrid"}],
	["review", {}, "ok"],
	["search_beads", {"query": "retry"}, {"query": "retry"}],
	["archive_search", {"query": "cache", "mode": "keyword"}, {"count": 1}],
	["archive_recent", {"after": "2026-01-01"}, {"count": 1}],
	["feedback_submit", {"injection_id": "inj-1", "rating": "harmful"}, {"rating": "harmful"}],
	["feedback_lineage_store", {"feedback_ids": [1], "action_type": "code_fix", "description": "sdk"}, {"action_type": "code_fix"}],
	["grep", {"pattern": "parse_config"}, {"pattern": "parse_config"}],
	["context", {"query": "configuration", "depth": 0}, "ok"],
	["related", {"file": "src/config.py"}, {"file": "src/config.py"}],
	["find_refs", {"symbol": "Config"}, {"symbol": "Config"}],
	["list_symbols", {"file": "src/http.py"}, {"count": 2}],
	["read_chunk", {"file": "src/http.py", "start_line": 1, "end_line": 2}, {"actual_end_line": 2}],
	["hotspots", {"since": "all"}, {"since": "all"}],
	["prime", {"brief": true}, {"initialized": true}],
	["impact", {"target": "src/config.py"}, {"mode": "combined"}],
	["similar", {"target": "send a request"}, {"mode": "target"}],
	["dependencies", {"file": "src/app.py"}, {"file": "src/app.py"}],
	["file_history", {"file": "src/app.py"}, {"file": "src/app.py"}],
	["status", {}, {"status": "ready"}],
	["commit_search", {"query": "cache"}, {"query": "cache"}],
	["feedback_stats", {}, "ok"],
	["feedback_list", {}, "ok"],
	["feedback_lineage_list", {}, "ok"],
	["search", {"query": "x", "mode": "fuzzy"}, "isError"]
]
	EOF
		node "$CI_SRC_DIR/tests/mcp-sdk-profile.mjs" "$NODE_MODULES" "$CI_BUILD_DIR/ci-mcp" bobbin ../cases.json >../sdk.out &&
		test_line_count = "$(jq length ../cases.json)" ../sdk.out
	'
else
	test_skip 'the TypeScript SDK client' "no node or no @modelcontextprotocol/sdk in $NODE_MODULES (scripts/setup installs them)"
fi

test_done
