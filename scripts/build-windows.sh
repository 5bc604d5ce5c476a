#!/usr/bin/env bash
# Cross-builds stackpin for Windows x64 on Debian 12 with Debian's mingw-w64 toolchain, from
# Debian's packages and source packages only.
#
#   scripts/build-windows.sh [--tests] [--no-zip] [BUILD_DIR]     (default BUILD_DIR: build-windows)
#   scripts/build-windows.sh --deps      only the cross-built libraries, into their cache (below)
#
# Leaves BUILD_DIR/stackpin.exe, BUILD_DIR/stackpin-convtest.exe and the release zip
# BUILD_DIR/stackpin-<version>-windows-x86_64.zip (the exe, the licence texts of what it links and
# a short README). --tests also builds BUILD_DIR/tests/stackpin_unit_tests.exe, the portable unit
# tests as a Windows program (GoogleTest from Debian's googletest sources), and the CUDA and cuDNN
# test doubles as DLLs, which the Linux build's ctest -L windows runs under Wine.
#
# What it links, and where from:
#   - zlib, xz's liblzma and libarchive are cross-built, static, from Debian 12's own source
#     packages (apt-get source, pinned below to the versions Debian ships; the script adds a
#     deb-src entry for Debian's archive when there is none). They are built once into a cache
#     outside the repository, keyed by the source versions and the compiler:
#     ${STACKPIN_WINDOWS_DEPS:-${XDG_CACHE_HOME:-~/.cache}/stackpin/windows-deps}.
#   - toml++, CLI11 and nlohmann-json are header-only; their Debian packages' headers are copied
#     into the same cache, so no Linux header is ever on the cross compiler's include path.
#   - SHA-256, SHA-1 and MD5 come from Windows CNG (bcrypt.dll) and HTTPS from WinHTTP: both are
#     part of every Windows 10/11, use the machine's certificate store and proxy settings, and
#     spare the Windows build a TLS library and its update burden.
# The C and C++ runtimes are linked statically, so stackpin.exe imports only Windows' own DLLs
# (tests/windows/windows_exe_test.cpp reads its import table to prove it).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=build-windows
tests=OFF
make_zip=1
deps_only=0
for arg in "$@"; do
  case $arg in
    --tests) tests=ON ;;
    --no-zip) make_zip=0 ;;
    --deps) deps_only=1 ;;
    -*) echo "build-windows: unknown option $arg (--tests, --no-zip, --deps)" >&2; exit 2 ;;
    *) build_dir=$arg ;;
  esac
done
case $build_dir in /*) ;; *) build_dir=$root/$build_dir ;; esac

# The source packages Debian 12 ships (apt-cache showsrc NAME); a Debian point release that
# replaces one needs its new version here, and the cache key changes with it.
zlib_src=zlib=1:1.2.13.dfsg-1
xz_src=xz-utils=5.4.1-1+deb12u2
libarchive_src=libarchive=3.6.2-1+deb12u5

host=x86_64-w64-mingw32
jobs=$(nproc 2>/dev/null || echo 2)

SUDO=
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive

need=(g++-mingw-w64-x86-64-posix cmake make dpkg-dev zip libtomlplusplus-dev libcli11-dev nlohmann-json3-dev)
[[ $tests == ON ]] && need+=(googletest)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build-windows: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
cc=$host-gcc-posix
cxx=$host-g++-posix
cc_version=$($cxx -dumpfullversion 2>/dev/null || $cxx -dumpversion)

cache_root=${STACKPIN_WINDOWS_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/stackpin/windows-deps}

# Adds Debian's deb-src entries (the same archive and suites as the deb entries) when apt has none.
ensure_deb_src() {
  if apt-get source --print-uris "${zlib_src}" >/dev/null 2>&1; then return; fi
  local list=/etc/apt/sources.list.d/stackpin-deb-src.sources
  echo "build-windows: adding Debian's source archive to apt ($list)"
  local tmp
  tmp=$(mktemp)
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    sed -n 's/^Types:.*/Types: deb-src/p; /^\(URIs\|Suites\|Components\|Signed-By\):/p; /^$/p' \
      /etc/apt/sources.list.d/debian.sources >"$tmp"
  else
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n' >"$tmp"
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >>"$tmp"
  fi
  $SUDO install -m 0644 "$tmp" "$list"
  rm -f "$tmp"
  $SUDO apt-get update -qq
}

# Fetches and unpacks one pinned source package into $work; prints the unpacked directory.
get_source() {
  local pin=$1 name=${1%%=*}
  (cd "$work" && apt-get source -qq "$pin" >/dev/null 2>"$work/$name.apt.log") || {
    echo "build-windows: apt-get source $pin failed:" >&2
    cat "$work/$name.apt.log" >&2
    echo "build-windows: apt-cache showsrc $name lists what Debian has now; update the pin in $0" >&2
    exit 1
  }
  find "$work" -maxdepth 1 -mindepth 1 -type d -name "${name%-utils}*" | head -1
}

build_deps() {
  ensure_deb_src
  work=$(mktemp -d "${cache_root}/.work-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  local stage=$work/prefix
  mkdir -p "$stage/include" "$stage/lib" "$stage/licenses"

  echo "build-windows: zlib ($zlib_src)"
  local src
  src=$(get_source "$zlib_src")
  # Debian's repacked zlib has no win32 makefile: the library is its fifteen C files.
  (cd "$src" && for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate \
    inftrees trees uncompr zutil; do "$cc" -O2 -D_LARGEFILE64_SOURCE=1 -c "$f.c" -o "$work/zlib-$f.o" || exit 1; done &&
    "$host-ar" rcs "$stage/lib/libz.a" "$work"/zlib-*.o) >"$work/zlib.log" 2>&1 || { tail -30 "$work/zlib.log" >&2; exit 1; }
  cp "$src/zlib.h" "$src/zconf.h" "$stage/include/"
  cp "$src/LICENSE" "$stage/licenses/zlib.txt"

  echo "build-windows: liblzma ($xz_src)"
  src=$(get_source "$xz_src")
  (cd "$src" && ./configure --host="$host" CC="$cc" --prefix="$stage" --disable-shared --enable-static \
    --disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo --disable-lzma-links --disable-scripts \
    --disable-doc --disable-nls --enable-threads=win95 && make -s -j"$jobs" -C src/liblzma install) \
    >"$work/xz.log" 2>&1 || { tail -30 "$work/xz.log" >&2; exit 1; }
  cp "$src/COPYING" "$stage/licenses/liblzma.txt"

  echo "build-windows: libarchive ($libarchive_src)"
  src=$(get_source "$libarchive_src")
  # Only what stackpin reads and writes: tar with gzip and xz (NVIDIA's archives, .deb members)
  # and zip's deflate; no crypto library (CNG), XML, iconv or other compressors. Its CMake build,
  # because Debian's patches leave the autotools files older than what they patch.
  cmake -S "$src" -B "$work/libarchive-build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DENABLE_TEST=OFF -DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF \
    -DENABLE_ACL=OFF -DENABLE_XATTR=OFF -DENABLE_OPENSSL=OFF -DENABLE_NETTLE=OFF -DENABLE_MBEDTLS=OFF \
    -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF -DENABLE_BZip2=OFF -DENABLE_LZ4=OFF -DENABLE_ZSTD=OFF \
    -DENABLE_LZO=OFF -DENABLE_LIBB2=OFF -DENABLE_ICONV=OFF -DENABLE_CNG=ON -DENABLE_ZLIB=ON -DENABLE_LZMA=ON \
    -DZLIB_INCLUDE_DIR="$stage/include" -DZLIB_LIBRARY="$stage/lib/libz.a" \
    -DLIBLZMA_INCLUDE_DIR="$stage/include" -DLIBLZMA_LIBRARY="$stage/lib/liblzma.a" \
    -DCMAKE_C_FLAGS="-DLZMA_API_STATIC" >"$work/libarchive.log" 2>&1 ||
    { tail -40 "$work/libarchive.log" >&2; exit 1; }
  cmake --build "$work/libarchive-build" --target archive_static -j"$jobs" >>"$work/libarchive.log" 2>&1 ||
    { tail -40 "$work/libarchive.log" >&2; exit 1; }
  cp "$work/libarchive-build/libarchive/libarchive.a" "$stage/lib/libarchive.a" 2>/dev/null ||
    cp "$work/libarchive-build/libarchive/libarchive_static.a" "$stage/lib/libarchive.a"
  cp "$src/libarchive/archive.h" "$src/libarchive/archive_entry.h" "$stage/include/"
  cp "$src/COPYING" "$stage/licenses/libarchive.txt"

  # header-only libraries from their Debian packages
  cp -r /usr/include/toml++ /usr/include/CLI /usr/include/nlohmann "$stage/include/"
  cp /usr/share/doc/libtomlplusplus-dev/copyright "$stage/licenses/tomlplusplus.txt"
  cp /usr/share/doc/libcli11-dev/copyright "$stage/licenses/cli11.txt"
  cp /usr/share/doc/nlohmann-json3-dev/copyright "$stage/licenses/nlohmann-json.txt"
  printf '%s\n' "$zlib_src" "$xz_src" "$libarchive_src" "$cxx $cc_version" >"$stage/VERSIONS"

  rm -rf "${stage:?}/share" "${stage:?}/bin" "${stage:?}/lib/pkgconfig" "${stage:?}/lib"/*.la
  mv "$stage" "$prefix.tmp" && mv "$prefix.tmp" "$prefix"
  rm -rf "$work"
  trap - EXIT
}

# The cache key: the pinned sources, the compiler and the code that builds them (not the rest of
# this script, so that changing how stackpin itself is built keeps the cache).
key=$( (printf '%s\n' "$zlib_src" "$xz_src" "$libarchive_src" "$cxx $cc_version" && declare -f ensure_deb_src get_source build_deps) |
  sha256sum | cut -c1-16)
prefix=$cache_root/$key

mkdir -p "$cache_root"
if [[ ! -f $prefix/VERSIONS ]]; then
  rm -rf "$prefix.tmp"
  build_deps
else
  echo "build-windows: dependencies from $prefix"
fi
if ((deps_only)); then exit 0; fi

# Ninja, like the Linux presets; a folder configured earlier with Makefiles is reconfigured
if [[ -f $build_dir/CMakeCache.txt ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$build_dir/CMakeCache.txt"; then
  rm -rf "${build_dir:?}/CMakeCache.txt" "${build_dir:?}/CMakeFiles"
fi
# CI (CI=true, as .ci/run runs) compiles at -O1: its tests run the same code, and a cold build takes
# two thirds of the time of -O3 (202 s against 300 s on 2 cores). The zip a user builds is -O3. Both
# are set each time, so that a folder configured one way and built the other gets the right one.
opt=-O3
[[ ${CI:-} =~ ^(1|[Tt][Rr][Uu][Ee]|[Yy][Ee][Ss]|[Oo][Nn])$ ]] && opt=-O1
cmake -G Ninja -S "$root" -B "$build_dir" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64.cmake" \
  -DSTACKPIN_WINDOWS_DEPS="$prefix" -DCMAKE_BUILD_TYPE=Release -DSTACKPIN_BUILD_TESTS=$tests \
  -DCMAKE_CXX_FLAGS_RELEASE="$opt -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="$opt -DNDEBUG" \
  -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$build_dir" >/dev/null
cmake --build "$build_dir" -j"$jobs"

if ((make_zip)); then
  version=$(sed -n 's/^project(stackpin VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
  name=stackpin-$version-windows-x86_64
  stage=$build_dir/$name
  rm -rf "$stage" "$build_dir/$name.zip"
  mkdir -p "$stage/licenses"
  cp "$build_dir/stackpin.exe" "$build_dir/stackpin-convtest.exe" "$stage/"
  cp "$prefix"/licenses/*.txt "$stage/licenses/"
  cp "$root/scripts/windows-release-README.txt" "$stage/README.txt"
  # the same bytes for the same inputs: fixed times and order
  find "$stage" -exec touch -d @"${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 315532800)}" {} +
  (cd "$build_dir" && find "$name" | LC_ALL=C sort | zip -q -X -D -@ "$name.zip")
  rm -rf "$stage"
  echo "build-windows: $build_dir/$name.zip"
fi
echo "build-windows: $build_dir/stackpin.exe"
