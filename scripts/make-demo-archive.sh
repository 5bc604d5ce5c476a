#!/usr/bin/env bash
# Builds small demo cuDNN archives in NVIDIA's exact layout (cuDNN 9.1.0.70 for CUDA 12: Linux
# tar.xz with the so-name symlink chain, Windows zip with bin\, lib\x64\, include\) and a manifest
# pinning them with origin = "local". The libraries are stand-ins (scripts/stand-in-library.py),
# not NVIDIA's code: shared objects and DLLs with NVIDIA's names, sonames and needs, and the
# release in libcudnn_graph as NVIDIA's names it, so that stage reads a whole cuDNN. The demo shows
# staging, not cuDNN. Real archives are NVIDIA's; see manifests/ for their pins.
#
#   scripts/make-demo-archive.sh OUTDIR
set -euo pipefail
out=${1:?usage: make-demo-archive.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
ver=9.1.0.70; cuda=12
lx=cudnn-linux-x86_64-${ver}_cuda${cuda}-archive
wx=cudnn-windows-x86_64-${ver}_cuda${cuda}-archive
libs=(cudnn cudnn_adv cudnn_cnn cudnn_engines_precompiled cudnn_engines_runtime_compiled cudnn_graph cudnn_heuristic cudnn_ops)
headers=(cudnn.h cudnn_adv.h cudnn_backend.h cudnn_cnn.h cudnn_graph.h cudnn_ops.h)

version_header() {
  cat <<H
/* demo cudnn_version.h (stackpin demo archive, not NVIDIA's) */
#define CUDNN_MAJOR 9
#define CUDNN_MINOR 1
#define CUDNN_PATCHLEVEL 0
#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)
H
}

mkdir -p "$work/$lx/include" "$work/$lx/lib"
for h in "${headers[@]}"; do printf '/* demo %s */\n' "$h" > "$work/$lx/include/$h"; done
version_header > "$work/$lx/include/cudnn_version.h"
stand_in=$(dirname "$0")/stand-in-library.py
# what each needs, as NVIDIA's do: cnn and adv need ops and graph, the others graph, graph nothing
needs() {  # name-of-graph name-of-ops library
  case $3 in
    cudnn | cudnn_graph) ;;
    cudnn_cnn | cudnn_adv) printf -- '--needs\n%s\n--needs\n%s\n' "$2" "$1" ;;
    *) printf -- '--needs\n%s\n' "$1" ;;
  esac
}
release() { [ "$1" = cudnn_graph ] && printf -- '--release\n%s\n' "$ver"; return 0; }
for l in "${libs[@]}"; do
  mapfile -t extra < <(needs libcudnn_graph.so.9 libcudnn_ops.so.9 "$l"; release "$l")
  python3 "$stand_in" "$work/$lx/lib/lib$l.so.9.1.0" "lib$l.so.9" "${extra[@]}"
  ln -s "lib$l.so.9.1.0" "$work/$lx/lib/lib$l.so.9"
  ln -s "lib$l.so.9" "$work/$lx/lib/lib$l.so"
done
printf 'demo archive built by stackpin scripts/make-demo-archive.sh\n' > "$work/$lx/LICENSE"
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=2024-01-01 -cf - "$lx" | xz -T1 -6 > "$out/$lx.tar.xz"

mkdir -p "$work/$wx/bin" "$work/$wx/include" "$work/$wx/lib/x64"
cp "$work/$lx/include/"*.h "$work/$wx/include/"
for l in "${libs[@]}"; do
  mapfile -t extra < <(needs cudnn_graph64_9.dll cudnn_ops64_9.dll "$l"; release "$l")
  python3 "$stand_in" "$work/$wx/bin/${l}64_9.dll" "${l}64_9.dll" --pe "${extra[@]}"
  printf 'demo %s.lib\n' "$l" > "$work/$wx/lib/x64/$l.lib"
  printf 'demo %s64_9.lib\n' "$l" > "$work/$wx/lib/x64/${l}64_9.lib"
done
cp "$work/$lx/LICENSE" "$work/$wx/LICENSE"
find "$work/$wx" -exec touch -d 2024-01-01 {} +
(cd "$work" && rm -f "$out/$wx.zip" && find "$wx" | sort | zip -q -X -@ "$out/$wx.zip")

entry() {  # platform file
  printf '\n[[cudnn.archives]]\nplatform = "%s"\norigin = "local"\nfile = "%s"\nsha256 = "%s"\nsize = %s\n' \
    "$1" "$2" "$(sha256sum "$out/$2" | cut -d' ' -f1)" "$(stat -c %s "$out/$2")"
}
{
  printf '# Demo stack: archives built by scripts/make-demo-archive.sh in NVIDIA'"'"'s layout (stand-in\n'
  printf '# libraries), so origin = "local": this manifest is the truth for their hashes.\n'
  printf 'schema = 1\nname = "demo-cu124-cudnn91"\ndescription = "Demo: staging cuDNN 9.1.0.70 archives in NVIDIA'"'"'s layout"\n'
  printf '\n[cuda]\nversion = "12.4.1"\n\n[cudnn]\nversion = "%s"\ncuda = %s\n' "$ver" "$cuda"
  entry linux-x86_64 "$lx.tar.xz"
  entry windows-x86_64 "$wx.zip"
  printf '\n[targets.windows]\nlayout = "isolated"\nprefix = '"'"'C:\\tools\\cudnn\\v9.1.0'"'"'\n'
  printf '\n[targets.linux]\nlayout = "lib64"\nprefix = "/usr/local/cudnn-9.1.0"\n'
} > "$out/demo.toml"
echo "$out/demo.toml"
