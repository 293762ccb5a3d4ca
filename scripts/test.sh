#!/usr/bin/env bash
# Builds, then runs every test: C++ unit tests (ctest) and Python tests (pytest).
# Triton kernels run under TRITON_INTERPRET=1 where no GPU is present; tests
# that need a GPU skip with their reason on such machines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure
cd "$root"
python3 -m pytest -q -rs tests/python
python3 -m pytest -q -rs tests/gpu
