#!/usr/bin/env bash
# Provisions a WSL2 distribution (Ubuntu, Debian) -- or any Debian/Ubuntu machine -- from a
# stackpin manifest: checks the WSL2 driver model, gets a working stackpin, verifies the pinned
# cuDNN archive, stages it for the manifest's Linux layout and makes new shells find it, then
# runs `stackpin doctor` (when this stackpin has it) and `stackpin convtest`. See wsl/README.md.
#
#   wsl/provision.sh --manifest M --archives DIR [options]
#
#   --manifest M        the stackpin manifest (its [targets.linux] section decides the layout)
#   --archives DIR      the folder holding the downloaded cuDNN archive(s)
#   --dest DIR          where the tree goes (default: the manifest's [targets.linux] prefix)
#   --platform P        archive platform (default: linux-x86_64 on x86_64, linux-sbsa on aarch64)
#   --stackpin PATH     use this stackpin binary (default: stackpin on PATH, else build this checkout)
#   --build-from SRC    build stackpin from the source tree SRC (cmake) and install it in /usr/local/bin
#   --system            lib64 layout: register the tree with the loader for every user
#                       (/etc/ld.so.conf.d + ldconfig, as root) instead of hooking your shell startup
#   --deb-out DIR       deb layout: where the packages are kept (default ~/.cache/stackpin/debs/NAME)
#   --skip-deps         never run apt-get; say what is missing instead
#   --skip-convtest     do not run the conv test at the end
#   --undo              remove what provisioning added (same options as the run that added it)
#   --dry-run           print every change it would make; change nothing
#   -h, --help          this text
#
# Running it again changes nothing. Exit 0 provisioned (warnings are listed at the end), 1 a step
# failed (the message says how to fix it), 2 usage.
set -euo pipefail

me=provision
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
manifest='' archives='' dest='' platform='' sp='' build_from='' deb_out=''
system=0 skip_deps=0 skip_convtest=0 undo=0 dry=0 is_wsl=0
warnings=()

say() { printf '%s: %s\n' "$me" "$*"; }
step() { printf '\n==> %s\n' "$*"; }
warn() { printf '%s: warning: %s\n' "$me" "$*" >&2; warnings+=("$*"); }
# die MESSAGE [FIX...]: the error and, one a line, what to do about it
die() {
  printf '%s: error: %s\n' "$me" "$1" >&2
  shift
  local fix
  for fix in "$@"; do printf '  fix: %s\n' "$fix" >&2; done
  exit 1
}
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
usage_error() { printf '%s: %s (see --help)\n' "$me" "$1" >&2; exit 2; }

quoted() { local q; printf -v q '%q ' "$@"; printf '%s' "${q% }"; }
# show CMD...: print a command; run CMD...: print and run one that changes nothing
show() { printf '  $ %s\n' "$(quoted "$@")"; }
run() { show "$@"; "$@"; }
# change CMD...: print and run a command that changes the machine (only print it with --dry-run)
change() {
  if ((dry)); then printf '  (dry run) would run: %s\n' "$(quoted "$@")"; return 0; fi
  show "$@"
  "$@"
}
# "${root[@]}" CMD...: CMD as root (through sudo when not root)
root=()
if [[ $(id -u) -ne 0 ]]; then root=(sudo); fi
need_root() {  # WHAT: fail early, saying so, when WHAT needs root and there is no way to get it
  ((${#root[@]} == 0)) || command -v sudo >/dev/null || die "$1 needs root, and sudo is not installed" "run provision.sh as root, or install sudo"
}
# writable DIR: DIR, or its nearest existing parent, is writable by this user
writable() {
  local d=$1
  while [[ ! -e $d ]]; do d=$(dirname "$d"); done
  [[ -w $d ]]
}

while (($#)); do
  case $1 in
    --manifest | --archives | --dest | --platform | --stackpin | --build-from | --deb-out)
      (($# >= 2)) || usage_error "$1 needs a value"
      case $1 in
        --manifest) manifest=$2 ;; --archives) archives=$2 ;; --dest) dest=$2 ;; --platform) platform=$2 ;;
        --stackpin) sp=$2 ;; --build-from) build_from=$2 ;; --deb-out) deb_out=$2 ;;
      esac
      shift 2 ;;
    --system) system=1; shift ;;
    --skip-deps) skip_deps=1; shift ;;
    --skip-convtest) skip_convtest=1; shift ;;
    --undo) undo=1; shift ;;
    --dry-run) dry=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage_error "unknown argument: $1" ;;
  esac
done
[[ -n $manifest ]] || usage_error "--manifest is required"
[[ -n $archives ]] || usage_error "--archives is required"
[[ -z $sp || -z $build_from ]] || usage_error "--stackpin and --build-from exclude each other"
[[ -f $manifest ]] || die "no manifest at $manifest" "pass the manifest file with --manifest"
[[ -d $archives ]] || die "no archive folder at $archives" "download the cuDNN archive the manifest pins into a folder and pass it with --archives"
manifest=$(cd "$(dirname "$manifest")" && pwd)/$(basename "$manifest")
archives=$(cd "$archives" && pwd)

# --- 1. the machine ------------------------------------------------------------------------------
check_machine() {
  step "checking the machine"
  [[ $(uname -s) == Linux ]] ||
    die "this is $(uname -s), not Linux" "run provision.sh inside your WSL2 distribution (for example: wsl -d Ubuntu), not on Windows itself"
  local distro=unknown
  # shellcheck disable=SC1091 # the machine's own file
  if [[ -r /etc/os-release ]]; then distro=$(. /etc/os-release && printf '%s' "${PRETTY_NAME:-$ID}"); fi
  if ! command -v dpkg >/dev/null; then
    warn "no dpkg: provision.sh expects Debian or Ubuntu ($distro); apt-get and dpkg steps will fail"
  fi
  if [[ -n ${WSL_DISTRO_NAME:-} || -e /proc/sys/fs/binfmt_misc/WSLInterop ]] || grep -qi microsoft /proc/version 2>/dev/null; then
    is_wsl=1
    say "WSL detected (distribution: ${WSL_DISTRO_NAME:-unknown}, $distro)"
    check_wsl_driver
  else
    say "not WSL: plain Linux ($distro); the WSL2 driver checks are skipped"
  fi
  if [[ -n ${SUDO_USER:-} && $(id -u) -eq 0 && $system -eq 0 ]]; then
    warn "running through sudo: the shell hook goes into root's startup files, not $SUDO_USER's; run provision.sh as yourself (it uses sudo where it must) or pass --system"
  fi
}

# Under WSL2 the Windows NVIDIA driver provides libcuda (mapped into /usr/lib/wsl/lib); a Linux
# driver installed inside the distribution shadows or breaks it.
check_wsl_driver() {
  local pkgs other
  # (dpkg-query exits 1 when a pattern matches no package: not an error here)
  pkgs=$({ dpkg-query -W -f='${Status} ${Package}\n' 'nvidia-driver*' 'libnvidia-compute-*' 'libcuda1' 'cuda-drivers*' 2>/dev/null || true; } |
    awk '$3 == "installed" { print $4 }' | tr '\n' ' ')
  if [[ -n $pkgs ]] && ((undo)); then
    warn "a Linux NVIDIA driver is installed inside WSL2: ${pkgs% }; remove it: sudo apt-get remove --purge ${pkgs% }"
  elif [[ -n $pkgs ]]; then
    die "a Linux NVIDIA driver is installed inside WSL2: ${pkgs% }" \
      "remove it: sudo apt-get remove --purge ${pkgs% }" \
      "inside WSL2 the driver is the Windows one: install or update it on Windows; it is mapped into /usr/lib/wsl/lib"
  fi
  if [[ -e /usr/lib/wsl/lib/libcuda.so.1 ]]; then
    say "the Windows driver's libcuda is mapped: /usr/lib/wsl/lib/libcuda.so.1"
  else
    warn "no /usr/lib/wsl/lib/libcuda.so.1: install (or update) the NVIDIA driver on Windows, then run 'wsl --shutdown' in Windows and reopen this distribution; never install a Linux driver inside WSL2"
  fi
  other=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 / { print $NF }' | grep -v '^/usr/lib/wsl/' | tr '\n' ' ' || true)
  if [[ -n $other ]]; then
    warn "a libcuda.so.1 outside /usr/lib/wsl/lib is on the loader path: ${other% }; it is not the Windows driver's: remove the package that owns it (dpkg -S ${other%% *})"
  fi
}

# --- 2. stackpin ---------------------------------------------------------------------------------
apt_updated=0
apt_update() {
  ((apt_updated)) && return 0
  need_root "apt-get"
  change "${root[@]}" apt-get update -qq
  apt_updated=1
}
apt_install() {
  if ((skip_deps)); then die "missing packages: $*" "install them: sudo apt-get install $*" "or run without --skip-deps"; fi
  apt_update
  change "${root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

# The runtime packages of a stackpin binary built elsewhere, from the libraries it lacks here.
install_runtime_deps() {
  local so p pkgs=() unknown=()
  for so in "$@"; do
    case $so in
      libarchive.so.13) p=libarchive13 ;;
      libcrypto.so.3 | libssl.so.3) p=libssl3 ;;
      libtomlplusplus.so.3) p=libtomlplusplus3 ;;
      libcurl.so.4) p=libcurl4 ;;
      liblzma.so.5) p=liblzma5 ;;
      libisal.so.2) p=libisal2 ;;
      libstdc++.so.6) p=libstdc++6 ;;
      *) unknown+=("$so"); continue ;;
    esac
    [[ " ${pkgs[*]} " == *" $p "* ]] || pkgs+=("$p")
  done
  ((${#unknown[@]} == 0)) ||
    die "stackpin needs ${unknown[*]}, which provision.sh cannot map to a package" "find the package (apt-file search ${unknown[0]}) and install it, or build stackpin here with --build-from SRC"
  if ((!skip_deps && !dry)); then
    apt_update
    # newer releases renamed some of these packages with a t64 suffix (the 64-bit time_t transition)
    for p in "${!pkgs[@]}"; do
      if apt-cache show "${pkgs[p]}t64" >/dev/null 2>&1; then pkgs[p]=${pkgs[p]}t64; fi
    done
  fi
  ((skip_deps)) || say "installing the libraries stackpin needs: ${pkgs[*]}"
  apt_install "${pkgs[@]}"
}

build_stackpin() {
  local src build
  src=$(cd "$1" && pwd) || die "no source tree at $1" "pass stackpin's source checkout with --build-from"
  [[ -f $src/CMakeLists.txt && -x $src/scripts/install-deps.sh ]] || die "$src is not a stackpin source tree" "pass stackpin's source checkout with --build-from"
  build=${XDG_CACHE_HOME:-$HOME/.cache}/stackpin/build
  say "building stackpin from $src in $build"
  if ((skip_deps)); then say "--skip-deps: not installing build dependencies"
  else change "$src/scripts/install-deps.sh"
  fi
  change cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTACKPIN_BUILD_TESTS=OFF
  change cmake --build "$build" -j"$(nproc)" --target stackpin stackpin-convtest
  if writable /usr/local/bin; then change cmake --install "$build" --prefix /usr/local
  else need_root "installing into /usr/local/bin"; change "${root[@]}" cmake --install "$build" --prefix /usr/local
  fi
  sp=/usr/local/bin/stackpin
  if ((dry)) && [[ ! -x $sp ]]; then sp=$build/src/stackpin; fi
}

find_stackpin() {
  step "getting stackpin"
  if [[ -n $build_from ]]; then build_stackpin "$build_from"
  elif [[ -n $sp ]]; then
    [[ -f $sp && -x $sp ]] || die "no executable stackpin at $sp" "pass the binary with --stackpin PATH, or build it with --build-from SRC"
    sp=$(cd "$(dirname "$sp")" && pwd)/$(basename "$sp")
  elif command -v stackpin >/dev/null; then sp=$(command -v stackpin)
  elif [[ -f $here/../CMakeLists.txt ]] && grep -q 'project(stackpin' "$here/../CMakeLists.txt"; then build_stackpin "$here/.."
  else die "no stackpin found" "pass a binary with --stackpin PATH, or a source checkout with --build-from SRC"
  fi
  if ((dry)) && [[ ! -x $sp ]]; then die "--dry-run needs a stackpin binary to plan with" "build it first, or pass --stackpin PATH"; fi
  local missing
  missing=$(ldd "$sp" 2>/dev/null | awk '/=> not found/ { print $1 }' | tr '\n' ' ' || true)
  if [[ -n $missing ]]; then
    say "$sp needs libraries this machine lacks: ${missing% }"
    # shellcheck disable=SC2086 # one soname a word
    install_runtime_deps $missing
    if ((dry)); then die "--dry-run cannot plan without a stackpin that runs" "install the packages above first"; fi
  fi
  "$sp" --version >/dev/null 2>&1 || die "$sp does not run: $("$sp" --version 2>&1 | head -n 1)" "build stackpin on this machine with --build-from SRC"
  say "using $sp: $("$sp" --version)"
}

# has_command NAME: this stackpin has the command NAME. (`stackpin NAME --help` alone is no proof:
# for a command it does not know, it prints the general help and exits 0.)
has_command() {
  local help
  help=$("$sp" "$1" --help 2>/dev/null || true)
  grep -qE "^Usage: .*stackpin $1( |\$)" <<<"$help"
}

# --- 3. the archive and the plan -----------------------------------------------------------------
plan_json=
json_string() {  # KEY: the first "KEY": "string" in the plan (stage --dry-run --json)
  local v
  v=$(grep -o "\"$1\": *\"[^\"]*\"" <<<"$plan_json" | sed -n 1p | sed 's/^[^:]*: *"//; s/"$//' || true)
  [[ -n $v ]] || die "stackpin's plan has no \"$1\" (this provision.sh and this stackpin do not match)" "use the provision.sh of the same stackpin release"
  [[ $v != *\\* ]] || die "the manifest's $1 holds a backslash or a quote, which provision.sh cannot carry" "use a plain path for [targets.linux] prefix, or pass --dest"
  printf '%s' "$v"
}

plan() {
  if [[ -z $platform ]]; then
    case $(uname -m) in
      x86_64) platform=linux-x86_64 ;;
      aarch64 | arm64) platform=linux-sbsa ;;
      *) die "no cuDNN archive platform for $(uname -m)" "pass --platform linux-x86_64, linux-sbsa or linux-aarch64" ;;
    esac
  fi
  step "verifying the $platform archive against the manifest"
  run "$sp" verify "$manifest" --archives "$archives" --platform "$platform" ||
    die "the archive in $archives is not the one $manifest pins (see above)" \
      "download the $platform archive the manifest names into $archives; a mismatch means another or a damaged file: download it again"
  local args=(stage "$manifest" --archives "$archives" --target linux --platform "$platform" --dry-run)
  [[ -z $dest ]] || args+=(--dest "$dest")
  if ! plan_json=$("$sp" "${args[@]}" --json); then
    "$sp" "${args[@]}" >/dev/null || true
    die "stackpin cannot plan the Linux target of $manifest (see above)" "fix the manifest's [targets.linux] section (layout, prefix) or pass --dest DIR"
  fi
  layout=$(json_string layout)
  prefix=$(json_string prefix)
  dest=$(json_string dest)
  if [[ $layout == deb ]]; then say "[targets.linux] layout = \"deb\": Debian packages built by stackpin deb, installed with dpkg"
  else say "[targets.linux] layout = \"$layout\", prefix = $prefix; the tree goes to $dest"
  fi
  [[ $layout == lib64 || $layout == deb ]] || die "provision.sh knows the layouts lib64 and deb, not \"$layout\"" "set [targets.linux] layout to \"lib64\" or \"deb\""
}

# --- 4a. lib64: stage, then make the loader find it ----------------------------------------------
k_marker="# added by stackpin wsl/provision.sh for"
activation=

stage_tree() {
  step "staging cuDNN into $dest"
  local args=("$sp" stage "$manifest" --archives "$archives" --target linux --platform "$platform" --dest "$dest")
  if ((dry)); then run "${args[@]}" --dry-run || die "stackpin stage --dry-run failed (see above)"; return 0; fi
  writable "$dest" || need_root "staging into $dest"
  if writable "$dest"; then run "${args[@]}"; else run "${root[@]}" "${args[@]}"; fi ||
    die "stackpin stage failed (see above)" "read stackpin's message above; a tree staged by hand or modified since can be replaced with: stackpin stage ... --force"
}

# The activation script for DEST: stage writes one for the manifest's prefix; for another DEST
# provision.sh writes its own with `stackpin generate activate --prefix DEST`.
choose_activation() {
  if [[ $dest == "$prefix" ]]; then activation=$dest/.stackpin/activate.sh; return 0; fi
  local dir=${XDG_CONFIG_HOME:-$HOME/.config}/stackpin sum
  sum=$(printf '%s' "$dest" | cksum | cut -d' ' -f1)
  activation=$dir/activate-$(basename "$dest")-$sum.sh
}

write_activation() {
  [[ $dest != "$prefix" ]] || return 0
  local tmp
  tmp=$(mktemp)
  "$sp" generate activate --shell sh "$manifest" --prefix "$dest" -o "$tmp" || { rm -f "$tmp"; die "stackpin generate activate failed (see above)"; }
  if cmp -s "$tmp" "$activation"; then say "unchanged: $activation"; rm -f "$tmp"; return 0; fi
  if ((dry)); then say "(dry run) would write $activation (for --dest $dest; stage's own script is for the prefix $prefix)"; rm -f "$tmp"; return 0; fi
  mkdir -p "$(dirname "$activation")"
  mv "$tmp" "$activation"
  chmod 0644 "$activation"
  say "wrote $activation (for --dest $dest; stage's own script is for the prefix $prefix)"
}

sq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
hook_line() { printf 'if [ -f %s ]; then . %s; fi  %s %s' "$(sq "$activation")" "$(sq "$activation")" "$k_marker" "$dest"; }

# The startup files new shells read: ~/.bashrc (interactive shells) and the login file bash reads
# (~/.bash_profile, ~/.bash_login or ~/.profile: login shells, also non-interactive ones such as
# `wsl -e bash -lc ...`; Ubuntu's ~/.bashrc returns early in those). Sourcing twice is harmless.
hook_files() {
  printf '%s\n' "$HOME/.bashrc"
  local f
  for f in .bash_profile .bash_login .profile; do
    if [[ -e $HOME/$f ]]; then printf '%s\n' "$HOME/$f"; return 0; fi
  done
  printf '%s\n' "$HOME/.profile"
}

# hooks FILE MODE [LINE]: the stackpin lines of FILE. MODE "ours": does FILE hold one for DEST
# (exit status); "others": print the DESTs of the lines for other trees; "drop": print FILE without
# ours; "replace": print FILE with ours replaced by LINE (once). Values go through the environment,
# not `awk -v`, which would interpret backslashes in them.
hooks() {
  SP_MARK="$k_marker " SP_DEST=$dest SP_MODE=$2 SP_LINE=${3:-} awk '
    BEGIN { m = ENVIRON["SP_MARK"]; d = ENVIRON["SP_DEST"]; mode = ENVIRON["SP_MODE"]; line = ENVIRON["SP_LINE"] }
    { i = index($0, m); o = i ? substr($0, i + length(m)) : "" }
    mode == "ours" { if (i && o == d) found = 1; next }
    mode == "others" { if (i && o != d) print o; next }
    i && o == d { if (mode == "replace" && !done) { print line; done = 1 } next }
    { print }
    END { if (mode == "ours") exit !found }' "$1"
}

# rewrite FILE MODE [LINE]: FILE's content replaced by `hooks FILE MODE LINE` (owner and mode kept)
rewrite() {
  local tmp
  tmp=$(mktemp)
  hooks "$1" "$2" "${3:-}" >"$tmp"
  cat "$tmp" >"$1"
  rm -f "$tmp"
}

# add_hook FILE: our line in FILE exactly once (replacing an older line for the same DEST)
add_hook() {
  local file=$1 line
  line=$(hook_line)
  if [[ -f $file ]] && grep -qxF -- "$line" "$file"; then say "unchanged: $file already sources $activation"; return 0; fi
  if ((dry)); then say "(dry run) would add to $file: $line"; return 0; fi
  if [[ -f $file ]] && hooks "$file" ours; then
    rewrite "$file" replace "$line"
    say "updated the stackpin line in $file: $line"
  else
    printf '%s\n' "$line" >>"$file"
    say "added to $file: $line"
  fi
}

remove_hook() {
  local file=$1
  if [[ ! -f $file ]] || ! hooks "$file" ours; then say "unchanged: no stackpin line for $dest in $file"; return 0; fi
  if ((dry)); then say "(dry run) would remove the stackpin line for $dest from $file"; return 0; fi
  rewrite "$file" drop
  say "removed the stackpin line for $dest from $file"
}

hook_shells() {
  choose_activation
  step "making new shells find the tree (LD_LIBRARY_PATH through $activation)"
  write_activation
  local f others
  while IFS= read -r f; do
    add_hook "$f"
    others=
    if [[ -f $f ]]; then others=$(hooks "$f" others | tr '\n' ' '); fi
    if [[ -n $others ]]; then warn "$f also activates other stackpin trees: ${others% } (the line added last wins; provision.sh --undo with that tree's options removes its line)"; fi
  done < <(hook_files)
  say "open a new shell (or run: . $(sq "$activation")) to use it"
}

ld_conf_file=
system_ldconfig() {
  step "registering $dest/lib64 with the loader for every user (/etc/ld.so.conf.d)"
  local tmp
  tmp=$(mktemp)
  "$sp" generate ldconfig "$manifest" --prefix "$dest" -o "$tmp" || { rm -f "$tmp"; die "stackpin generate ldconfig failed (see above)" "use a --dest without spaces or '#', or drop --system"; }
  ld_conf_file=$(sed -n 's|^# Install as \(/etc/ld\.so\.conf\.d/[^ ]*\.conf\), then run ldconfig\.$|\1|p' "$tmp")
  [[ -n $ld_conf_file ]] || ld_conf_file=/etc/ld.so.conf.d/stackpin-$(basename "$dest").conf
  if ((undo)); then
    rm -f "$tmp"
    if [[ -e $ld_conf_file ]]; then change "${root[@]}" rm -f "$ld_conf_file"; change "${root[@]}" ldconfig
    else say "unchanged: no $ld_conf_file"
    fi
    return 0
  fi
  if cmp -s "$tmp" "$ld_conf_file"; then say "unchanged: $ld_conf_file"; rm -f "$tmp"; return 0; fi
  chmod 0644 "$tmp"
  need_root "writing $ld_conf_file"
  change "${root[@]}" cp "$tmp" "$ld_conf_file"
  rm -f "$tmp"
  change "${root[@]}" ldconfig
}

# --- 4b. deb: build the packages with stackpin, install them with dpkg ---------------------------
deb_packages() {
  step "building and installing the cuDNN packages (stackpin deb)"
  local help flag out f pkg ver status new=()
  help=$("$sp" deb --help 2>&1 || true)
  has_command deb || die "this stackpin has no deb command, which the manifest's layout = \"deb\" needs" \
    "use a newer stackpin, or set [targets.linux] layout = \"lib64\""
  local args=(deb "$manifest" --archives "$archives")
  if grep -q -- '--out-dir' <<<"$help"; then flag=--out-dir; else flag=--out; fi
  if grep -q -- '--platform' <<<"$help"; then args+=(--platform "$platform"); fi
  deb_out=${deb_out:-${XDG_CACHE_HOME:-$HOME/.cache}/stackpin/debs/$(basename "$manifest" .toml)}
  if ((dry)); then printf '  (dry run) would run: %s\n' "$(quoted "$sp" "${args[@]}" "$flag" "$deb_out")"; say "(dry run) then dpkg -i the packages it writes"; return 0; fi
  out=$(mktemp -d)
  run "$sp" "${args[@]}" "$flag" "$out" || { rm -rf "$out"; die "stackpin deb failed (see above)"; }
  mkdir -p "$deb_out"
  for f in "$out"/*.deb; do
    [[ -e $f ]] || { rm -rf "$out"; die "stackpin deb wrote no package into $out"; }
    mv -f "$f" "$deb_out/"
    f=$deb_out/$(basename "$f")
    pkg=$(dpkg-deb -f "$f" Package) ver=$(dpkg-deb -f "$f" Version)
    status=$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null || true)
    if [[ $status == "install ok installed $ver" ]]; then say "unchanged: $pkg $ver is installed"; else new+=("$f"); fi
  done
  rm -rf "$out"
  ((${#new[@]} == 0)) && return 0
  need_root "dpkg -i"
  run "${root[@]}" dpkg -i "${new[@]}" || die "dpkg -i failed (see above)" "if it names missing dependencies: sudo apt-get -f install"
}

undo_debs() {
  step "removing the cuDNN packages"
  deb_out=${deb_out:-${XDG_CACHE_HOME:-$HOME/.cache}/stackpin/debs/$(basename "$manifest" .toml)}
  local f pkg pkgs=()
  for f in "$deb_out"/*.deb; do
    [[ -e $f ]] || continue
    pkg=$(dpkg-deb -f "$f" Package)
    if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then pkgs+=("$pkg"); fi
  done
  if ((${#pkgs[@]} == 0)); then say "unchanged: none of the packages in $deb_out is installed"; return 0; fi
  change "${root[@]}" dpkg -r "${pkgs[@]}"
}

# --- 5. proof ------------------------------------------------------------------------------------
in_env() {  # CMD...: run CMD the way a new shell would (with the activation sourced)
  # shellcheck disable=SC1090 # stackpin's generated activation script
  if [[ -n $activation && -f $activation ]]; then (. "$activation" && "$@"); else "$@"; fi
}

doctor() {
  has_command doctor || { say "this stackpin has no doctor command; skipped"; return 0; }
  step "stackpin doctor"
  if ((dry)); then printf '  (dry run) would run: %s\n' "$(quoted "$sp" doctor --manifest "$manifest")"; return 0; fi
  show "$sp" doctor --manifest "$manifest"
  local rc=0
  in_env "$sp" doctor --manifest "$manifest" || rc=$?
  case $rc in
    0) ;;
    3) warn "doctor: no GPU to check against (exit 3)" ;;
    *) warn "doctor reported problems (exit $rc): its findings above say how to fix each" ;;
  esac
}

convtest() {
  step "stackpin convtest (loads CUDA and cuDNN as an application would)"
  if ((skip_convtest)); then say "--skip-convtest: skipped"; return 0; fi
  if ((dry)); then printf '  (dry run) would run: %s\n' "$(quoted "$sp" convtest --manifest "$manifest")"; return 0; fi
  show "$sp" convtest --manifest "$manifest"
  local rc=0
  in_env "$sp" convtest --manifest "$manifest" || rc=$?
  case $rc in
    0) say "convtest passed" ;;
    3)
      if ((is_wsl)); then warn "convtest: no GPU to run on (exit 3): check the Windows NVIDIA driver (nvidia-smi, /usr/lib/wsl/lib/libcuda.so.1)"
      else warn "convtest: no GPU to run on (exit 3); the libraries it loaded are listed above"
      fi ;;
    *) die "convtest failed (exit $rc): cuDNN is staged but the stack does not work yet" \
      "each finding above names its fix (a missing CUDA runtime: install the CUDA toolkit; under WSL2 NVIDIA's WSL-Ubuntu toolkit package, never a driver)" ;;
  esac
}

finish() {
  printf '\n'
  if ((dry)); then say "dry run: nothing was changed"; fi
  if ((${#warnings[@]})); then
    say "done, with ${#warnings[@]} warning(s):"
    local w
    for w in "${warnings[@]}"; do printf '  - %s\n' "$w"; done
  else
    say "done"
  fi
}

check_machine
find_stackpin
plan
if ((undo)); then
  if [[ $layout == deb ]]; then undo_debs
  else
    if ((system)); then system_ldconfig
    else
      step "removing the shell hook"
      choose_activation
      while IFS= read -r f; do remove_hook "$f"; done < <(hook_files)
      if [[ $dest != "$prefix" && -e $activation ]]; then change rm -f "$activation"; fi
    fi
    step "unstaging $dest"
    if [[ ! -e $dest/.stackpin/receipt.json ]]; then say "unchanged: nothing staged in $dest"
    elif writable "$dest"; then change "$sp" unstage --dest "$dest"
    else change "${root[@]}" "$sp" unstage --dest "$dest"
    fi
  fi
  finish
  exit 0
fi
if [[ $layout == deb ]]; then
  deb_packages
else
  stage_tree
  if ((system)); then system_ldconfig; else hook_shells; fi
fi
doctor
convtest
finish
