#!/usr/bin/env bash
# The Docker engine and local images that stackpin's container tests (ctest label `container`)
# use. These machines have no systemd and no reachable registry (../shared/containers.md), so the
# engine is started by hand and every image is built here, from Debian's archive and this
# machine's CUDA toolkit.
#
#   scripts/container-engine.sh start [--holder PID]   start dockerd unless an engine already answers
#   scripts/container-engine.sh stop [--holder PID]    stop the engine this script started; with
#                                                      --holder, only once no other holder is alive
#                                                      and no plain `start` (by hand) holds it
#   scripts/container-engine.sh images                 build the test images that are missing
#   scripts/container-engine.sh status                 what answers, what this script started, images
#
# Images (each built only when missing or out of date; `images` says which it did):
#   local/debian:bookworm           debootstrap --variant=minbase bookworm, imported with docker import;
#                                   the root file system is cached as a tar (about 200 MB, the
#                                   download is the slow part: 40-95 s the first time, ~5 s after)
#   local/cuda-runtime:bookworm     the Debian base plus libcudart from $CUDA_HOME (a stand-in for
#                                   NVIDIA's runtime image, which cannot be pulled here); skipped
#                                   when no toolkit is installed
#   local/stackpin-runtime:bookworm the Debian base plus the shared libraries a host-built stackpin
#                                   needs (libarchive, OpenSSL, toml++), from Debian's archive
#
# Environment:
#   STACKPIN_DOCKER           the client (default /usr/bin/docker, Debian's; another client without
#                             buildx may come first on PATH)
#   STACKPIN_DOCKERD          the daemon (default: dockerd on PATH)
#   STACKPIN_CONTAINER_STATE  pid, holders, log (default /run/stackpin-containers)
#   STACKPIN_CONTAINER_CACHE  the cached root file system (default /var/cache/stackpin-containers)
#   STACKPIN_DEBIAN_MIRROR    debootstrap's mirror (default http://deb.debian.org/debian)
#   CUDA_HOME                 the toolkit libcudart is copied from (default /usr/local/cuda)
set -euo pipefail

docker=${STACKPIN_DOCKER:-/usr/bin/docker}
[[ -x $docker ]] || docker=$(command -v docker || echo /usr/bin/docker)
dockerd=${STACKPIN_DOCKERD:-$(command -v dockerd || echo /usr/sbin/dockerd)}
state=${STACKPIN_CONTAINER_STATE:-/run/stackpin-containers}
cache=${STACKPIN_CONTAINER_CACHE:-/var/cache/stackpin-containers}
mirror=${STACKPIN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
wait_s=${STACKPIN_ENGINE_WAIT:-30}

base_image=local/debian:bookworm
cuda_image=local/cuda-runtime:bookworm
runtime_image=local/stackpin-runtime:bookworm
# The Debian 12 runtime packages behind the -dev packages scripts/install-deps.sh builds with
# (the libraries `ldd build/src/stackpin` lists beyond those of minbase).
runtime_pkgs=(libarchive13 libssl3 libtomlplusplus3 libcurl4 libisal2)

say() { printf 'container-engine: %s\n' "$*"; }
die() { printf 'container-engine: error: %s\n' "$*" >&2; exit 1; }

engine_answers() { "$docker" info >/dev/null 2>&1; }

# The pid of the dockerd this script started, when it is still that process.
our_pid() {
  local pid
  [[ -f $state/dockerd.pid ]] || return 1
  pid=$(<"$state/dockerd.pid")
  [[ $pid =~ ^[0-9]+$ ]] && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == dockerd ]] || return 1
  printf '%s\n' "$pid"
}

lock_state() {
  mkdir -p "$state/holders"
  exec 9>"$state/lock"
  flock 9
}

# Who uses the engine this script started: a pid per `start --holder PID`, and "manual" for a
# plain `start` (by hand), which only a plain `stop` ends.
add_holder() { : >"$state/holders/${1:-manual}"; }

# Drops holders that are this one or no longer alive; prints those left.
live_holders() {
  local f pid
  for f in "$state"/holders/*; do
    [[ -e $f ]] || continue
    pid=${f##*/}
    if [[ $pid == manual ]]; then printf 'manual '
    elif [[ $pid == "${1:-}" ]] || ! kill -0 "$pid" 2>/dev/null; then rm -f "$f"
    else printf '%s ' "$pid"
    fi
  done
}

cmd_start() {
  local holder=$1 pid i
  [[ -x $docker ]] || die "no Docker client at $docker: install docker.io (scripts/install-deps.sh --tools) or set STACKPIN_DOCKER"
  lock_state
  if pid=$(our_pid); then
    add_holder "$holder"
    if engine_answers; then say "engine already running (dockerd pid $pid, started by this script)"; return 0; fi
  elif engine_answers; then
    say "an engine already answers ($("$docker" version --format '{{.Server.Version}}' 2>/dev/null || echo unknown version)); not starting one, and stop will leave it alone"
    return 0
  else
    [[ -x $dockerd ]] || die "no engine answers and there is no dockerd at $dockerd: install docker.io (scripts/install-deps.sh --tools)"
    [[ $(id -u) -eq 0 ]] || die "no engine answers, and starting dockerd needs root"
    # dockerd needs cgroups; without systemd nothing may have mounted them
    if [[ ! -e /sys/fs/cgroup/cgroup.controllers ]] && ! grep -q '^cgroup ' /proc/mounts && command -v cgroupfs-mount >/dev/null; then
      say "no cgroups mounted; mounting them (cgroupfs-mount)"
      cgroupfs-mount
    fi
    say "no engine answers; starting $dockerd (log: $state/dockerd.log)"
    # (9>&-: the daemon must not inherit the state lock, or every later start and stop waits on it)
    setsid "$dockerd" >"$state/dockerd.log" 2>&1 </dev/null 9>&- &
    pid=$!
    printf '%s\n' "$pid" >"$state/dockerd.pid"
    add_holder "$holder"
  fi
  for ((i = 0; i < wait_s * 2; i++)); do
    if engine_answers; then say "engine up (dockerd pid $pid) after $((i / 2)) s"; return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$state/dockerd.pid"
      tail -n 20 "$state/dockerd.log" >&2 || true
      die "dockerd exited while starting (log above, full log: $state/dockerd.log)"
    fi
    sleep 0.5
  done
  tail -n 20 "$state/dockerd.log" >&2 || true
  die "dockerd (pid $pid) did not answer within ${wait_s} s; it is left running: $0 stop ends it"
}

cmd_stop() {
  local holder=$1 pid left i
  lock_state
  if ! pid=$(our_pid); then
    rm -f "$state/dockerd.pid" "$state"/holders/*
    say "no engine started by this script is running; nothing to stop"
    return 0
  fi
  left=$(live_holders "$holder")
  if [[ -n $holder && -n $left ]]; then
    say "leaving dockerd (pid $pid) running: still used by ${left% } (a plain \`$0 stop\` stops it anyway)"
    return 0
  fi
  say "stopping dockerd (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 40; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "dockerd did not stop within 20 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$state/dockerd.pid" "$state"/holders/*
  say "engine stopped"
}

image_label() {  # IMAGE LABEL: the label's value, empty when the image or the label is missing
  "$docker" image inspect --format "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true
}

build_base() {
  local tar=$cache/debian-bookworm-minbase.tar rootfs started
  if "$docker" image inspect "$base_image" >/dev/null 2>&1; then
    say "$base_image: present"
    return 0
  fi
  started=$SECONDS
  mkdir -p "$cache"
  if [[ -s $tar ]]; then
    say "$base_image: importing the cached root file system $tar"
  else
    command -v debootstrap >/dev/null || die "debootstrap is not installed (scripts/install-deps.sh --tools installs it)"
    rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
    say "$base_image: debootstrap --variant=minbase bookworm from $mirror (once; cached in $tar)"
    if ! debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1; then
      tail -n 20 "$cache/debootstrap.log" >&2 || true
      rm -rf "$rootfs"
      die "debootstrap failed (log above, full log: $cache/debootstrap.log); is $mirror reachable?"
    fi
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" --numeric-owner -cf "$tar.part" .
    mv "$tar.part" "$tar"
    rm -rf "$rootfs"
  fi
  "$docker" import --change 'CMD ["/bin/bash"]' --change 'LABEL stackpin.image=debian-bookworm-minbase' \
    "$tar" "$base_image" >/dev/null
  say "$base_image: built in $((SECONDS - started)) s"
}

build_cuda_runtime() {
  local real sum ctx started
  real=$(readlink -f "$cuda_home/lib64/libcudart.so" 2>/dev/null || true)
  if [[ -z $real || ! -f $real ]]; then
    say "$cuda_image: skipped: no CUDA toolkit with libcudart.so under $cuda_home/lib64 (set CUDA_HOME)"
    return 0
  fi
  sum=$(sha256sum "$real" | cut -d' ' -f1)
  if [[ $(image_label "$cuda_image" stackpin.cudart-sha256) == "$sum" ]]; then
    say "$cuda_image: present (libcudart from $real)"
    return 0
  fi
  started=$SECONDS
  ctx=$(mktemp -d)
  mkdir "$ctx/lib"
  # The real file and every libcudart.so.* link to it (the soname link is what loaders ask for).
  cp -a "$cuda_home"/lib64/libcudart.so.* "$ctx/lib/"
  cp "$real" "$ctx/lib/"
  cat >"$ctx/Dockerfile" <<EOF
FROM $base_image
COPY lib/ /usr/local/cuda/lib64/
RUN echo /usr/local/cuda/lib64 >/etc/ld.so.conf.d/000-cuda.conf && ldconfig
LABEL stackpin.image=cuda-runtime stackpin.cudart="$(basename "$real")" stackpin.cudart-sha256="$sum"
EOF
  if ! DOCKER_BUILDKIT=0 "$docker" build -q --network none -t "$cuda_image" "$ctx" >/dev/null; then
    rm -rf "$ctx"
    die "$cuda_image: docker build failed"
  fi
  rm -rf "$ctx"
  say "$cuda_image: built in $((SECONDS - started)) s (libcudart from $real)"
}

build_stackpin_runtime() {
  local want=${runtime_pkgs[*]} recipe ctx started
  recipe="2: ${runtime_pkgs[*]}"  # a new recipe (or package list) rebuilds the image
  if [[ $(image_label "$runtime_image" stackpin.recipe) == "$recipe" ]]; then
    say "$runtime_image: present ($want)"
    return 0
  fi
  started=$SECONDS
  ctx=$(mktemp -d)
  cat >"$ctx/Dockerfile" <<EOF
FROM $base_image
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $want >/dev/null \\
 && apt-get clean && rm -rf /var/lib/apt/lists/*
LABEL stackpin.image=stackpin-runtime stackpin.recipe="$recipe"
EOF
  if ! DOCKER_BUILDKIT=0 "$docker" build -q -t "$runtime_image" "$ctx" >/dev/null; then
    rm -rf "$ctx"
    die "$runtime_image: docker build failed (it installs $want from Debian's archive: is it reachable?)"
  fi
  rm -rf "$ctx"
  say "$runtime_image: built in $((SECONDS - started)) s ($want)"
}

cmd_images() {
  engine_answers || die "no engine answers: run $0 start first"
  build_base
  build_cuda_runtime
  build_stackpin_runtime
  # the images rebuilt here leave their previous versions dangling
  "$docker" image prune --force --filter label=stackpin.image >/dev/null
}

cmd_status() {
  local pid
  if engine_answers; then say "engine answers ($docker)"; else say "no engine answers ($docker)"; fi
  if pid=$(our_pid); then
    say "started by this script: dockerd pid $pid; holders: $(live_holders '')"
  else
    say "no engine started by this script"
  fi
  if engine_answers; then
    for img in "$base_image" "$cuda_image" "$runtime_image"; do
      if "$docker" image inspect "$img" >/dev/null 2>&1; then say "image $img: present"; else say "image $img: missing"; fi
    done
  fi
}

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

cmd=${1:-}
shift || true
holder=
while (($#)); do
  case $1 in
    --holder) holder=${2:?--holder needs a pid}; shift 2 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
case $cmd in
  start) cmd_start "$holder" ;;
  stop) cmd_stop "$holder" ;;
  images) cmd_images ;;
  status) cmd_status ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
