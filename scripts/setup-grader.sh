#!/usr/bin/env bash
# Create (or reuse) the grader's virtual environment at apps/agent/grader/.venv: the Python that
# runs untrusted candidates inside the sandbox. Only pytest (pinned) on top of the system
# interpreter; the venv is bound read-only into every sandbox and byte-compiled here, because
# sandboxed processes can never write .pyc files.
# Env: GRADER_PYTHON (interpreter, default /usr/bin/python3: it lives under /usr, which the
# sandbox binds read-only), AGENTLAB_GRADER_VENV (venv path override).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${AGENTLAB_GRADER_VENV:-$ROOT/apps/agent/grader/.venv}"
PY="${GRADER_PYTHON:-/usr/bin/python3}"
PYTEST_SPEC="pytest==8.3.4"
STAMP="$VENV/.agentlab-stamp"
# The request validator, shared with the trainer (apps/agent/python-schema): installed as a copy,
# since a sandbox sees the venv but nothing else of the repository; its source is in the stamp, so
# a change to it reinstalls.
SCHEMA_PKG="$ROOT/apps/agent/python-schema"
WANT="$({ cat "$ROOT/scripts/setup-grader.sh"; "$PY" --version; cat "$SCHEMA_PKG/pyproject.toml" "$SCHEMA_PKG"/src/agentlab_schema/*.py; } | sha256sum | cut -d' ' -f1)"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]] && "$VENV/bin/python" -c "import pytest, agentlab_schema" >/dev/null 2>&1; then
  echo "setup-grader: up to date ($VENV)" >&2
  exit 0
fi
if ! command -v bwrap >/dev/null 2>&1; then
  echo "setup-grader: bubblewrap is missing (apt-get install -y bubblewrap); only the 'process' backend will work" >&2
fi
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --no-input "$PYTEST_SPEC"
# Built from a copy so the build writes nothing into the repository.
SCHEMA_SRC="$(mktemp -d)"
trap 'rm -rf "$SCHEMA_SRC"' EXIT
cp -r "$SCHEMA_PKG/pyproject.toml" "$SCHEMA_PKG/src" "$SCHEMA_SRC/"
"$VENV/bin/pip" install --quiet --no-input "$SCHEMA_SRC"
"$VENV/bin/python" -m compileall -q "$VENV/lib" >/dev/null || true
"$PY" -m compileall -q "$ROOT/apps/agent/grader" -x '\.venv' >/dev/null || true
# World-readable so the unprivileged sandbox uid can use it; never writable by it.
chmod -R a+rX,go-w "$VENV"
echo "$WANT" > "$STAMP"
echo "setup-grader: ready ($VENV)" >&2
