#!/usr/bin/env bash
# Create (or reuse) the venv with moto's standalone S3-compatible server, which the S3 artifact
# store's integration tests start on a free port (tests/integration/s3/moto-server.ts). A real
# server speaking the S3 wire protocol (SigV4, multipart, presigned URLs), not a mock of our code.
# Env: S3_TEST_PYTHON (interpreter, default python3), AGENTLAB_S3_TEST_VENV (venv path override).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${AGENTLAB_S3_TEST_VENV:-$ROOT/tests/integration/s3/.venv}"
PY="${S3_TEST_PYTHON:-python3}"
MOTO_SPEC="moto[server]==5.2.5"
STAMP="$VENV/.agentlab-stamp"
WANT="$({ cat "$ROOT/scripts/setup-s3-test.sh"; "$PY" --version; } | sha256sum | cut -d' ' -f1)"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]] && "$VENV/bin/moto_server" --help >/dev/null 2>&1; then
  echo "setup-s3-test: up to date ($VENV)" >&2
  exit 0
fi
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --no-input "$MOTO_SPEC"
echo "$WANT" > "$STAMP"
echo "setup-s3-test: ready ($VENV)" >&2
