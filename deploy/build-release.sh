#!/usr/bin/env bash
# Builds a self-contained reftrack-server release in OUT (default: deploy/out/reftrack-server):
# dist/, migrations/, production node_modules (better-sqlite3 compiled for this machine) and the
# dashboard's build. The Dockerfile runs exactly this script, and CI runs it on the host too
# (images cannot be pulled on the build machines), so the steps are tested without Docker.
#   deploy/build-release.sh [OUT]
#   node OUT/dist/main.js migrate status
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-deploy/out/reftrack-server}"
rm -rf "$OUT"
pnpm install --frozen-lockfile
pnpm build
# A copy of the server package with its production dependencies only, workspace packages included
# as real folders (no symlinks into the source tree).
pnpm --filter @reftrack/server deploy --prod --legacy "$OUT"
test -f "$OUT/dist/main.js"
test -d "$OUT/migrations"
test -f "$OUT/node_modules/@reftrack/web/dist/index.html"
# The release answers for itself: its migrations are listed against a scratch SQLite database.
scratch="$(mktemp -d)"
DATABASE_URL="sqlite:$scratch/check.db" node "$OUT/dist/main.js" migrate status >/dev/null || [ $? -eq 3 ]
rm -rf "$scratch"
echo "release built in $OUT"
