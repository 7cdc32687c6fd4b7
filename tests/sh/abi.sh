#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The ABI as docs/abi.md states it, checked on the built libraries:
#  - libadbc.so exports exactly the functions include/adbc/ declares with
#    ADBC_API (no internal symbol leaks out; no declared one is missing),
#    each under the ADBC_0.x version node;
#  - libadbc.a defines no global symbol that the headers do not declare
#    (internal ones were made local), so a program's own sync_umask() or
#    ui_parse() can never be called from inside adbc;
#  - every public struct says who fills it in, and every struct a caller
#    fills in starts with `size_t size` (the size rule of docs/abi.md).
. "$(dirname "$0")/lib.sh"
t_init
src=$ADBC_SOURCE_DIR
so=$ADBC_BUILD_DIR/libadbc.so
ar=$ADBC_BUILD_DIR/libadbc.a

declared=$T_TMP/declared
perl -0ne 'while (/ADBC_API[^;{(]*?\b(adbc_\w+)\s*\(/g) { print "$1\n" }' \
    "$src"/include/adbc/*.h | sort -u >"$declared"
t_check "the headers declare public functions with ADBC_API"
n=$(wc -l <"$declared")
[ "$n" -gt 150 ] || t_fail "only $n ADBC_API declarations found: the header scan is broken"

if [ -e "$so" ]; then
    exported=$T_TMP/exported
    nm -D --defined-only "$so" | awk '$2 ~ /^[TWi]$/ {print $3}' | sed 's/@.*//' | sort -u >"$exported"
    t_check "libadbc.so exports nothing the headers do not declare"
    extra=$(comm -13 "$declared" "$exported")
    [ -z "$extra" ] || t_fail "exported but not declared with ADBC_API in include/adbc/: $(echo $extra)"
    t_check "libadbc.so exports every function the headers declare"
    missing=$(comm -23 "$declared" "$exported")
    [ -z "$missing" ] || t_fail "declared with ADBC_API but not exported (no definition, or hidden): $(echo $missing)"
    t_check "no exported data symbols beyond the version node"
    data=$(nm -D --defined-only "$so" | awk '$2 !~ /^[TWiA]$/ {print $3}')
    [ -z "$data" ] || t_fail "exported data: $(echo $data)"
    t_check "every export carries the ADBC_0.x version"
    unversioned=$(objdump -T "$so" | awk '$0 ~ /\.text/ && $0 !~ /ADBC_0\./')
    [ -z "$unversioned" ] || t_fail "exports without the ADBC_0.x version: $unversioned"
else
    t_log "no $so (BUILD_SHARED_LIBS=OFF): shared-library checks skipped"
fi

t_check "libadbc.a defines no global symbol outside the declared API"
globals=$(nm -g --defined-only "$ar" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u | comm -23 - "$declared")
[ -z "$globals" ] || t_fail "libadbc.a leaks internal symbols: $(echo $globals | head -c 600)"

t_check "every public struct has an abi tag, and every caller-filled one starts with size_t size"
out=$(perl -0ne '
    while (/(\/\*(?:(?!\*\/).)*?\babi:\s*(\w+)(?:(?!\*\/).)*\*\/\s*\n)?(?:typedef )?struct (adbc_\w+) \{\s*([^;]*;)/gs) {
        my ($tag, $name, $first) = ($2, $3, $4);
        if (!defined $tag) { print "$ARGV: $name has no /* abi: in|out|fixed */ tag\n"; next }
        if ($tag eq "in" && $first !~ /^size_t\s+size\s*;/) {
            print "$ARGV: $name is filled in by callers but does not start with size_t size\n";
        }
        if ($tag !~ /^(in|out|fixed)$/) { print "$ARGV: $name: unknown abi tag $tag\n" }
    }' "$src"/include/adbc/*.h)
[ -z "$out" ] || t_fail "$out"
t_check "out-parameters come first in every public function (adbc.h's convention)"
# An out-parameter is one named out/out_*/inout or a T ** that is not an
# input array (const char *const *); once a parameter that is not one has
# been seen, none may follow. A read-style call (adbc_stream_read) fills a
# void * buffer and is not caught by this.
out=$(perl -0ne 'while (/ADBC_API[^;{(]*?\b(adbc_\w+)\s*\(([^)]*)\)/g) {
        my ($fn, $p) = ($1, $2); $p =~ s/\s+/ /g; my $in = 0;
        for my $x (split /,/, $p) {
            my $o = ($x =~ /\*\*\s*\w+\s*$/ && $x !~ /const\s*\*\s*const/)
                    || $x =~ /\b(out\w*|inout)\s*(\[[^]]*\])?\s*$/;
            if ($o && $in) { print "$ARGV: $fn($p)\n"; last }
            $in = 1 unless $o;
        } }' "$src"/include/adbc/*.h)
[ -z "$out" ] || t_fail "an out-parameter after an input: $out"

t_check "byte counts that may carry an error are ssize_t, never long"
out=$(grep -n 'ADBC_API \(unsigned \)\?long\b' "$src"/include/adbc/*.h)
[ -z "$out" ] || t_fail "a public function returns long: $out"

t_check "every header names adbc_free or a specific free for what it hands out"
# Results are freed through adbc's allocator: a header that tells callers
# to use free() or calls a result malloc'd is out of date.
out=$(grep -n "malloc'd\|[^_]free()\|with free\b" "$src"/include/adbc/*.h)
[ -z "$out" ] || t_fail "a header still says malloc'd / free(): $out"
grep -q 'ADBC_API void adbc_free(void \*p)' "$src"/include/adbc/alloc.h ||
    t_fail "include/adbc/alloc.h does not declare adbc_free"
echo "abi: $n functions declared; 0 leaks"
