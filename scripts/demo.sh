#!/usr/bin/env bash
# Quick start: installs what stackpin needs (Debian packages), builds it, and runs its main job:
# `stackpin check --explain` on the second seed's stack and a check of every example manifest,
# then verifies and stages demo archives in NVIDIA's layout for Linux/WSL2 and for Windows, and
# shows the staged trees and their receipts' status, builds .deb packages and lays out a Docker
# build context from the same archive, locks the manifest and provisions from it with `apply`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tools
# the release build (the `default` preset, g++, build/), which `scripts/test.sh --gcc` completes
# with the tests; `scripts/test.sh` tests on the sanitizer build in build-sanitize/
scripts/configure.sh default
cmake --build build -j"$(nproc)" --target stackpin stackpin-convtest
sp=./build/src/stackpin
demo=build/demo
echo
echo "== stackpin check --explain manifests/cu121-cudnn895-torch21.toml"
$sp check --explain manifests/cu121-cudnn895-torch21.toml
echo "== stackpin check manifests/*.toml"
$sp check manifests/*.toml
echo
echo "== demo archives in NVIDIA's layout (stand-in libraries): $demo"
rm -rf "$demo"
manifest=$(scripts/make-demo-archive.sh "$demo")
$sp verify "$manifest" --archives "$demo"
echo
echo "== stackpin stage --target linux (lib64 + so-name chain) into $demo/linux"
$sp stage "$manifest" --archives "$demo" --target linux --dest "$demo/linux"
find "$demo/linux/lib64" -maxdepth 1 -name "libcudnn.so*" -type l -printf "  %f -> %l\n" | sort
echo
printf "== stackpin stage --target windows (bin, include, lib\\\\x64) into %s\n" "$demo/windows"
$sp stage "$manifest" --archives "$demo" --target windows --dest "$demo/windows"
echo
echo "== stackpin stage again (no-op) and status"
$sp stage "$manifest" --archives "$demo" --target linux --dest "$demo/linux"
$sp status --dest "$demo/linux"
echo
echo "== stackpin deb: runtime and -dev Debian packages from the same verified archive"
$sp deb "$manifest" --archives "$demo" --out-dir "$demo/debs"
echo
echo "== stackpin generate dockerfile --context: a verified build context for a GPU CI image"
$sp generate dockerfile "$manifest" --context "$demo/image" --archives "$demo"
echo
echo "== stackpin lock: what the demo manifest leaves open, pinned beside it (a manifest of versions only: manifests/cu124-cudnn91-minimal.lock)"
$sp lock "$manifest"
$sp lock --check manifests/cu124-cudnn91-minimal.toml
echo
echo "== stackpin apply --locked: archive, stage, activation scripts, doctor and conv test in one command"
$sp apply "$manifest" --target linux --dest "$demo/applied" --archives "$demo" --cache-dir "$demo/cache" --locked
echo "== stackpin apply again: idempotent"
$sp apply "$manifest" --target linux --dest "$demo/applied" --archives "$demo" --cache-dir "$demo/cache" --locked | grep -E "^nothing to do|^applied"
echo
echo "== stackpin convtest (loads the CUDA runtime and cuDNN this machine's loader finds)"
$sp convtest --quick || echo "(exit $?: 3 means no NVIDIA driver or GPU here, 1 a failure; see above)"
