#!/usr/bin/env bash
# Builds what the image holds: every process under <output>/<process>, each with only its compiled
# code, its migrations and its production dependencies (no sources, tests or benchmarks). The
# Dockerfile's build stage runs this, and so does the deploy package's test, on a scratch copy.
set -euo pipefail
out="${1:?usage: scripts/image-tree.sh <output directory>}"
cd "$(dirname "$0")/.."

PROCESSES=(gateway subscribers integrations topics triggers messages worker migrate)

pnpm install --frozen-lockfile
pnpm build
rm -rf "$out"
# --legacy: workspace packages are linked in development, so deploy copies them in itself. Each
# deploy mostly waits on the disk, so four run at once; xargs fails if any of them does.
printf '%s\n' "${PROCESSES[@]}" | xargs -P 4 -I '{}' pnpm --filter '@notify/{}' deploy --prod --legacy "$out/{}"
