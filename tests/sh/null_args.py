#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a C program that calls every public function (every ADBC_API
declaration in include/adbc/) with NULL for each pointer and 0 for each
number, each call in a child process of its own, and prints the functions
whose call crashed or hung. Used by tests/sh/null_args.sh.

  null_args.py SOURCE_DIR > calls.c
"""
import re
import subprocess
import sys

src = sys.argv[1]
headers = sorted(subprocess.run(['sh', '-c', 'ls %s/include/adbc/*.h' % src],
                                capture_output=True, text=True, check=True).stdout.split())
declared = set()
for h in headers:
    for m in re.finditer(r'ADBC_API[^;{(]*?\b(adbc_\w+)\s*\(', open(h).read()):
        declared.add(m.group(1))
includes = ''.join('#include "adbc/%s"\n' % h.rsplit('/', 1)[1] for h in headers)
pre = subprocess.run(['cc', '-E', '-P', '-I', src + '/include', '-'], input=includes,
                     capture_output=True, text=True, check=True).stdout
protos = {}
for m in re.finditer(r'\b(adbc_\w+)\s*\(([^;{}]*?)\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*;', pre, re.S):
    if m.group(1) in declared:
        protos[m.group(1)] = m.group(2).strip()
missing = sorted(declared - set(protos))
if missing:
    sys.exit('null_args.py: prototypes not understood: ' + ' '.join(missing))


def split_params(params):
    parts, cur, depth = [], '', 0
    for ch in params:
        if ch == ',' and depth == 0:
            parts.append(cur)
            cur = ''
            continue
        depth += ch == '('
        depth -= ch == ')'
        cur += ch
    return [p.strip() for p in parts + [cur] if p.strip() and p.strip() not in ('void', '...')]


names = sorted(protos)
out = [includes, '#include <stddef.h>', '', 'void call(int i);', 'void call(int i)', '{',
       '    switch (i) {']
for i, name in enumerate(names):
    args = []
    for p in split_params(protos[name]):
        if '*' in p or '(' in p or '[' in p:
            args.append('0')
        else:  # a number, an enum or a struct by value: zero
            args.append('(%s){0}' % (re.sub(r'\s*\b\w+$', '', p) or p))
    out.append('    case %d: (void)%s(%s); break;' % (i, name, ', '.join(args)))
out += ['    }', '}', 'const char *const names[] = {']
out += ['    "%s",' % n for n in names]
out += ['};', 'const int count = %d;' % len(names)]
print('\n'.join(out))
