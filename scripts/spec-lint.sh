#!/usr/bin/env bash
# Lints the public API's description, gateway/api/openapi.yaml, with Redocly CLI (pinned below)
# under gateway/api/redocly.yaml: the recommended rules with warnings as errors, so any problem
# fails. npx fetches the pinned CLI from the npm registry on first use and caches it.
#
# Needs Node.js >= 18.17 with npm (the engines of @redocly/cli 1.34; 2.x needs >= 20.19, more than
# Debian 12's nodejs 18.20). Where node or npx is missing, `scripts/deps.sh node` installs Debian's
# nodejs and npm (as root).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
REDOCLY_VERSION=1.34.20

if ! command -v node >/dev/null || ! command -v npx >/dev/null; then
  "$ROOT/scripts/deps.sh" node
fi
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 18 || (a === 18 && b >= 17) ? 0 : 1)'; then
  echo "spec-lint: Node.js $(node --version) is older than @redocly/cli $REDOCLY_VERSION needs (>= 18.17)" >&2
  exit 1
fi
echo "== redocly lint gateway/api/openapi.yaml (@redocly/cli $REDOCLY_VERSION, node $(node --version))"
npx --yes "@redocly/cli@$REDOCLY_VERSION" lint --config gateway/api/redocly.yaml gateway/api/openapi.yaml
