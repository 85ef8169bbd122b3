#!/usr/bin/env python3
"""layers.py [ROOT]: checks that braid's folders depend on each other only
downwards (docs/DESIGN.md, "Layers"). Reads every #include "..." of the
library's .c/.h files; an include of a folder on a higher layer, or one the
rules below forbid, is a failure. Prints one line per failure and ends
with "N passed, M failed" (N: includes checked)."""
import os
import re
import sys

# Lowest first. A folder may include its own folder and lower ones.
LAYERS = ['base', 'matrix', 'io', 'kernels', 'dist', 'gpu', 'lang', 'hops', 'rewrite',
          'codegen', 'runtime', 'builtins', 'plan', 'api', 'cli']
# Includes that the order allows but the design does not: the runtime
# runs instructions and never sees a HOP, a rewrite or codegen's compile
# half (codegen/cgrun.h is its run-time half).
FORBIDDEN = {
    'runtime': ['hops/', 'rewrite/', 'plan/', 'codegen/codegen.h',
                'codegen/cgint.h'],
    'builtins': ['hops/', 'rewrite/', 'plan/', 'codegen/codegen.h',
                 'codegen/cgint.h'],
}
# Folders that may include nothing but these (the CLI is a client of the
# public header).
ONLY = {'cli': ['include/']}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    rank = {d: i for i, d in enumerate(LAYERS)}
    ok = bad = 0
    for d in LAYERS:
        folder = os.path.join(root, d)
        if not os.path.isdir(folder):
            continue
        for f in sorted(os.listdir(folder)):
            if not f.endswith(('.c', '.h')):
                continue
            path = os.path.join(folder, f)
            with open(path, errors='replace') as fh:
                for ln, line in enumerate(fh, 1):
                    m = INC.match(line)
                    if not m:
                        continue
                    inc = os.path.normpath(os.path.join(d, m.group(1)))
                    if not os.path.exists(os.path.join(root, inc)):
                        inc = os.path.normpath(m.group(1))
                    top = inc.split('/')[0] if '/' in inc else d
                    why = None
                    if top in rank and rank[top] > rank[d]:
                        why = '%s is above %s' % (top, d)
                    for p in FORBIDDEN.get(d, []):
                        if inc.startswith(p):
                            why = '%s may not include %s' % (d, p)
                    if d in ONLY and not any(inc.startswith(p) for p in ONLY[d]):
                        why = '%s includes only %s' % (d, ' '.join(ONLY[d]))
                    if why:
                        print('FAIL %s:%d: includes %s (%s)' % (path, ln, inc, why))
                        bad += 1
                    else:
                        ok += 1
    print('layers: %d passed, %d failed' % (ok, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
