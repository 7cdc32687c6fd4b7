#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every source file of adbc (code, scripts, build files, the test device's
# stand-ins) names its license on an SPDX line near the top; data (recorded
# dumps, fuzz corpora, docs) is covered by LICENSE at the root.
. "$(dirname "$0")/lib.sh"
t_init
cd "$ADBC_SOURCE_DIR"
t_check "LICENSE is the Apache License 2.0"
grep -q "Apache License" LICENSE && grep -q "Version 2.0, January 2004" LICENSE || t_fail "LICENSE is not Apache-2.0"
t_check "every source file has an SPDX-License-Identifier line in its first 3 lines"
if git rev-parse --git-dir >/dev/null 2>&1; then
    list=$(git ls-files)
else
    list=$(find . -type f -not -path './build*' -not -path './.git/*' | sed 's#^\./##')
fi
missing=
n=0
while IFS= read -r f; do
    case "$f" in
    fixtures/snapshot/* | fixtures/fuzz/* | *.md | *.json | *.txt | *.tsv | *.xml | scripts/build-options | LICENSE | NOTICE | .gitignore) continue ;;
    esac
    [ -f "$f" ] || continue
    if head -c2 "$f" | grep -q '#!' || [[ "$f" =~ \.(c|h|sh|py|mjs|js|cmake|in)$|CMakeLists\.txt$|Makefile$ ]]; then
        n=$((n + 1))
        head -n 3 "$f" | grep -q "SPDX-License-Identifier: Apache-2.0" || missing="$missing $f"
    fi
done <<<"$list"
[ "$n" -gt 300 ] || t_fail "only $n source files found: the listing is broken"
[ -z "$missing" ] || t_fail "no SPDX-License-Identifier: Apache-2.0 line:$missing"
echo "license: $n source files carry the SPDX line"
