#!/bin/sh
# t0555-style-config-once: ci style-guide reads a linter's configuration file
# once.  The rules of pyproject.toml's [tool.*] tables carry the line where
# each key is set; that line was found by reading the file again for every key
# (a file of 200 settings was read 201 times).  Now the TOML parser and the
# key lines share one read: strace counts the opens.

. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a project configured in pyproject.toml' '
	mkdir sg && (cd sg && git init -q) &&
	printf "%s\n" "[project]" "name = \"x\"" "" "[tool.ruff]" "line-length = 99" \
		"target-version = \"py38\"" "" "[tool.ruff.lint]" "select = [\"E\", \"F\"]" "" \
		"[tool.black]" "skip-string-normalization = true" >sg/pyproject.toml &&
	printf "%s\n" "{" "  \"rules\": {" "    \"semi\": \"error\"," "    \"quotes\": [\"error\", \"double\"]" \
		"  }" "}" >sg/.eslintrc.json
'

test_expect_success 'the rules of pyproject.toml and .eslintrc.json, each at the line of its key' '
	(cd sg && ci style-guide --json) >out &&
	jq -r "select(.file == \"pyproject.toml\" or .file == \".eslintrc.json\") | \"\(.file):\(.line): \(.rule)\"" out |
		sort >actual &&
	sort >expect <<-\EOF &&
	pyproject.toml:5: line-length = 99
	pyproject.toml:6: target-version = "py38"
	pyproject.toml:9: lint.select = ["E","F"]
	pyproject.toml:12: skip-string-normalization = true
	.eslintrc.json:3: rules.semi = "error"
	.eslintrc.json:4: rules.quotes = ["error","double"]
	EOF
	test_cmp expect actual
'

if test_have_prog strace && strace -o /dev/null true 2>/dev/null; then
	test_expect_success 'pyproject.toml and .eslintrc.json are opened once each' '
		(cd sg && ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=open,openat -o ../trace \
			ci style-guide --json >/dev/null) &&
		grep -c "pyproject\.toml\"" trace >n &&
		echo 1 >expect && test_cmp expect n &&
		grep -c "eslintrc\.json\"" trace >n &&
		test_cmp expect n
	'
else
	test_skip 'pyproject.toml is opened once' 'strace cannot run here'
fi

test_done
