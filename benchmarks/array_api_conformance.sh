#!/usr/bin/env bash
# Array API conformance of reactant.numpy: runs the public test suite (data-apis/array-api-tests)
# against it and prints the runner's final count line
#   N passed, N failed, N skipped, N xfailed (N collected, P% passed, wall Ns)
#
# usage: benchmarks/array_api_conformance.sh [SUITE_DIR] [extra pytest args...]
#   SUITE_DIR   checkout of array-api-tests with the spec submodule in SUITE_DIR/array-api
#               [$AAT_DIR, else ${TMPDIR:-/tmp}/array-api-tests]
# environment:
#   AAT_RUNNER  the runner script (run_array_api_tests.sh: bounded Hypothesis settings, no
#               shrinking, derandomized, -n 2), required: nothing outside the checkout is
#               assumed (docs/array_api.md says where it comes from)
#   PYTHON      python of a venv with reactant and the suite's requirements [python3 on PATH]
#   AAT_COMPARE 1 = also run array_api_strict at the same API version (2024.12), same settings
#   Any AAT_* knob of the runner (AAT_MAX_EXAMPLES, AAT_JOBS, AAT_FILES...) passes through.
# Setup and the measured counts: docs/array_api.md. Takes several minutes on 2 cores (every
# new shape/dtype an example draws is a compilation).
set -u -o pipefail

if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then
    export AAT_DIR=$1
    shift
fi
export AAT_DIR=${AAT_DIR:-${TMPDIR:-/tmp}/array-api-tests}
RUNNER=${AAT_RUNNER:-}
PY=${PYTHON:-$(command -v python3)}

if [ -z "$RUNNER" ] || { [ ! -x "$RUNNER" ] && [ ! -f "$RUNNER" ]; }; then
    echo "error: runner '$RUNNER' not found (set AAT_RUNNER to run_array_api_tests.sh; see docs/array_api.md)" >&2
    exit 2
fi
if [ "${AAT_COMPARE:-0}" = 1 ]; then
    echo "== array_api_strict (ARRAY_API_STRICT_API_VERSION=2024.12)"
    ARRAY_API_STRICT_API_VERSION=2024.12 bash "$RUNNER" array_api_strict "$PY" "$@" | tail -n 1
    echo "== reactant.numpy"
fi
bash "$RUNNER" reactant.numpy "$PY" "$@"
