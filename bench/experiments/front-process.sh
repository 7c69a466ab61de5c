#!/usr/bin/env bash
# Record 43's experiment (issue 61), not part of Gatehouse: a copy of a production build whose
# server.mjs is a front process without Next.js (front-process.mjs), answering the sign-in refusals
# it has seen and proxying everything else to the build's own server.mjs, run as a child.
#   bash bench/experiments/front-process.sh BUILD_DIR OUT_DIR
#   ROUNDS=4 npx tsx bench/ab-cost.ts main=BUILD_DIR front=OUT_DIR main2=BUILD_DIR front2=OUT_DIR
# ab-cost's idle RSS of such a copy is the front's alone; its CPU figures are of both processes.
set -euo pipefail
src=$(cd "$1" && pwd)
out=$(realpath -m "$2")
case "$out/" in "$src"/*) echo "$out is inside $src: give a folder outside the build" >&2; exit 1 ;; esac
[ -f "$src/.next/BUILD_ID" ] || { echo "no production build in $src" >&2; exit 1; }
# Only a folder this script made before is replaced: OUT may not be the build, or anything else.
if [ -e "$out" ]; then
  [ -f "$out/child-server.mjs" ] || { echo "$out exists and is no front-process copy: not replacing it" >&2; exit 1; }
  rm -rf "$out"
fi
# Hard links: the copy costs no disk, and only server.mjs is replaced (a new file, not an edit).
cp -al "$src" "$out"
# Not the checkout's data, secrets or history: a server started in the copy must not write
# through a hard link into the build's database (ab-cost starts it on a fresh one).
rm -rf "$out/.data" "$out/instances" "$out/.git" "$out"/.env "$out"/.env.*
rm "$out/server.mjs"
# The child is the build's server.mjs with two changes: the peer is the one the front names, and
# a refusal its fast path answered is marked, so that the front remembers it.
sed -e 's#req.headers\[PEER_HEADER\] = req.socket.remoteAddress ?? "";#req.headers[PEER_HEADER] = /** @type {string} */ (req.headers["x-front-peer"]) ?? req.socket.remoteAddress ?? "";#' \
  -e 's#if (hit) return answerEarly(req, res, hit);#if (hit) return answerEarly(req, res, { ...hit, headers: { ...hit.headers, "x-fast": "1" } });#' \
  "$src/server.mjs" > "$out/child-server.mjs"
[ "$(grep -c 'x-front-peer\|x-fast' "$out/child-server.mjs")" = 2 ] || { echo "server.mjs changed: the experiment's two edits no longer apply" >&2; exit 1; }
cp "$(dirname "$0")/front-process.mjs" "$out/server.mjs"
echo "front-process copy of $src in $out"
