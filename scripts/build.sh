#!/usr/bin/env bash
# Configures and builds the engine into build/ (Release with debug info). Uses ccache where it is
# installed (a rebuild on a 2-core machine takes ~10 minutes without it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
ninja -C "$root/build"
