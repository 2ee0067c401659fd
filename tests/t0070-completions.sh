#!/bin/sh
# t0070-completions: the shell completions that make writes from the commands'
# option tables (scripts/gen-completions, completions/ in the build tree).
#
# Every command prints its long options with --list-options, each of them named in
# its usage; every option of every command (and of each ci subcommand, and those a
# usage names for a subcommand: ci-index build --rev) is in the bash, zsh and fish
# files; bash's completion function answers options, subcommands and nested ci
# subcommands, and leaves an option's value to files; zsh's and fish's the same
# where the shell is installed; the install rules put the files where bash-completion,
# zsh and fish look (DESTDIR), and the uninstall rules take them away.

. "$(dirname "$0")/lib.sh"

# The programs of bin_PROGRAMS.
commands=$(ci_commands)
commands=$(echo $commands)
comp=$CI_BUILD_DIR/completions

test_expect_success 'Makefile.am lists the commands' '
	test -n "$commands"
'

for cmd in $commands; do

test_expect_success "$cmd --list-options: its long options, one a line, each in its usage" '
	$cmd --list-options >opts 2>err &&
	test_must_be_empty err &&
	test_grep -x -- --help opts &&
	test_grep -x -- --version opts &&
	! grep -vE "^--[a-z0-9][a-z0-9-]*=?\$" opts &&
	$cmd -h | grep -o -- "--[a-z][a-z0-9-]*" | sort -u >usage-opts &&
	sed "s/=\$//" opts | sort -u >table-opts &&
	comm -13 usage-opts table-opts >undocumented &&
	test_must_be_empty undocumented &&
	cp opts "$TEST_TMP/$cmd.opts" &&
	cp usage-opts "$TEST_TMP/$cmd.usage-opts"
'

test_expect_success "$cmd: every option of its table and its usage is completed in bash, zsh and fish" '
	sed "s/=\$//" "$TEST_TMP/$cmd.opts" | cat - "$TEST_TMP/$cmd.usage-opts" | sort -u >want &&
	for f in ci.bash _ci ci.fish; do
		grep -o -- "--[a-z][a-z0-9-]*" "$comp/$f" | sort -u >have &&
		comm -23 want have >missing &&
		{ test_must_be_empty missing || { echo "missing from $f"; return 1; }; } || return 1
	done
'

done

test_expect_code 2 '--list-options with another argument is an unknown option' '
	ci-chunk --list-options --chunks
'

test_expect_success 'ci <subcommand> --list-options: the flags of its table' '
	ci search --list-options >out &&
	test_grep -x -- --query= out &&
	test_grep -x -- --snippets out &&
	ci feedback lineage store --list-options >out &&
	test_grep -x -- --feedback-ids= out &&
	ci memory add --list-options >out &&
	test_grep -x -- --memory= out &&
	ci grep --list-options >out &&
	test_cmp "$TEST_TMP/ci-grep.opts" out
'

test_expect_success 'scripts/gen-completions writes what make wrote' '
	$SHELL "$CI_SRC_DIR/scripts/gen-completions" "$CI_BUILD_DIR" gen $commands &&
	for f in ci.bash _ci ci.fish; do
		test_cmp "$comp/$f" "gen/$f" || return 1
	done
'

test_expect_code 1 'scripts/gen-completions: a command that is not built is an error' '
	$SHELL "$CI_SRC_DIR/scripts/gen-completions" "$CI_BUILD_DIR" gen ci-chunk ci-nonesuch
'

# ---- bash ----------------------------------------------------------------------

# bash_complete <word>...: COMPREPLY, one a line, of completing the last word
cat >"$TEST_TMP/bash-complete" <<EOF
. "$comp/ci.bash" || exit 1
COMP_WORDS=("\$@")
COMP_CWORD=\$((\$# - 1))
COMPREPLY=(x)
_ci
printf '%s\n' "\${COMPREPLY[@]}"
EOF
bash_complete() {
	bash "$TEST_TMP/bash-complete" "$@"
}

if test_have_prog bash; then

test_expect_success 'bash: every command has the completion function' '
	bash -c ". \"$comp/ci.bash\" && complete -p $commands" >out &&
	test_line_count = $(echo $commands | wc -w) out &&
	! grep -v -- "-F _ci " out
'

test_expect_success 'bash: an option of the command' '
	bash_complete ci-chunk --ch >out &&
	echo --chunks >expect &&
	test_cmp expect out &&
	bash_complete ci-grep --files-with- >out &&
	echo --files-with-matches >expect &&
	test_cmp expect out
'

test_expect_success 'bash: an option that takes a value ends in =' '
	bash_complete ci-chunk --files >out &&
	echo --files-from= >expect &&
	test_cmp expect out
'

test_expect_success 'bash: the subcommands, after options and their values' '
	bash_complete ci-index --index db "" >out &&
	printf "%s\n" build check drop load serve status update >expect &&
	test_cmp expect out &&
	bash_complete ci-couple --since=2w co >out &&
	printf "%s\n" commits coupling >expect &&
	test_cmp expect out
'

test_expect_success 'bash: a subcommand options of its own (ci-index build --rev)' '
	bash_complete ci-index build --re >out &&
	echo --rev= >expect &&
	test_cmp expect out
'

test_expect_success 'bash: no subcommand after one, or after an argument' '
	bash_complete ci-index build "" >out &&
	echo >expect &&
	test_cmp expect out &&
	bash_complete ci-refs defs name "" >out &&
	test_cmp expect out
'

test_expect_success 'bash: the value of an option is left to files (complete -o default)' '
	bash_complete ci-chunk --files-from "" >out &&
	echo >expect &&
	test_cmp expect out &&
	bash_complete ci-chunk --files-from = "" >out &&
	test_cmp expect out
'

test_expect_success 'bash: ci: its subcommands, those it runs among them' '
	bash_complete ci "" >out &&
	for s in search status reindex refs cycles memory metadata feedback grep index rank refs-raw mcp; do
		test_grep -x "$s" out || return 1
	done
'

test_expect_success 'bash: ci: nested subcommands and their flags' '
	bash_complete ci feedback "" >out &&
	printf "%s\n" lineage list stats submit >expect &&
	test_cmp expect out &&
	bash_complete ci feedback lineage "" >out &&
	printf "%s\n" list store >expect &&
	test_cmp expect out &&
	bash_complete ci feedback lineage store --fe >out &&
	echo --feedback-ids= >expect &&
	test_cmp expect out &&
	bash_complete ci search --sn >out &&
	echo --snippets >expect &&
	test_cmp expect out
'

test_expect_success 'bash: ci grep and ci index complete as ci-grep and ci-index' '
	bash_complete ci grep --files-with- >out &&
	echo --files-with-matches >expect &&
	test_cmp expect out &&
	bash_complete ci index st >out &&
	printf "%s\n" status >expect &&
	test_cmp expect out
'

test_expect_success 'bash: a path to the command is its name' '
	bash_complete "$CI_BUILD_DIR/ci-mcp" --prof >out &&
	echo --profile= >expect &&
	test_cmp expect out
'

else
	test_skip 'bash completion' 'bash is not installed'
fi

# ---- zsh -----------------------------------------------------------------------

if test_have_prog zsh; then

# zsh_complete <word>...: what _ci hands compadd and _files, with the completion
# builtins replaced by functions that print their arguments
cat >"$TEST_TMP/zsh-complete" <<EOF
compadd() { [[ \$1 == -S ]] && shift 2; [[ \$1 == -- ]] && shift; print -r -- "compadd \$*"; }
_files() { print -r -- _files; }
compset() { :; }
words=("\$@")
CURRENT=\$#
. "$comp/_ci"
EOF
zsh_complete() {
	zsh -f "$TEST_TMP/zsh-complete" "$@"
}

test_expect_success 'zsh: _ci parses, and names every command' '
	zsh -n "$comp/_ci" &&
	head -n 1 "$comp/_ci" >first &&
	echo "#compdef $commands" >expect &&
	test_cmp expect first
'

test_expect_success 'zsh: options (those taking a value without a space), subcommands, files' '
	zsh_complete ci-chunk --ch >out &&
	test_grep "^compadd .*--chunks" out &&
	test_grep "^compadd .*--files-from=" out &&
	zsh_complete ci feedback lineage "" >out &&
	echo "compadd list store" >expect &&
	test_cmp expect out &&
	zsh_complete ci-chunk --files-from "" >out &&
	echo _files >expect &&
	test_cmp expect out
'

else
	test_skip 'zsh completion' 'zsh is not installed'
fi

# ---- fish ----------------------------------------------------------------------

if test_have_prog fish; then

test_expect_success 'fish: ci.fish parses' '
	fish -n "$comp/ci.fish"
'

test_expect_success 'fish: options, subcommands, nested ci subcommands' '
	fish --no-config -c "source $comp/ci.fish; complete -C \"ci-chunk --ch\"" >out &&
	echo --chunks >expect &&
	test_cmp expect out &&
	fish --no-config -c "source $comp/ci.fish; complete -C \"ci-index --index db bu\"" >out &&
	echo build >expect &&
	test_cmp expect out &&
	fish --no-config -c "source $comp/ci.fish; complete -C \"ci feedback lineage st\"" >out &&
	echo store >expect &&
	test_cmp expect out
'

else
	test_skip 'fish completion' 'fish is not installed'
fi

# ---- install -------------------------------------------------------------------

# mk <target>...: make in the build tree, on its own (not the make check's jobs)
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$CI_BUILD_DIR" "$@"
}

if test -f "$CI_BUILD_DIR/Makefile" && test_have_prog make; then

test_expect_success 'make install puts each command'\''s completion where bash, zsh and fish look' '
	dest=$TRASH_DIRECTORY/dest &&
	mk --eval="print-dirs: ; @echo \$(bashcompdir) \$(zshcompdir) \$(fishcompdir)" print-dirs >dirs &&
	read bashdir zshdir fishdir <dirs &&
	mk DESTDIR="$dest" install-zshcompDATA install-data-hook >out 2>&1 &&
	case $bashdir in */share/bash-completion/completions) ;; *) false ;; esac &&
	case $fishdir in */share/fish/vendor_completions.d) ;; *) false ;; esac &&
	case $zshdir in */share/zsh/site-functions) ;; *) false ;; esac &&
	test_cmp "$comp/_ci" "$dest$zshdir/_ci" &&
	for c in $commands; do
		test_cmp "$comp/ci.bash" "$dest$bashdir/$c" &&
		test_cmp "$comp/ci.fish" "$dest$fishdir/$c.fish" || return 1
	done
'

test_expect_success 'make uninstall takes them away' '
	mk DESTDIR="$dest" uninstall-zshcompDATA uninstall-hook >out 2>&1 &&
	find "$dest" -type f >left &&
	test_must_be_empty left
'

else
	test_skip 'make install of the completions' 'no Makefile in the build tree'
fi

test_done
