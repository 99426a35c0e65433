#!/usr/bin/env bash
# Fetches the browser code of the gateway's API docs page (GET /docs/): Redoc's standalone bundle,
# from the npm registry's tarball of the pinned version, checks it against the pinned sha256 and
# writes it, with Redoc's licence and the notices of the libraries it bundles, into
# gateway/internal/docs/assets/ (checked in and embedded in the gateway binary: the page never
# loads anything from a CDN).
#
# Update: set REDOC_VERSION and REDOC_SHA256 below, run this script, commit the assets. With a new
# version and the old hash the run fails and prints the bundle's hash: check it is the release you
# meant (e.g. against a second download) before pinning it.
#
# Usage: scripts/docs-assets.sh            fetch, verify, write the assets
#        scripts/docs-assets.sh --check    fetch, verify, and fail if the checked-in assets differ
# Needs curl, tar and sha256sum. REDOC_REGISTRY overrides https://registry.npmjs.org.
set -euo pipefail

REDOC_VERSION=2.5.4
REDOC_SHA256=dcaf76612bc4a3fbcc923a8966dee2f6146a5f32e5ce1b6f02dd60cbbf89500b

log() { printf 'docs-assets: %s\n' "$*" >&2; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEST="$ROOT/gateway/internal/docs/assets"
REGISTRY=${REDOC_REGISTRY:-https://registry.npmjs.org}
URL="$REGISTRY/redoc/-/redoc-$REDOC_VERSION.tgz"

mode=write
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log "fetching $URL"
curl -fsSL --retry 3 --max-time 120 -o "$tmp/redoc.tgz" "$URL"
tar -xzf "$tmp/redoc.tgz" -C "$tmp" package/LICENSE package/bundles/redoc.standalone.js \
  package/bundles/redoc.standalone.js.LICENSE.txt

got=$(sha256sum "$tmp/package/bundles/redoc.standalone.js" | cut -d' ' -f1)
if [ "$got" != "$REDOC_SHA256" ]; then
  log "redoc $REDOC_VERSION: redoc.standalone.js has sha256 $got, pinned $REDOC_SHA256"
  log "if $REDOC_VERSION is the release you meant, pin REDOC_SHA256=$got in $0"
  exit 1
fi

mkdir -p "$tmp/out"
cp "$tmp/package/bundles/redoc.standalone.js" "$tmp/out/redoc.standalone.js"
cp "$tmp/package/bundles/redoc.standalone.js.LICENSE.txt" "$tmp/out/redoc.standalone.js.LICENSE.txt"
cp "$tmp/package/LICENSE" "$tmp/out/LICENSE.redoc"
cat >"$tmp/out/VERSION" <<EOF
redoc $REDOC_VERSION (MIT, LICENSE.redoc; the notices of the libraries it bundles: redoc.standalone.js.LICENSE.txt)
source $URL (package/bundles/redoc.standalone.js)
sha256 $REDOC_SHA256  redoc.standalone.js
written by scripts/docs-assets.sh; do not edit by hand
EOF

files="redoc.standalone.js redoc.standalone.js.LICENSE.txt LICENSE.redoc VERSION"
if [ "$mode" = check ]; then
  bad=0
  for f in $files; do
    if ! cmp -s "$tmp/out/$f" "$DEST/$f"; then log "$DEST/$f differs from redoc $REDOC_VERSION"; bad=1; fi
  done
  [ $bad = 0 ] || { log "run scripts/docs-assets.sh and commit the assets"; exit 1; }
  log "assets match redoc $REDOC_VERSION (sha256 $REDOC_SHA256)"
  exit 0
fi
mkdir -p "$DEST"
for f in $files; do cp "$tmp/out/$f" "$DEST/$f"; done
log "wrote redoc $REDOC_VERSION into ${DEST#"$ROOT"/}"
