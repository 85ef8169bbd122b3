#!/usr/bin/env bash
# DML test suite runner: tests/dml/run.sh BRAID [FILTER]
#   BRAID   path to the braid binary (relative paths are taken from the
#           current directory), or a command name found on PATH
#   FILTER  optional regular expression; only cases whose name matches run
# Runs every cases/<name>.dml (working directory: this folder) as
#   BRAID -f cases/<name>.dml -nvargs out=<tmp>
# and compares with expected/<name>/ by the conventions of the conformance
# suite (shared/conformance/README.md). If BRAID_DML_EXTRA_ARGS is set, each
# case runs a second time with those arguments added (see runner.py).
# Prints PASS/FAIL per run and ends with "N passed, M failed".
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -lt 1 ]; then
  echo "usage: $0 BRAID [FILTER]" >&2
  exit 2
fi
exec python3 "$here/runner.py" "$@"
