#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# README.md is where a person decides whether adbc fits, and it goes stale as
# the project grows. This keeps it whole: every document in docs/, every
# folder of lib/ and tools/, every benchmark script and every front end's
# main command is named in it, and the two commands it opens with exist.
. "$(dirname "$0")/lib.sh"
t_init
cd "$ADBC_SOURCE_DIR"
readme=README.md
[ -f "$readme" ] || t_fail "no README.md in $ADBC_SOURCE_DIR"

# The text of one "## Heading" section (up to the next "## ").
section()
{
    awk -v h="## $1" '$0 == h { on = 1; next } /^## / { on = 0 } on' "$readme"
}

t_check "README opens with the two commands for a fresh machine, and both exist"
first=$(grep -m2 -E '^\./scripts/[a-z-]+' "$readme" | awk '{print $1}' | tr '\n' ' ')
[ "$first" = "./scripts/quickstart ./scripts/test " ] ||
    t_fail "README's first two commands are '$first', expected ./scripts/quickstart and ./scripts/test"
for s in scripts/quickstart scripts/test; do
    [ -x "$s" ] || t_fail "$s is named in README but is not an executable script"
done

t_check "every document in docs/ is linked from README with a line saying what it answers"
docs=$(section Documentation)
[ -n "$docs" ] || t_fail "README has no '## Documentation' section"
missing=
n=0
for f in docs/*.md docs/openapi.yaml; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    # A link, and words beside it: "[docs/x.md](docs/x.md): what it answers".
    line=$(grep -F "($f)" <<<"$docs" | head -n1)
    if [ -z "$line" ]; then
        missing="$missing $f"
        continue
    fi
    rest=${line#*"($f)"}
    [ "$(tr -cd 'a-zA-Z' <<<"$rest" | wc -c)" -ge 12 ] || missing="$missing $f(no-description)"
done
[ "$n" -ge 20 ] || t_fail "only $n documents found in docs/: the listing is broken"
[ -z "$missing" ] || t_fail "documents not linked from README's Documentation section:$missing"

t_check "the Layout section names every folder of lib/ and tools/ with its purpose"
layout=$(section Layout)
[ -n "$layout" ] || t_fail "README has no '## Layout' section"
missing=
for d in lib/*/ tools/*/; do
    d=${d%/}
    grep -qE "\`$d/?\`.*[a-z]{4}" <<<"$layout" || missing="$missing $d"
done
[ -z "$missing" ] || t_fail "folders not named (as \`lib/x\` with a purpose) in README's Layout:$missing"

t_check "the Benchmarks section lists every benchmark script"
bench=$(section Benchmarks)
[ -n "$bench" ] || t_fail "README has no '## Benchmarks' section"
missing=
for s in scripts/bench-*; do
    grep -qF "$s" <<<"$bench" || missing="$missing $s"
done
[ -z "$missing" ] || t_fail "benchmark scripts missing from README's Benchmarks:$missing"

t_check "every front end's main command is shown"
missing=
# adbc-snap's commands with a section of their own in README, and the other
# front ends by name; each must appear as a command a person can type.
for cmd in "adbc-snap devices" "adbc-snap snapshot" "adbc-snap tap" "adbc-snap agent" \
    "adbc-snap session start" "adbc-snap snapshot --web" "adbc-mcp" "adbc-serve"; do
    grep -qE "^(\\\$ )?$cmd( |\$)" <<<"$(sed -n '/^```/,/^```/p' "$readme")" || missing="$missing '$cmd'"
done
for d in tools/*/; do
    d=$(basename "$d")
    [ "$d" = ops ] && continue
    grep -q "$d" "$readme" || missing="$missing $d"
done
[ -z "$missing" ] || t_fail "front-end commands not shown in a README code block:$missing"

t_check "every script README names exists"
missing=
for s in $(grep -oE '(\./)?scripts/[a-z0-9-]+' "$readme" | sed 's#^\./##' | sort -u); do
    [ -e "$s" ] || missing="$missing $s"
done
for s in $(grep -oE 'docs/[A-Za-z0-9_.-]+\.(md|png|yaml)' "$readme" | sort -u); do
    [ -e "$s" ] || missing="$missing $s"
done
[ -z "$missing" ] || t_fail "README names files that do not exist:$missing"
echo "readme: $n documents, $(ls -d lib/*/ tools/*/ | wc -l) folders, $(ls scripts/bench-* | wc -l) benchmarks named"
