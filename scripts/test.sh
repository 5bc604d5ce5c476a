#!/usr/bin/env bash
# Installs what stackpin needs (Debian packages), builds it with its tests, and runs the whole
# suite under CTest. Extra arguments go to ctest (e.g. -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tools
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTACKPIN_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
