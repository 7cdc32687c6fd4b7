#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The man pages (scdoc sources in docs/man/) render with `man -l` without
# warnings and name every adbc-snap command; `cmake --install` puts them
# under share/man/man1 where `man` finds them, and the bash and zsh
# completions where those shells look; the bash completion completes
# commands, each command's options and local files.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_init
SNAP=${ADBC_SNAP:-$ADBC_BUILD_DIR/tools/adbc-snap}
[ -x "$SNAP" ] || t_fail "adbc-snap not built: $SNAP"
MAN_SRC=$ADBC_SOURCE_DIR/docs/man
MAN_OUT=$ADBC_BUILD_DIR/docs/man
command -v man > /dev/null || t_fail "man not installed (Debian: apt install man-db)"

if ! t_built SCDOC; then
    # scdoc is optional for a build, never in CI.
    [ -z "${CI:-}" ] || t_fail "man pages not built in CI: is scdoc installed (scripts/packages.txt)?"
    echo "man pages not built (no scdoc): man page checks skipped"
    MAN_BUILT=
else
    MAN_BUILT=1
fi

if [ -n "$MAN_BUILT" ]; then
    for page in adbc-snap adbc-mcp adbc-serve; do
        t_check "man -l renders $page.1 without warnings"
        MANWIDTH=80 man --warnings -l "$MAN_OUT/$page.1" > "$T_TMP/$page.txt" 2> "$T_TMP/$page.err" ||
            t_fail "man -l $page.1 failed: $(cat "$T_TMP/$page.err")"
        [ ! -s "$T_TMP/$page.err" ] || t_fail "man -l $page.1 warned: $(head -n 5 "$T_TMP/$page.err")"
        grep -q "^NAME" "$T_TMP/$page.txt" && grep -q "$page - " "$T_TMP/$page.txt" ||
            t_fail "$page.1 has no NAME section: $(head -n 10 "$T_TMP/$page.txt")"
        grep -q "^SYNOPSIS" "$T_TMP/$page.txt" || t_fail "$page.1 has no SYNOPSIS"
    done
fi

t_check "adbc-snap(1) names every command of the dispatch tables"
cmds=$("$SNAP" help --commands) || t_fail "help --commands"
for c in $cmds; do
    grep -q -- "\*$c\*" "$MAN_SRC/adbc-snap.1.scd" ||
        t_fail "docs/man/adbc-snap.1.scd does not describe '$c' (add it under COMMANDS)"
done
if [ -n "$MAN_BUILT" ]; then
    for c in $cmds; do
        grep -qw -- "$c" "$T_TMP/adbc-snap.txt" || t_fail "rendered adbc-snap.1 lacks '$c'"
    done
fi

SERVE=$ADBC_BUILD_DIR/tools/adbc-serve
if t_built SERVE; then
    t_check "adbc-serve(1) describes every option adbc-serve --help lists"
    opts=$("$SERVE" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
    [ -n "$opts" ] || t_fail "adbc-serve --help lists no options"
    for o in $opts; do
        grep -q -- "\*$o\*" "$MAN_SRC/adbc-serve.1.scd" ||
            t_fail "docs/man/adbc-serve.1.scd does not describe $o (add it under OPTIONS)"
    done
fi

t_check "cmake --install: man pages under share/man/man1, completions for bash and zsh"
prefix=$T_TMP/prefix
cmake --install "$ADBC_BUILD_DIR" --prefix "$prefix" > "$T_TMP/install.log" 2>&1 ||
    t_fail "cmake --install failed: $(tail -n 20 "$T_TMP/install.log")"
bash_c=$prefix/share/bash-completion/completions/adbc-snap
zsh_c=$prefix/share/zsh/site-functions/_adbc-snap
[ -f "$bash_c" ] || t_fail "no $bash_c: $(grep -i complet "$T_TMP/install.log")"
[ -f "$zsh_c" ] || t_fail "no $zsh_c"
if [ -n "$MAN_BUILT" ]; then
    mandir=$(find "$prefix" -path '*/man1/adbc-snap.1' -printf '%h\n' | head -n 1)
    [ "$mandir" = "$prefix/share/man/man1" ] || t_fail "adbc-snap.1 installed in '$mandir'"
    [ -f "$mandir/adbc-mcp.1" ] || t_fail "adbc-mcp.1 not installed"
    [ -f "$mandir/adbc-serve.1" ] || t_fail "adbc-serve.1 not installed"
    t_check "man adbc-snap finds the installed page (MANPATH=PREFIX/share/man)"
    MANWIDTH=80 MANPATH=$prefix/share/man man adbc-snap > "$T_TMP/installed.txt" 2> "$T_TMP/installed.err" ||
        t_fail "man adbc-snap failed: $(cat "$T_TMP/installed.err")"
    grep -q "adbc-snap - talk to Android devices" "$T_TMP/installed.txt" ||
        t_fail "man adbc-snap showed: $(head -n 5 "$T_TMP/installed.txt")"
fi

t_check "bash completion: commands, a command's options, local files"
# C WORDS...: complete the last word of the line, as bash would; COMPREPLY
# one a line in $T_TMP/c.
C()
{
    PATH=$(dirname "$SNAP"):$PATH bash -c '
        . "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _adbc_snap
        printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_c" "$@" > "$T_TMP/c" 2> "$T_TMP/c.err" ||
        t_fail "completion failed: $(cat "$T_TMP/c.err")"
    [ ! -s "$T_TMP/c.err" ] || t_fail "completion wrote to stderr: $(cat "$T_TMP/c.err")"
}
C adbc-snap pu
[ "$(sort "$T_TMP/c" | tr '\n' ' ')" = "pull push " ] || t_fail "'pu' completed to: $(cat "$T_TMP/c")"
C adbc-snap -t 127.0.0.1:5555 --timeout 3 wait-
[ "$(sort "$T_TMP/c" | tr '\n' ' ')" = "wait-for-device wait-stable wait-state wait-text " ] ||
    t_fail "'wait-' after global options completed to: $(cat "$T_TMP/c")"
C adbc-snap push --
grep -qx -- --json "$T_TMP/c" && grep -qx -- --help "$T_TMP/c" || t_fail "push options: $(cat "$T_TMP/c")"
C adbc-snap shell -
grep -qx -- -n "$T_TMP/c" && grep -qx -- --json "$T_TMP/c" || t_fail "shell options: $(cat "$T_TMP/c")"
C adbc-snap -
grep -qx -- --timeout "$T_TMP/c" || t_fail "global options: $(cat "$T_TMP/c")"
touch "$T_TMP/some-local-file"
C adbc-snap push "$T_TMP/some-local"
grep -qx -- "$T_TMP/some-local-file" "$T_TMP/c" || t_fail "push did not complete a local file: $(cat "$T_TMP/c")"
C adbc-snap help get-
[ "$(sort "$T_TMP/c" | tr '\n' ' ')" = "get-serialno get-state " ] || t_fail "help get-: $(cat "$T_TMP/c")"

if command -v zsh > /dev/null; then
    t_check "zsh completion parses, defines _adbc-snap and is marked #compdef adbc-snap"
    zsh -n "$zsh_c" 2> "$T_TMP/z.err" || t_fail "zsh -n: $(cat "$T_TMP/z.err")"
    head -n 1 "$zsh_c" | grep -qx '#compdef adbc-snap' || t_fail "first line: $(head -n 1 "$zsh_c")"
    zsh -fc "autoload -U compinit; compinit -u -D; fpath=($(dirname "$zsh_c") \$fpath); autoload -U +X _adbc-snap && whence -w _adbc-snap" > "$T_TMP/z.out" 2>&1 ||
        t_fail "zsh could not load _adbc-snap: $(cat "$T_TMP/z.out")"
    grep -q "_adbc-snap: function" "$T_TMP/z.out" || t_fail "zsh: $(cat "$T_TMP/z.out")"
else
    [ -z "${CI:-}" ] || t_fail "zsh not installed in CI (scripts/packages.txt)"
    echo "zsh not installed: zsh completion only installed, not loaded"
fi

echo "ok: $T_CHECKS checks"
