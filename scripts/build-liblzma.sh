#!/usr/bin/env bash
# Builds liblzma 5.8.1, static, from Debian 13's xz-utils source package, into a cache that
# CMake uses when it is there (CMakeLists.txt, STACKPIN_LIBLZMA_PREFIX). Debian 12 ships liblzma
# 5.4.1; 5.8's LZMA decoder takes about half the CPU time on NVIDIA's archives here, and decoding
# is nearly all the time of staging a tar.xz (docs/benchmarks.md).
#
#   scripts/build-liblzma.sh [PREFIX]   default: ${XDG_CACHE_HOME:-$HOME/.cache}/stackpin/liblzma-5.8.1
#
# The source comes from Debian's archive through `apt-get source`, with an apt configuration of
# its own in a temporary folder (the machine's apt sources are not touched): apt checks the
# suite's Release file against Debian's keyring and every file against the signed index, and the
# upstream tarball is also checked against the SHA-256 pinned below. An existing build of the
# same version is kept. Exit 0 built or present, 1 the source could not be fetched or built
# (stackpin then builds with the system's liblzma, slower).
set -euo pipefail

version=5.8.1
debian_version=5.8.1-1+deb13u1
suite=trixie
orig=xz-utils_${version}.orig.tar.xz
orig_sha256=0b54f79df85912504de0b14aec7971e3f964491af1812d83447005807513cd9e
mirror=${STACKPIN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

prefix=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/stackpin/liblzma-$version}
if [[ -f $prefix/.stackpin-built && -f $prefix/lib/liblzma.a ]]; then
  echo "build-liblzma: liblzma $version present ($prefix)"
  exit 0
fi
for tool in apt-get dpkg-source make cc; do
  command -v "$tool" >/dev/null || { echo "build-liblzma: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done

mkdir -p "$(dirname "$prefix")"
work=$(mktemp -d "$(dirname "$prefix")/.liblzma-XXXXXX")
trap 'rm -rf "$work"' EXIT
apt=$work/apt
mkdir -p "$apt/sources.d" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/empty"
printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' "$mirror" "$suite" "$keyring" \
  >"$apt/sources.d/stackpin-liblzma.sources"
apt_opts=(-o "Dir::Etc::SourceList=$apt/empty/none.list" -o "Dir::Etc::SourceParts=$apt/sources.d"
  -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Dir::Etc::PreferencesParts=$apt/empty"
  -o "Dir::Etc::Preferences=$apt/empty/none.pref" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")
echo "build-liblzma: xz-utils from Debian $suite's sources ($mirror)"
# the Debian revision this was checked with first, else whatever the suite has now (the upstream
# tarball, which the pin below checks, is the same in every revision of 5.8.1)
fetched=false
if apt-get "${apt_opts[@]}" -qq update >"$work/apt.log" 2>&1; then
  for want in "xz-utils=$debian_version" "xz-utils/$suite"; do
    if (cd "$work" && apt-get "${apt_opts[@]}" -qq source "$want" >>"$work/apt.log" 2>&1); then
      fetched=true
      break
    fi
  done
fi
if ! $fetched; then
  tail -20 "$work/apt.log" >&2
  echo "build-liblzma: could not fetch xz-utils from $mirror ($suite); set STACKPIN_DEBIAN_MIRROR for another mirror" >&2
  exit 1
fi
got=$(sha256sum "$work/$orig" | cut -d' ' -f1)
if [[ $got != "$orig_sha256" ]]; then
  echo "build-liblzma: $orig has SHA-256 $got, expected $orig_sha256; nothing was built" >&2
  exit 1
fi
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name "xz-utils-*" | head -1)
[[ -n $src ]] || { echo "build-liblzma: apt-get source left no xz-utils-* folder in $work" >&2; exit 1; }

echo "build-liblzma: building liblzma $version (static) into $prefix"
staged=$work/prefix
if ! (cd "$src" && ./configure --prefix="$staged" --disable-shared --enable-static --with-pic \
  --disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo --disable-lzma-links --disable-scripts \
  --disable-doc --disable-nls CFLAGS="-O2" && make -s -j"$(nproc)" -C src/liblzma install) >"$work/build.log" 2>&1; then
  tail -30 "$work/build.log" >&2
  echo "build-liblzma: the build failed" >&2
  exit 1
fi
mkdir -p "$staged/share/doc/liblzma"
cp "$src/COPYING" "$staged/share/doc/liblzma/"
[[ -f $src/COPYING.0BSD ]] && cp "$src/COPYING.0BSD" "$staged/share/doc/liblzma/"
(cd "$src" && dpkg-parsechangelog -S Version 2>/dev/null || echo "$version") >"$staged/.stackpin-built"
# in place only once complete: a prefix with .stackpin-built is a whole build
rm -rf "$prefix"
mv "$staged" "$prefix"
echo "build-liblzma: liblzma $(cat "$prefix/.stackpin-built") in $prefix"
