#!/usr/bin/env bash
# Quick start: installs what stackpin needs (Debian packages), builds it, and runs its main job on
# the example manifests: `stackpin check --explain` on the second seed's stack, then a check of
# every example manifest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTACKPIN_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"
echo
echo "== stackpin check --explain manifests/cu121-cudnn895-torch21.toml"
./build/src/stackpin check --explain manifests/cu121-cudnn895-torch21.toml
echo "== stackpin check manifests/*.toml"
./build/src/stackpin check manifests/*.toml
