#!/usr/bin/env python3
"""Hostile archives nobody on this project wrote, through stackpin's stage, verify and deb.

Other projects keep corpora of archives that broke their readers: libarchive's test archives
(libarchive/test/*.uu), Go's archive/tar and archive/zip testdata, and the zip-slip sample sets.
This script builds a corpus from copies of those repositories (a checkout or a bare git
directory each; nothing is downloaded), and runs stackpin over every archive:

    scripts/hostile-corpus.py build OUT SOURCE...
    scripts/hostile-corpus.py run OUT [--stackpin BIN] [--report FILE] [--timeout S]

`build` writes OUT/archives/<n>-<name> for each archive found in the SOURCEs, twice where it can:
as it is, and "wrapped", its members moved under the top directory of an NVIDIA archive and put
beside a valid cuDNN 9.1.0.70 layout, so that stackpin's layout checks pass and the hostile
members are judged where they would be staged. Formats stackpin does not read are kept (they
must be refused by name, not by a decoder). Nothing of the corpus is committed (the licences of
those test files are theirs); this script is.

`run` pins each archive by a manifest of its own (origin = "local": its real SHA-256 and size, as
a tampered download made to match a hostile pin would be) under NVIDIA's file name, then runs
`stackpin verify`, `stackpin stage --target linux` (tar forms) or `--target windows` (zips), and
`stackpin deb` (Linux), each in a fresh sandbox with a user's file in DEST and a sentinel tree
beside it. It records per archive and command the exit code, the first line of the error, and
checks that: nothing outside DEST (or the package folder) changed; a refused run left DEST as it
was; a staged DEST is intact by `stackpin status`; no run took longer than the timeout; no run
ended with an internal error (exit 70) or a message without a reason ("unknown error"). The
report lists every problem; the exit status is 1 when there is one.
"""
import argparse
import hashlib
import io
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

VERSION = "9.1.0.70"
LINUX_TOP = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive"
WINDOWS_TOP = "cudnn-windows-x86_64-9.1.0.70_cuda12-archive"
LINUX_NAME = LINUX_TOP + ".tar.xz"
WINDOWS_NAME = WINDOWS_TOP + ".zip"
VERSION_H = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n"


# ---- reading the sources --------------------------------------------------------------------------

class Source:
    """A repository copy: a work tree, or a bare git directory (read with git show)."""

    def __init__(self, path):
        self.path = path
        self.bare = os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects"))
        self.name = os.path.basename(os.path.dirname(path.rstrip("/")) if self.bare else path.rstrip("/"))

    def files(self):
        if self.bare:
            out = subprocess.run(["git", "--git-dir", self.path, "ls-tree", "-r", "--name-only", "HEAD"], check=True,
                                 capture_output=True, text=True).stdout
            return sorted(out.splitlines())
        found = []
        for root, _, names in os.walk(self.path):
            if "/.git" in root:
                continue
            for n in names:
                found.append(os.path.relpath(os.path.join(root, n), self.path))
        return sorted(found)

    def read(self, rel):
        if self.bare:
            return subprocess.run(["git", "--git-dir", self.path, "show", "HEAD:" + rel], check=True, capture_output=True).stdout
        with open(os.path.join(self.path, rel), "rb") as f:
            return f.read()


def uudecode(text):
    """The file inside a uuencoded text (libarchive's test archives are kept that way)."""
    out = bytearray()
    inside = False
    for line in text.splitlines():
        if not inside:
            inside = line.startswith(b"begin ")
            continue
        if line.strip() in (b"end", b""):
            if line.strip() == b"end":
                break
            continue
        n = (line[0] - 32) & 63
        if n == 0:
            continue
        data = bytearray()
        for i in range(1, len(line), 4):
            chunk = [(c - 32) & 63 for c in line[i:i + 4]] + [0] * 4
            data += bytes([(chunk[0] << 2 | chunk[1] >> 4) & 255, (chunk[1] << 4 | chunk[2] >> 2) & 255,
                           (chunk[2] << 6 | chunk[3]) & 255])
        out += data[:n]
    return bytes(out)


ARCHIVE_EXTS = (".tar", ".tgz", ".tar.gz", ".tar.xz", ".txz", ".tar.bz2", ".tar.zst", ".zip", ".7z", ".rar", ".gz", ".xz",
                ".bz2", ".cpio", ".iso", ".cab", ".lzh", ".ar", ".a", ".pax", ".zipx", ".jar", ".lha", ".warc", ".mtree",
                ".xar", ".rpm", ".lz4", ".lz", ".lzma", ".zst", ".Z", ".sparse")


def is_archive_name(rel):
    base = rel.lower()
    if base.endswith(".uu"):
        base = base[:-3]
    return any(base.endswith(e.lower()) for e in ARCHIVE_EXTS) or "/testdata/" in rel and "." not in os.path.basename(rel)


def collect(source):
    """(name, bytes) of every archive of a source worth trying."""
    for rel in source.files():
        low = rel.lower()
        if "libarchive" in source.path and not low.startswith("libarchive/test/"):
            continue
        if not is_archive_name(rel):
            continue
        try:
            data = source.read(rel)
        except subprocess.CalledProcessError:
            continue
        if low.endswith(".uu"):
            data = uudecode(data)
            rel = rel[:-3]
        if not data or len(data) > (64 << 20):
            continue
        yield source.name + "/" + rel, data


# ---- wrapping ---------------------------------------------------------------------------------------

def layout_tar_members(top):
    files = {top + "/LICENSE": b"Test licence.\n", top + "/include/cudnn.h": b"/* cudnn.h */\n",
             top + "/include/cudnn_version.h": VERSION_H.encode(), top + "/lib/libcudnn.so.9.1.0": b"\x7fELF not really\n"}
    return files, {top + "/lib/libcudnn.so.9": "libcudnn.so.9.1.0", top + "/lib/libcudnn.so": "libcudnn.so.9"}


def prefixed(top, name):
    return name if name.startswith("/") else top + "/" + name


def wrap_tar(data):
    """The tar's members under the Linux top directory, beside a valid layout; None if unreadable."""
    try:
        src = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
        members = src.getmembers()
    except Exception:
        return None
    # tarfile cannot write sparse members back, and reads them into memory whole: those stay raw
    if any(m.issparse() or m.size > (16 << 20) for m in members):
        return None
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as dst:
        files, links = layout_tar_members(LINUX_TOP)
        for name, body in files.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(body)
            dst.addfile(ti, io.BytesIO(body))
        for name, target in links.items():
            ti = tarfile.TarInfo(name)
            ti.type = tarfile.SYMTYPE
            ti.linkname = target
            dst.addfile(ti)
        for m in members:
            ti = tarfile.TarInfo(prefixed(LINUX_TOP, m.name))
            ti.type, ti.mode, ti.linkname, ti.size = m.type, m.mode, m.linkname, m.size
            if m.islnk():
                ti.linkname = prefixed(LINUX_TOP, m.linkname)
            body = None
            if m.isreg():
                try:
                    body = src.extractfile(m).read()
                except Exception:
                    body = b""
                ti.size = len(body)
            else:
                ti.size = 0
            try:
                dst.addfile(ti, io.BytesIO(body) if body is not None else None)
            except Exception:
                return None
    return out.getvalue()


def wrap_zip(data):
    """The zip's members under the Windows top directory, beside a valid layout; None if unreadable."""
    try:
        src = zipfile.ZipFile(io.BytesIO(data))
        infos = src.infolist()
    except Exception:
        return None
    if any(i.file_size > (16 << 20) for i in infos):
        return None
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, body in {WINDOWS_TOP + "/LICENSE": b"Test licence.\n", WINDOWS_TOP + "/include/cudnn.h": b"/* cudnn.h */\n",
                           WINDOWS_TOP + "/include/cudnn_version.h": VERSION_H.encode(), WINDOWS_TOP + "/bin/cudnn64_9.dll": b"MZ\n",
                           WINDOWS_TOP + "/lib/x64/cudnn.lib": b"!<arch>\n"}.items():
            dst.writestr(name, body)
        for i in infos:
            try:
                body = src.read(i)
            except Exception:
                body = b""
            zi = zipfile.ZipInfo(prefixed(WINDOWS_TOP, i.filename), date_time=(2024, 1, 1, 0, 0, 0))
            zi.external_attr, zi.create_system = i.external_attr, i.create_system
            try:
                dst.writestr(zi, body)
            except Exception:
                return None
    return out.getvalue()


def build(args):
    out = os.path.join(args.out, "archives")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    n = 0
    for path in args.sources:
        for name, data in collect(Source(path)):
            safe = name.replace("/", "__")
            n += 1
            with open(os.path.join(out, "%04d-raw-%s" % (n, safe)), "wb") as f:
                f.write(data)
            wrapped = wrap_zip(data) if data[:2] == b"PK" else wrap_tar(data)
            if wrapped:
                n += 1
                with open(os.path.join(out, "%04d-wrapped-%s" % (n, safe)), "wb") as f:
                    f.write(wrapped)
    print("hostile-corpus: %d archives in %s" % (n, out))


# ---- running ----------------------------------------------------------------------------------------

def snapshot(root, skip=()):
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        if any(rel_dir == s or rel_dir.startswith(s + os.sep) for s in skip):
            dirnames[:] = []
            continue
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            if any(rel == s or rel.startswith(s + os.sep) for s in skip):
                continue
            if os.path.islink(p):
                seen[rel] = "link " + os.readlink(p)
            elif os.path.isdir(p):
                seen[rel] = "dir"
            else:
                with open(p, "rb") as f:
                    seen[rel] = "file " + hashlib.sha256(f.read()).hexdigest()
    return seen


def manifest(windows, sha256, size):
    platform, name = ("windows-x86_64", WINDOWS_NAME) if windows else ("linux-x86_64", LINUX_NAME)
    targets = "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\tools\\cudnn\\v9.1.0'\n" if windows else \
        "[targets.linux]\nlayout = \"lib64\"\nprefix = \"/opt/cudnn\"\n"
    return ("schema = 1\nname = \"hostile\"\n[cuda]\nversion = \"12.4.1\"\n[cudnn]\nversion = \"%s\"\ncuda = 12\n"
            "[[cudnn.archives]]\nplatform = \"%s\"\norigin = \"local\"\nfile = \"%s\"\nsha256 = \"%s\"\nsize = %d\n%s"
            % (VERSION, platform, name, sha256, size, targets))


def first_error(stderr):
    for line in stderr.splitlines():
        if line.startswith("error:"):
            return line[len("error:"):].strip()
    return stderr.strip().splitlines()[0] if stderr.strip() else ""


def run_one(binary, archive, command, timeout):
    data = open(archive, "rb").read()
    windows = data[:2] == b"PK"
    if command == "deb" and windows:
        return None
    box = tempfile.mkdtemp(prefix="hostile-")
    try:
        os.makedirs(os.path.join(box, "archives"))
        os.makedirs(os.path.join(box, "outside"))
        os.makedirs(os.path.join(box, "dest", "include"))
        with open(os.path.join(box, "outside", "keep.txt"), "w") as f:
            f.write("untouched\n")
        with open(os.path.join(box, "dest", "include", "mine.h"), "w") as f:
            f.write("the user's\n")
        shutil.copyfile(archive, os.path.join(box, "archives", WINDOWS_NAME if windows else LINUX_NAME))
        with open(os.path.join(box, "stack.toml"), "w") as f:
            f.write(manifest(windows, hashlib.sha256(data).hexdigest(), len(data)))
        m, arch, dest, debs = (os.path.join(box, x) for x in ("stack.toml", "archives", "dest", "debs"))
        argv = {"verify": [binary, "verify", m, "--archives", arch],
                "stage": [binary, "stage", m, "--archives", arch, "--target", "windows" if windows else "linux", "--dest", dest,
                          "--max-unpacked", str(256 << 20)],
                "deb": [binary, "deb", m, "--archives", arch, "--out-dir", debs, "--max-unpacked", str(256 << 20)]}[command]
        outside_before = snapshot(box, skip=("dest", "debs"))
        dest_before = snapshot(dest)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout,
                               env=dict(os.environ, LANG="C.UTF-8"))
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        seconds = time.monotonic() - start
        rss_mib = (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024.0
        problems = []
        if rc == "timeout":
            problems.append("took longer than %d s" % timeout)
        elif rc == 70 or rc < 0:
            problems.append("ended with %s" % ("an internal error (exit 70)" if rc == 70 else "signal %d" % -rc))
        if snapshot(box, skip=("dest", "debs")) != outside_before:
            problems.append("changed something outside DEST")
        outcome = "ok" if rc == 0 else "refused"
        if command == "stage":
            if rc == 0:
                st = subprocess.run([binary, "status", "--dest", dest], capture_output=True, text=True, errors="replace")
                if st.returncode != 0:
                    problems.append("staged, but status says: " + first_error(st.stderr or st.stdout))
                outcome = "staged"
            elif snapshot(dest) != dest_before:
                problems.append("refused, but DEST changed")
        if command == "deb" and rc not in (0, "timeout") and os.path.isdir(debs) and os.listdir(debs):
            problems.append("refused, but left " + ", ".join(sorted(os.listdir(debs))))
        msg = first_error(err)
        if rc not in (0, "timeout") and (not msg or "unknown error" in msg):
            problems.append("a message without a reason: " + repr(msg))
        return {"archive": os.path.basename(archive), "command": command, "exit": rc, "outcome": outcome, "seconds": seconds,
                "rss_mib": rss_mib, "message": msg, "problems": problems}
    finally:
        shutil.rmtree(box, ignore_errors=True)


def run(args):
    binary = os.path.abspath(args.stackpin)
    archives = sorted(os.path.join(args.out, "archives", n) for n in os.listdir(os.path.join(args.out, "archives")))
    rows = []
    for a in archives:
        for command in ("verify", "stage", "deb"):
            r = run_one(binary, a, command, args.timeout)
            if r:
                rows.append(r)
    report = args.report or os.path.join(args.out, "report.md")
    problems = [r for r in rows if r["problems"]]
    with open(report, "w") as f:
        f.write("# stackpin over %d hostile archives (%d runs)\n\n" % (len(archives), len(rows)))
        for command in ("verify", "stage", "deb"):
            mine = [r for r in rows if r["command"] == command]
            kinds = {}
            for r in mine:
                kinds[r["outcome"]] = kinds.get(r["outcome"], 0) + 1
            f.write("- `%s`: %d runs, %s; slowest %.2f s\n" % (command, len(mine), ", ".join("%d %s" % (v, k) for k, v in sorted(kinds.items())),
                                                               max((r["seconds"] for r in mine), default=0)))
        f.write("- problems: %d\n\n| archive | command | exit | outcome | message | problems |\n|---|---|---|---|---|---|\n" % len(problems))
        for r in rows:
            f.write("| %s | %s | %s | %s | %s | %s |\n" % (r["archive"], r["command"], r["exit"], r["outcome"],
                                                          r["message"][:160].replace("|", "\\|"), "; ".join(r["problems"])))
    print(open(report).read().split("\n| archive")[0])
    for r in problems:
        print("PROBLEM %s %s: %s" % (r["archive"], r["command"], "; ".join(r["problems"])))
    print("hostile-corpus: report in %s" % report)
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("out")
    b.add_argument("sources", nargs="+")
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--stackpin", default=os.path.join(os.path.dirname(__file__), "..", "build", "src", "stackpin"))
    r.add_argument("--report")
    r.add_argument("--timeout", type=int, default=60)
    args = ap.parse_args()
    if args.cmd == "build":
        build(args)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
