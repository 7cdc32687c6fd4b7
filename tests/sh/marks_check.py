#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Set-of-marks checks for the shell tests (serve_http.sh, snap_web.sh):
#   marks_check.py grey FILE             write a grey 1080x2400 RGBX raw frame
#                                        for the test device's screencap
#   marks_check.py check PNG REFS [N..]  decode the marked PNG and check that
#                                        each ref of REFS (a JSON list of
#                                        {ref, bounds}; only refs N.. if given)
#                                        has its box drawn on its edges in its
#                                        colour and its number's tab with white
#                                        digits, and that outside every box the
#                                        grey screen is untouched
import json
import struct
import sys
import zlib

GREY = (90, 90, 90)
PALETTE = [(230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48),
           (145, 30, 180), (0, 160, 160), (240, 50, 230), (128, 128, 0)]


def grey(path):
    w, h = 1080, 2400
    with open(path, 'wb') as f:
        f.write(struct.pack('<III', w, h, 2) + bytes(GREY + (255,)) * (w * h))


def decode(path):
    png = open(path, 'rb').read()
    assert png[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat, w, h, ch = 8, b'', 0, 0, 3
    while pos < len(png):
        n, t = struct.unpack('>I4s', png[pos:pos + 8])
        d = png[pos + 8:pos + 8 + n]
        if t == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', d[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            ch = 3 if ctype == 2 else 4
        elif t == b'IDAT':
            idat += d
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * ch
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b = prev[i]
            c = prev[i - ch] if i >= ch else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return lambda x, y: tuple(rows[y][x * ch:x * ch + 3])


def check(png_path, refs_path, only):
    px = decode(png_path)
    refs = json.load(open(refs_path))
    assert refs, 'no refs'
    chosen = [r for r in refs if not only or r['ref'] in only]
    missing = set(only) - {r['ref'] for r in chosen}
    assert not missing, ('refs not in the snapshot', sorted(missing))
    for r in chosen:
        x1, y1, x2, y2 = r['bounds']
        col = PALETTE[(r['ref'] - 1) % len(PALETTE)]
        ym, xm = (y1 + y2) // 2, (x1 + x2) // 2
        for (x, y) in ((x1, ym), (x2 - 1, ym), (xm, y2 - 1), (x2 - 1, y1)):
            # an edge another ref's box covers may carry that box's colour
            inner = [o for o in refs if o is not r and o['bounds'][0] <= x < o['bounds'][2]
                     and o['bounds'][1] <= y < o['bounds'][3]]
            assert px(x, y) == col or inner, ('ref', r['ref'], 'edge', x, y, px(x, y), col)
        tab = [px(x, y) for y in range(y1, y1 + 7 * 4) for x in range(x1, x1 + 20)]
        assert (255, 255, 255) in tab, ('no digits for ref', r['ref'])
        if px(xm, ym) != GREY:
            assert any(o is not r and o['bounds'][0] <= xm < o['bounds'][2]
                       and o['bounds'][1] <= ym < o['bounds'][3] for o in refs), \
                ('inside ref', r['ref'], px(xm, ym))
    outside = [(x, y) for (x, y) in ((5, 150), (1075, 2395), (540, 2390))
               if not any(o['bounds'][0] <= x < o['bounds'][2] and o['bounds'][1] <= y < o['bounds'][3]
                          for o in refs)]
    for (x, y) in outside:
        assert px(x, y) == GREY, ('outside every box', x, y, px(x, y))
    print('marks: %d refs checked' % len(chosen))


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'grey':
        grey(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == 'check':
        check(sys.argv[2], sys.argv[3], [int(a) for a in sys.argv[4:]])
    else:
        sys.exit('usage: marks_check.py grey FILE | check PNG REFS [REF...]')
