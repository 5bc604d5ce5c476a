#!/usr/bin/env python3
"""Runs clang-tidy on files of a build's compile database, keeping each file's result in a cache.

    scripts/tidy.py BUILD_DIR FILE...

A FILE may be a unity batch (cmake/build_speed.cmake), which includes its member sources: clang-tidy
then parses the headers once for all of them and reports findings in the members.

Prints clang-tidy's output for every file (from the cache or from a new run) on stdout, and on
stderr how many results came from the cache. scripts/lint.sh reads the findings from the output.

A result is reused only when nothing it depends on changed: the file's bytes (a batch's: its members'), its compile command,
clang-tidy's version, .clang-tidy, every header and include file of the project, and the versions
of the Debian packages whose headers the sources include. The checkout's own path is taken out of
the key and of the stored output, so a second clone reuses the results of the first. The cache is
${XDG_CACHE_HOME:-~/.cache}/stackpin/clang-tidy; deleting it only costs time.
"""
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys

# the packages whose headers src/ includes (scripts/install-deps.sh), and the C++ library's
HEADER_PACKAGES = [
    "libstdc++-12-dev", "libcli11-dev", "libtomlplusplus-dev", "nlohmann-json3-dev", "libarchive-dev",
    "libssl-dev", "libcurl4-openssl-dev", "liblzma-dev", "zlib1g-dev", "libisal-dev", "libc6-dev",
]
PLACEHOLDER = "@STACKPIN_CHECKOUT@"


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False, **kw)


def common_key(root):
    h = hashlib.sha256()
    h.update(run(["clang-tidy", "--version"]).stdout.encode())
    with open(os.path.join(root, ".clang-tidy"), "rb") as f:
        h.update(f.read())
    headers = run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "src/*.hpp", "src/*.h",
                   "src/*.inc"]).stdout.split()
    for rel in sorted(headers):
        h.update(rel.encode() + b"\0")
        with open(os.path.join(root, rel), "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    h.update(run(["dpkg-query", "-W", *HEADER_PACKAGES]).stdout.encode())
    lzma = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                        "stackpin", "liblzma-5.8.1", ".stackpin-built")
    if os.path.exists(lzma):
        with open(lzma, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, files = sys.argv[1], sys.argv[2:]
    root = os.getcwd()
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        commands = {os.path.normpath(e["file"]): e for e in json.load(f)}
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "stackpin", "clang-tidy")
    os.makedirs(cache, exist_ok=True)
    common = common_key(root)

    def key_of(rel):
        entry = commands.get(os.path.normpath(os.path.join(root, rel)))
        if entry is None:
            raise SystemExit(f"tidy.py: {rel} is not in {build}/compile_commands.json")
        command = entry.get("command") or shlex.join(entry["arguments"])
        h = hashlib.sha256(common.encode())
        h.update(command.replace(root, PLACEHOLDER).replace(os.path.abspath(build), PLACEHOLDER + "/build").encode())
        with open(rel, "rb") as src:
            text = src.read()
        h.update(text)
        # a unity batch (cmake/build_speed.cmake) is its members: their bytes are the key too
        for member in re.findall(rb'^#include "([^"]+\.cpp)"', text, re.M):
            path = os.path.normpath(os.path.join(os.path.dirname(rel), member.decode()))
            h.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
        return h.hexdigest()

    def tidy(rel):
        # -Wno-error: a CI build's -Werror must not turn the compiler's own warnings into tidy errors
        r = run(["clang-tidy", "-p", build, "--quiet", "--extra-arg=-Wno-error", rel])
        out = r.stdout.replace(root, PLACEHOLDER)
        # a run that was killed, or failed without a finding to show for it, is no result: it is
        # reported as an error and not kept, so the next run checks the file again
        if r.returncode < 0 or (r.returncode != 0 and not re.search(r"(warning|error): ", out)):
            return f"{PLACEHOLDER}/{rel}:1:1: error: clang-tidy exited with {r.returncode} and no finding\n{out}", False
        return out, True

    keys = {rel: key_of(rel) for rel in files}
    results, misses = {}, []
    for rel, key in keys.items():
        path = os.path.join(cache, key)
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                results[rel] = f.read()
        else:
            misses.append(rel)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for rel, (out, keep) in zip(misses, pool.map(tidy, misses)):
            results[rel] = out
            if not keep:
                continue
            tmp = os.path.join(cache, f".{keys[rel]}.{os.getpid()}")
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(out)
            os.replace(tmp, os.path.join(cache, keys[rel]))
    for rel in files:
        sys.stdout.write(results[rel].replace(PLACEHOLDER, root))
    print(f"tidy.py: {len(files) - len(misses)} of {len(files)} results from the cache ({cache})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
