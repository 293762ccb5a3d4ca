#!/usr/bin/env bash
# Installs what kernelopt needs to build and test: Debian packages for the C++
# engine (and chromium, in which tests/python renders bench.html), and (only
# where missing) torch, triton, jsonschema and pytest for the worker.
# An existing torch (e.g. a CUDA build on a GPU machine) is never replaced.
set -euo pipefail
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
pkgs="cmake ninja-build g++ nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libsqlite3-dev libssl-dev libcurl4-openssl-dev libcpp-httplib-dev libgtest-dev libgmock-dev chromium"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $missing
fi
PY=${PYTHON:-python3}
"$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install -q "torch==2.13.0"
"$PY" -c "import triton" 2>/dev/null || "$PY" -m pip install -q triton
"$PY" -c "import pytest" 2>/dev/null || "$PY" -m pip install -q pytest
"$PY" -c "import numpy" 2>/dev/null || "$PY" -m pip install -q numpy
# the worker checks every request against its protocol's schema (python/kernelopt/worker/protocol.json)
"$PY" -c "import jsonschema" 2>/dev/null || "$PY" -m pip install -q jsonschema
# Helion is optional (optimize-helion and its tests); a machine without PyPI goes on without it.
"$PY" -c "import helion" 2>/dev/null || "$PY" -m pip install -q helion \
  || echo "setup: helion not installed (pip could not reach it); optimize-helion will say so"
echo "setup: done"
