#!/bin/sh
# stackpin's SPDX writer for image builds. A Dockerfile that `stackpin generate dockerfile
# --from-url` writes runs it in its `sbom` stage when the archives were not on the machine that
# generated it: it lists the files the runtime stage receives from NVIDIA's archives and writes
# the SPDX 2.3 document stackpin itself writes when it has the archives at hand (the same
# packages, files, order and bytes).
#
#   sh spdx-writer.sh PLAN OWNERS TREE OUT
#
#   PLAN    what stackpin decided when it generated the Dockerfile, as tab-separated records
#           whose strings are JSON already: the document's name, creator, time and comment, each
#           archive as a package, each licence and where its text is, and which folder belongs
#           to which archive
#   OWNERS  "<component><TAB><path>" per file a CUDA component archive gave (/dev/null for none)
#   TREE    the runtime stage's files from the archives, at their paths in the image
#   OUT     the document to write (written whole, or not at all)
#
# Needs sh, awk, find, sort, sha1sum and sha256sum: what every Debian and Ubuntu image has.
set -eu

[ "$#" -eq 4 ] || { echo "usage: spdx-writer.sh PLAN OWNERS TREE OUT" >&2; exit 2; }
plan=$1 owners=$2 tree=$3 out=$4
LC_ALL=C
export LC_ALL
tab=$(printf '\t')
nl='
'

fail() { echo "spdx-writer: $*" >&2; exit 1; }

[ "$(head -n 1 "$plan")" = "stackpin-spdx-plan 1" ] || fail "$plan is not a plan this writer reads (stackpin-spdx-plan 1)"
[ -d "$tree" ] || fail "$tree is not a folder"
[ -r "$owners" ] || fail "cannot read $owners"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# sha1sum and sha256sum escape names with a backslash or a line break, and the lists below are
# tab-separated: NVIDIA's archives have no such names, and a tree that does is refused.
odd=$(cd "$tree" && find . -type f \( -name '*\\*' -o -name "*$nl*" -o -name "*$tab*" \) | head -n 1)
[ -z "$odd" ] || fail "a file name with a backslash, tab or line break: $odd"

# the two digests at once (two passes over the files, on two CPUs where the builder has them)
(cd "$tree" && find . -type f -exec sha1sum {} +) > "$work/sha1" &
sha1=$!
(cd "$tree" && find . -type f -exec sha256sum {} +) > "$work/sha256" || fail "cannot hash the files under $tree"
wait "$sha1" || fail "cannot hash the files under $tree"

# path, SHA-1, SHA-256, archive: one line per file, in byte order of the path
# (through files, not pipes: sh has no pipefail, and a failed step must stop the writer)
awk -F "$tab" '
  FILENAME == ARGV[1] { if ($1 == "owner") { prefix[++np] = $2; key[np] = $3 } next }
  FILENAME == ARGV[2] { owner[$2] = $1; next }
  FILENAME == ARGV[3] { sha1[substr($0, 45)] = substr($0, 1, 40); next }
  {
    p = substr($0, 69); o = ""
    if (p in owner) o = owner[p]
    else for (i = 1; i <= np; i++) if (substr(p, 1, length(prefix[i]) + 1) == prefix[i] "/") { o = key[i]; break }
    print p "\t" sha1[p] "\t" substr($0, 1, 64) "\t" o
  }' "$plan" "$owners" "$work/sha1" "$work/sha256" > "$work/joined"
sort -t "$tab" -k 1,1 "$work/joined" > "$work/files"

# each package's verification code (SPDX 2.3, 7.9: the SHA-1 of its files' sorted SHA-1s)
: > "$work/codes"
awk -F "$tab" '$1 == "package" { print $2 }' "$plan" | while IFS= read -r k; do
  c=$(awk -F "$tab" -v k="$k" '$4 == k { print $2 }' "$work/files" | sort | tr -d '\n' | sha1sum | cut -c 1-40)
  printf '%s\t%s\n' "$k" "$c" >> "$work/codes"
done

# the namespace's digest: what the document describes, not where or when it was made
digest=$({ awk -F "$tab" '$1 == "identity" { print $2 }' "$plan"; awk -F "$tab" '{ print $1 " " $3 }' "$work/files"; } |
  sha256sum | cut -c 1-32)

# where each licence's text may be, in order, when the tree holds it as a regular file, and
# whether the file ends with a line break (which awk's lines do not tell)
: > "$work/texts"
awk -F "$tab" '$1 == "license" { for (i = 5; i <= NF; i++) print $2 "\t" $i }' "$plan" | while IFS="$tab" read -r id path; do
  f="$tree/$path"
  if [ ! -f "$f" ] || [ -L "$f" ]; then continue; fi
  if [ ! -s "$f" ]; then e=empty; elif [ -z "$(tail -c 1 "$f")" ]; then e=newline; else e=none; fi
  printf '%s\t%s\t%s\n' "$id" "$f" "$e" >> "$work/texts"
done

awk -F "$tab" -v digest="$digest" -v plan="$plan" -v files="$work/files" -v codes="$work/codes" -v texts="$work/texts" '
function line(s) { printf "%s\n", s }
# JSON string as stackpin writes it: \" \\ \b \f \n \r \t, other control characters as \u00XX,
# UTF-8 as is, and each ill-formed part (RFC 3629) as one U+FFFD.
function esc(s,   n, i, c, o, need, lo, hi, k) {
  if (s !~ /[^ -~]/ && s !~ /["\\]/) { printf "%s", s; return }
  n = length(s); i = 1
  while (i <= n) {
    c = substr(s, i, 1); o = ord[c]
    if (o < 128) {
      if (c == "\"") printf "\\\""
      else if (c == "\\") printf "\\\\"
      else if (o == 8) printf "\\b"
      else if (o == 9) printf "\\t"
      else if (o == 10) printf "\\n"
      else if (o == 12) printf "\\f"
      else if (o == 13) printf "\\r"
      else if (o < 32) printf "\\u%04x", o
      else printf "%s", c
      i++; continue
    }
    lo = 128; hi = 191
    if (o >= 194 && o <= 223) need = 1
    else if (o >= 224 && o <= 239) { need = 2; if (o == 224) lo = 160; if (o == 237) hi = 159 }
    else if (o >= 240 && o <= 244) { need = 3; if (o == 240) lo = 144; if (o == 244) hi = 143 }
    else { printf "%s", fffd; i++; continue }
    for (k = 1; k <= need && i + k <= n; k++) {
      o = ord[substr(s, i + k, 1)]
      if (o < lo || o > hi) break
      lo = 128; hi = 191
    }
    if (k > need) printf "%s", substr(s, i, need + 1)
    else printf "%s", fffd
    i += k
  }
}
function str(s) { printf "\""; esc(s); printf "\"" }
function raw(s) { printf "%s", s }
function text(path, ending,   first, l) {
  printf "\""
  if (ending != "empty") {
    first = 1
    while ((getline l < path) > 0) { if (!first) printf "\\n"; esc(l); first = 0 }
    close(path)
    if (ending == "newline") printf "\\n"
  }
  printf "\""
}
function relation(from, type, to) {
  line("    {"); line("      \"spdxElementId\": " from ",")
  line("      \"relationshipType\": " type ","); line("      \"relatedSpdxElement\": " to)
  printf "    }"
}
BEGIN {
  for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
  fffd = sprintf("%c%c%c", 239, 191, 189)
  while ((getline l < plan) > 0) {
    n = split(l, f, "\t")
    if (f[1] == "name" || f[1] == "created" || f[1] == "creator" || f[1] == "comment" || f[1] == "namespace") doc[f[1]] = f[2]
    else if (f[1] == "package") {
      np++; pkey[np] = f[2]; pid[np] = f[3]; pname[np] = f[4]; pversion[np] = f[5]; pfile[np] = f[6]
      psupplier[np] = f[7]; pdownload[np] = f[8]; psha[np] = f[9]; plicense[np] = f[10]; pindex[f[2]] = np
    } else if (f[1] == "license") { nl++; lid[nl] = f[2]; lname[nl] = f[3]; lmissing[nl] = f[4] }
  }
  while ((getline l < codes) > 0) { split(l, f, "\t"); code[f[1]] = f[2] }
  while ((getline l < texts) > 0) { split(l, f, "\t"); if (!(f[1] in tpath)) { tpath[f[1]] = f[2]; tend[f[1]] = f[3] } }
  while ((getline l < files) > 0) {
    split(l, f, "\t"); nf++; fpath[nf] = f[1]; fsha1[nf] = f[2]; fsha256[nf] = f[3]
    if (f[4] in pindex) { p = pindex[f[4]]; count[p]++; member[p, count[p]] = nf }
  }

  line("{"); line("  \"spdxVersion\": \"SPDX-2.3\","); line("  \"dataLicense\": \"CC0-1.0\",")
  line("  \"SPDXID\": \"SPDXRef-DOCUMENT\",")
  printf "  \"name\": "; raw(doc["name"]); line(",")
  line("  \"documentNamespace\": \"" doc["namespace"] digest "\",")
  line("  \"creationInfo\": {"); printf "    \"created\": "; raw(doc["created"]); line(",")
  line("    \"creators\": ["); printf "      "; raw(doc["creator"]); line(""); line("    ]"); line("  },")
  if ("comment" in doc) { printf "  \"comment\": "; raw(doc["comment"]); line(",") }
  if (np == 0) line("  \"documentDescribes\": [],")
  else {
    line("  \"documentDescribes\": [")
    for (p = 1; p <= np; p++) { printf "    "; raw(pid[p]); line(p < np ? "," : "") }
    line("  ],")
  }
  if (np == 0) line("  \"packages\": [],")
  else {
    line("  \"packages\": [")
    for (p = 1; p <= np; p++) {
      line("    {"); printf "      \"SPDXID\": "; raw(pid[p]); line(","); printf "      \"name\": "; raw(pname[p]); line(",")
      if (pversion[p] != "") { printf "      \"versionInfo\": "; raw(pversion[p]); line(",") }
      printf "      \"packageFileName\": "; raw(pfile[p]); line(",")
      printf "      \"supplier\": "; raw(psupplier[p]); line(",")
      printf "      \"downloadLocation\": "; raw(pdownload[p]); line(",")
      if (count[p] > 0) {
        line("      \"filesAnalyzed\": true,"); line("      \"packageVerificationCode\": {")
        line("        \"packageVerificationCodeValue\": \"" code[pkey[p]] "\""); line("      },")
      } else line("      \"filesAnalyzed\": false,")
      line("      \"checksums\": ["); line("        {"); line("          \"algorithm\": \"SHA256\",")
      line("          \"checksumValue\": \"" psha[p] "\""); line("        }"); line("      ],")
      line("      \"licenseConcluded\": \"NOASSERTION\",")
      printf "      \"licenseDeclared\": "; raw(plicense[p]); line(",")
      line("      \"copyrightText\": \"NOASSERTION\"")
      line(p < np ? "    }," : "    }")
    }
    line("  ],")
  }
  if (nf == 0) line("  \"files\": [],")
  else {
    line("  \"files\": [")
    for (i = 1; i <= nf; i++) {
      line("    {"); line("      \"SPDXID\": \"SPDXRef-File-" i "\",")
      printf "      \"fileName\": "; str("./" fpath[i]); line(",")
      line("      \"checksums\": ["); line("        {"); line("          \"algorithm\": \"SHA1\",")
      line("          \"checksumValue\": \"" fsha1[i] "\""); line("        },"); line("        {")
      line("          \"algorithm\": \"SHA256\","); line("          \"checksumValue\": \"" fsha256[i] "\"")
      line("        }"); line("      ],"); line("      \"licenseConcluded\": \"NOASSERTION\",")
      line("      \"copyrightText\": \"NOASSERTION\"")
      line(i < nf ? "    }," : "    }")
    }
    line("  ],")
  }
  if (nl > 0) {
    line("  \"hasExtractedLicensingInfos\": [")
    for (i = 1; i <= nl; i++) {
      line("    {"); printf "      \"licenseId\": "; raw(lid[i]); line(","); printf "      \"name\": "; raw(lname[i]); line(",")
      printf "      \"extractedText\": "
      if (lid[i] in tpath) text(tpath[lid[i]], tend[lid[i]]); else raw(lmissing[i])
      line(""); line(i < nl ? "    }," : "    }")
    }
    line("  ],")
  }
  if (np == 0) line("  \"relationships\": []")
  else {
    line("  \"relationships\": [")
    for (p = 1; p <= np; p++) {
      if (p > 1) line(",")
      relation("\"SPDXRef-DOCUMENT\"", "\"DESCRIBES\"", pid[p])
      for (k = 1; k <= count[p]; k++) { line(","); relation(pid[p], "\"CONTAINS\"", "\"SPDXRef-File-" member[p, k] "\"") }
    }
    line(""); line("  ]")
  }
  line("}")
}' > "$work/out"

mv -f "$work/out" "$out"
