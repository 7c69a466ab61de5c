#!/usr/bin/env bash
# Assembles the runnable server folder from a finished `next build` (next.config.ts has
# output: "standalone"): Next's traced server and node_modules, what Next leaves out of it
# (.next/static, public/), and server.mjs as the entry in place of Next's server.js.
# The Dockerfile runs this same script, and e2e/standalone.spec.ts starts its result from an
# empty folder, so what is tested is what the image runs.
#
#   npm run build && npm run package:standalone -- <new or empty folder>
set -euo pipefail

dest=${1:?usage: scripts/package-standalone.sh <new or empty folder>}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ ! -f .next/standalone/server.js ] || [ ! -f .next/BUILD_ID ]; then
  echo "No standalone build in $root/.next: run npm run build first." >&2
  exit 1
fi
if [ -e "$dest" ] && [ -n "$(ls -A "$dest")" ]; then
  echo "$dest is not empty: give a new or empty folder (the old one may hold an instance's data)." >&2
  exit 1
fi

# Next's tracer takes the whole repository into the standalone build when it cannot tell which
# files a run-time read names (a build warning, "Dynamic filesystem access causes tracing of the
# whole project"): the folder would then ship the tests, the bench and every source file, and,
# from an operator's checkout, every client's instances/<client>/gatehouse.env (seen; .data/ is guarded too).
for repository_only in .data app bench docs e2e instances ops scripts tests; do
  if [ -e ".next/standalone/$repository_only" ]; then
    echo "the standalone build holds the repository's $repository_only/: see the build's 'Dynamic filesystem access' warning" >&2
    exit 1
  fi
done
mkdir -p "$dest"
cp -a .next/standalone/. "$dest"/
# server.mjs is the entry: it writes the socket's peer address, answers known refusals early
# and drains on SIGTERM, none of which Next's generated server.js does.
rm -f "$dest/server.js"
cp server.mjs "$dest/server.mjs"
# server.mjs runs outside the build, so every module it imports by a relative path (the names it
# shares with the app, the connection guard, ...) is copied beside it, and theirs in turn: read
# from the import lines, not listed by hand. A hand-written list once left the connection guard
# out, and only the build's tracer, which then took the whole repository, had hidden that.
copied=" "
pending=(server.mjs)
while [ ${#pending[@]} -gt 0 ]; do
  importer=${pending[0]}
  pending=("${pending[@]:1}")
  # Import statements only (`import … from`, `} from` ending a long one, `export … from`, a bare
  # `import "…"`), at the start of a line: a JSDoc type's import("…") names no file to ship.
  for relative in $(grep -oE '^(import|export|\}) [^"]*"\.\.?/[^"]+"' "$importer" | sed -E 's/^.*"(.*)"$/\1/'); do
    module=$(node -p 'path.relative(process.cwd(), path.resolve(path.dirname(process.argv[1]), process.argv[2]))' "$importer" "$relative")
    case "$module" in ../* | /*)
      echo "$importer imports $relative, outside the repository" >&2
      exit 1
      ;;
    esac
    case "$copied" in *" $module "*) continue ;; esac
    copied="$copied$module "
    mkdir -p "$dest/$(dirname "$module")"
    cp "$module" "$dest/$module"
    pending+=("$module")
  done
done
# Next may copy the build machine's .env files; an instance's environment is its own env file.
rm -f "$dest"/.env "$dest"/.env.*
mkdir -p "$dest/.next"
cp -a .next/static "$dest/.next/static"
cp -a public "$dest/public"

# Read at run time from files, not imports, so the build's tracing could miss them: the
# migrations (PGlite migrates at start, lib/db/migrate.ts), the catalogues (lib/i18n/catalogues.ts), PGlite's WASM and data files, and
# the Argon2id native binding. Checked here rather than discovered at the first sign-in.
missing=0
for required in \
  .next/BUILD_ID \
  .next/required-server-files.json \
  server.mjs \
  lib/server-contract.mjs \
  node_modules/next/package.json \
  prisma/migrations/migration_lock.toml \
  node_modules/@electric-sql/pglite/dist/pglite.wasm \
  node_modules/@electric-sql/pglite/dist/pglite.data \
  node_modules/@electric-sql/pglite/dist/initdb.wasm; do
  if [ ! -e "$dest/$required" ]; then
    echo "missing from the standalone build: $required" >&2
    missing=1
  fi
done
if ! compgen -G "$dest/node_modules/@node-rs/argon2-*/*.node" > /dev/null; then
  echo "missing from the standalone build: the @node-rs/argon2 native binding" >&2
  missing=1
fi
migrations=$(find prisma/migrations -name migration.sql | wc -l)
packaged=$(find "$dest/prisma/migrations" -name migration.sql | wc -l)
if [ "$migrations" != "$packaged" ]; then
  echo "the standalone build has $packaged of $migrations migrations" >&2
  missing=1
fi
catalogues=$(find messages -name '*.json' | wc -l)
packagedCatalogues=$(find "$dest/messages" -name '*.json' 2>/dev/null | wc -l)
if [ "$catalogues" != "$packagedCatalogues" ]; then
  echo "the standalone build has $packagedCatalogues of $catalogues catalogue files (messages/)" >&2
  missing=1
fi
if [ "$missing" != 0 ]; then
  exit 1
fi

echo "Packaged $(du -sh "$dest" | cut -f1) into $dest. Start it there with: MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=2 --env-file=<instance env file> server.mjs"
