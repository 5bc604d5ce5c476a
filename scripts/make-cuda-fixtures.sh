#!/usr/bin/env bash
# Builds CUDA toolkit component archives in NVIDIA's redist layout from the real CUDA toolkit on
# this machine (CUDA_ROOT, default /usr/local/cuda), for the end-to-end tests and the benchmark:
#
#   OUT/<component>-linux-x86_64-<version>-archive.tar.xz   one top directory named like the file,
#                                                            holding LICENSE and the component's files
#   OUT/cudnn-linux-x86_64-<version>_cuda<M>-archive.tar.xz  cuDNN's headers, its main library
#                                                            (libcudnn.so.<M>) and stand-ins of the others
#   OUT/SHA256SUMS                                           their hashes
#
# Usage: scripts/make-cuda-fixtures.sh OUT [SET]
#   SET = build (default): cuda_nvcc, cuda_crt, libnvvm, cuda_cccl, cuda_cudart, what nvcc needs
#         to compile and link a CUDA program; bench: build plus cuda_nvrtc, libcublas, libcufft,
#         libcurand, libcusolver, libcusparse, libnvjitlink, cuda_nvtx, cuda_cupti (about 2 GB unpacked).
#
# The component versions are the ones of the toolkit's own files (its dist-info folders, from
# NVIDIA's wheels). Which file belongs to which component follows NVIDIA's split by name (cuBLAS's
# headers and libraries to libcublas, ...); the runtime's archive takes the headers no other
# component claims. The bytes are the toolkit's; the split is an approximation of NVIDIA's.
# Deterministic: sorted names, owner root, a fixed mtime. Skips a file already built.
set -euo pipefail

out=${1:?usage: make-cuda-fixtures.sh OUT [build|bench]}
set_name=${2:-build}
root=${CUDA_ROOT:-/usr/local/cuda}
[ -x "$root/bin/nvcc" ] || { echo "make-cuda-fixtures: no CUDA toolkit at $root (bin/nvcc)" >&2; exit 2; }
case $set_name in build | bench) ;; *) echo "make-cuda-fixtures: SET is build or bench, not $set_name" >&2; exit 2 ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
# one run at a time per folder: tests that need the archives run in parallel, and the first one on
# a fresh machine builds them while the others wait
exec 9>"$out/.lock"
flock 9
lib=$root/lib
[ -d "$root/lib64" ] && lib=$root/lib64
lib=$(cd "$lib" && pwd -P)  # lib64 is often a link to lib: find does not follow it

# version_of WHEEL-NAME: the version in the toolkit's dist-info/<name>-<version>.dist-info
version_of() {
  local d
  d=$(find "$root/dist-info" -maxdepth 1 -name "$1-*.dist-info" 2>/dev/null | sort | tail -n 1)
  [ -n "$d" ] || { echo "make-cuda-fixtures: no $1 dist-info under $root/dist-info" >&2; exit 2; }
  d=${d##*/}
  d=${d#"$1"-}
  echo "${d%.dist-info}"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pack_top TOP: tars $work/TOP (filled by the caller, LICENSE included) into OUT/TOP.tar.xz,
# reproducibly, through a temporary name
pack_top() {
  local file="$out/$1.tar.xz"
  tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1704067200 -cf - "$1" | xz -T0 -3 >"$file.tmp"
  mv "$file.tmp" "$file"
  rm -rf "${work:?}/$1"
  echo "built $file"
}

# pack COMPONENT VERSION: the component's LICENSE, then pack_top
pack() {
  local top="$1-linux-x86_64-$2-archive"
  printf 'NVIDIA Software License Agreement: see %s/%s (fixture copy of %s %s)\n' "$root" "$1" "$1" "$2" >"$work/$top/LICENSE"
  pack_top "$top"
}

# built COMPONENT VERSION: its archive is already in OUT (then nothing is copied for it)
built() { [ -s "$out/$1-linux-x86_64-$2-archive.tar.xz" ]; }

# begin COMPONENT VERSION: prints the top directory to fill
begin() {
  local top="$work/$1-linux-x86_64-$2-archive"
  mkdir -p "$top"
  echo "$top"
}

libs() {  # libs TOP NAME...: lib/<name>.so* (links kept) and lib/<name>*.a
  local top=$1
  shift
  mkdir -p "$top/lib"
  for n in "$@"; do
    find "$lib" -maxdepth 1 \( -name "$n.so*" -o -name "${n}_static.a" -o -name "$n.a" \) -exec cp -a {} "$top/lib/" \;
  done
}

headers() {  # headers TOP PATTERN...: include/<pattern>
  local top=$1
  shift
  mkdir -p "$top/include"
  for p in "$@"; do
    find "$root/include" -maxdepth 1 -name "$p" -exec cp -a {} "$top/include/" \;
  done
}

v=$(version_of nvidia_cuda_nvcc)
if ! built cuda_nvcc "$v"; then
  t=$(begin cuda_nvcc "$v")
  mkdir -p "$t/bin"
  cp -a "$root/bin/." "$t/bin/"
  pack cuda_nvcc "$v"
fi

v=$(version_of nvidia_cuda_crt)
if ! built cuda_crt "$v"; then
  t=$(begin cuda_crt "$v")
  mkdir -p "$t/include"
  cp -a "$root/include/crt" "$t/include/"
  pack cuda_crt "$v"
fi

v=$(version_of nvidia_nvvm)
if ! built libnvvm "$v"; then
  t=$(begin libnvvm "$v")
  cp -a "$root/nvvm" "$t/"
  libs "$t" libnvvm
  pack libnvvm "$v"
fi

v=$(version_of nvidia_cuda_cccl)
if ! built cuda_cccl "$v"; then
  t=$(begin cuda_cccl "$v")
  mkdir -p "$t/include"
  cp -a "$root/include/cccl" "$t/include/"
  pack cuda_cccl "$v"
fi

v=$(version_of nvidia_cuda_runtime)
if ! built cuda_cudart "$v"; then
  t=$(begin cuda_cudart "$v")
  mkdir -p "$t/include"
  for f in "$root"/include/*; do
    n=${f##*/}
    case $n in
      crt | cccl | cublas* | cudnn* | cufft* | curand* | cusolver* | cusparse* | nvrtc* | nvJitLink* | nvjitlink* | cupti* | nvtx* | nvToolsExt* | nccl* | npp* | nvperf* | generated_*) ;;
      *) cp -a "$f" "$t/include/" ;;
    esac
  done
  libs "$t" libcudart libcudadevrt
  if [ -d "$lib/stubs" ] && [ -n "$(ls -A "$lib/stubs")" ]; then cp -a "$lib/stubs" "$t/lib/"; fi
  pack cuda_cudart "$v"
fi

if [ "$set_name" = bench ]; then
  v=$(version_of nvidia_cuda_nvrtc); built cuda_nvrtc "$v" || { t=$(begin cuda_nvrtc "$v"); headers "$t" 'nvrtc*'; libs "$t" libnvrtc libnvrtc-builtins libnvrtc.alt libnvrtc-builtins.alt; pack cuda_nvrtc "$v"; }
  v=$(version_of nvidia_cublas); built libcublas "$v" || { t=$(begin libcublas "$v"); headers "$t" 'cublas*'; libs "$t" libcublas libcublasLt libnvblas; pack libcublas "$v"; }
  v=$(version_of nvidia_cufft); built libcufft "$v" || { t=$(begin libcufft "$v"); headers "$t" 'cufft*' 'cudalibxt.h'; libs "$t" libcufft libcufftw; pack libcufft "$v"; }
  v=$(version_of nvidia_curand); built libcurand "$v" || { t=$(begin libcurand "$v"); headers "$t" 'curand*'; libs "$t" libcurand; pack libcurand "$v"; }
  v=$(version_of nvidia_cusolver); built libcusolver "$v" || { t=$(begin libcusolver "$v"); headers "$t" 'cusolver*'; libs "$t" libcusolver libcusolverMg; pack libcusolver "$v"; }
  v=$(version_of nvidia_cusparse); built libcusparse "$v" || { t=$(begin libcusparse "$v"); headers "$t" 'cusparse*'; libs "$t" libcusparse; pack libcusparse "$v"; }
  v=$(version_of nvidia_nvjitlink); built libnvjitlink "$v" || { t=$(begin libnvjitlink "$v"); headers "$t" 'nvJitLink*'; libs "$t" libnvJitLink; pack libnvjitlink "$v"; }
  v=$(version_of nvidia_nvtx); built cuda_nvtx "$v" || { t=$(begin cuda_nvtx "$v"); mkdir -p "$t/include"; [ -d "$root/include/nvtx3" ] && cp -a "$root/include/nvtx3" "$t/include/"; libs "$t" libnvtx3interop; pack cuda_nvtx "$v"; }
  v=$(version_of nvidia_cuda_cupti); built cuda_cupti "$v" || { t=$(begin cuda_cupti "$v"); headers "$t" 'cupti*' 'generated_*'; libs "$t" libcupti libnvperf_host libnvperf_target libpcsamplingutil libcheckpoint; pack cuda_cupti "$v"; }
fi

# cuDNN: its headers, the main library with NVIDIA's link chain and libcudnn_graph (which answers
# cudnnGetVersion for it), and the other sub-libraries as stand-ins built here: shared objects with
# NVIDIA's sonames, so that the tree is a whole cuDNN to stage, package and check. They hold no
# kernels: enough to compile, link and ask the version, not to run a convolution.
# (.cudnn-stand-ins marks archives made so; one made before is made again.)
if [ -f "$root/include/cudnn_version.h" ] && [ -f "$lib/libcudnn.so.9" ]; then
  h=$root/include/cudnn_version.h
  cv=$(awk '/#define CUDNN_MAJOR /{a=$3} /#define CUDNN_MINOR /{b=$3} /#define CUDNN_PATCHLEVEL /{c=$3} END{print a"."b"."c}' "$h")
  full=$(version_of nvidia_cudnn_cu13)
  major=$(version_of nvidia_cuda_runtime)
  major=${major%%.*}
  top="cudnn-linux-x86_64-${full}_cuda$major-archive"
  [ -f "$out/.cudnn-stand-ins" ] || rm -f "$out/$top.tar.xz"
  if [ ! -s "$out/$top.tar.xz" ]; then
    mkdir -p "$work/$top/include" "$work/$top/lib"
    cp -a "$root"/include/cudnn*.h "$work/$top/include/"
    cp "$lib/libcudnn.so.9" "$work/$top/lib/libcudnn.so.$cv"
    ln -s "libcudnn.so.$cv" "$work/$top/lib/libcudnn.so.9"
    ln -s libcudnn.so.9 "$work/$top/lib/libcudnn.so"
    for real in "$lib"/libcudnn_*.so.9; do
      stem=$(basename "$real" .so.9)
      if [ "$stem" = libcudnn_graph ]; then
        cp "$real" "$work/$top/lib/$stem.so.$cv"
      else
        printf 'int stackpin_fixture_stand_in;\n' >"$work/$stem.c"
        cc -shared -fPIC -o "$work/$top/lib/$stem.so.$cv" -Wl,-soname,"$stem.so.9" "$work/$stem.c"
        rm -f "$work/$stem.c"
      fi
      ln -s "$stem.so.$cv" "$work/$top/lib/$stem.so.9"
      ln -s "$stem.so.9" "$work/$top/lib/$stem.so"
    done
    printf 'NVIDIA cuDNN Software License Agreement (fixture copy of cuDNN %s)\n' "$full" >"$work/$top/LICENSE"
    pack_top "$top"
    touch "$out/.cudnn-stand-ins"
  fi
fi

(cd "$out" && sha256sum -- *-archive.tar.xz >SHA256SUMS)
