#!/usr/bin/env bash
# Create (or reuse) the trainer's virtual environment at apps/agent/python/.venv.
# Idempotent: a stamp holding the hash of the requirements (pyproject.toml + this script) is
# written after a successful install; when it matches, nothing is done.
# On a CUDA box (nvidia-smi answers) it also installs the GPU extra (bitsandbytes) and makes the
# vLLM venv (apps/agent/python/vllm/.venv from vllm/requirements.txt: its own torch and
# transformers); elsewhere it says it skipped them.
# Env: PYTHON (interpreter, default python3.11), AGENTLAB_VENV (venv path override),
#      AGENTLAB_TORCH_SPEC (default torch==2.13.0; always pinned), AGENTLAB_GPU=0|1 (override detection).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/apps/agent/python"
VENV="${AGENTLAB_VENV:-$PKG/.venv}"
PY="${PYTHON:-python3.11}"
TORCH_SPEC="${AGENTLAB_TORCH_SPEC:-torch==2.13.0}"
STAMP="$VENV/.agentlab-stamp"
VLLM_VENV="$PKG/vllm/.venv"
if [[ -z "${AGENTLAB_GPU:-}" ]]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then AGENTLAB_GPU=1; else AGENTLAB_GPU=0; fi
fi

hash_inputs() {
  { cat "$PKG/pyproject.toml"; cat "$ROOT/scripts/setup-python.sh"; cat "$PKG/vllm/requirements.txt"; echo "$TORCH_SPEC gpu=$AGENTLAB_GPU"; } | sha256sum | cut -d' ' -f1
}
WANT="$(hash_inputs)"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -x "$VENV/bin/python" ]]; then
  # Editable install: source changes need nothing; a quick import check guards a broken venv.
  if "$VENV/bin/python" -c "import agentlab_trainer, agentlab_schema, torch" >/dev/null 2>&1; then
    echo "setup-python: up to date ($VENV)" >&2
    exit 0
  fi
fi

if ! command -v "$PY" >/dev/null 2>&1; then
  echo "setup-python: $PY not found; set PYTHON to a Python 3.11 interpreter" >&2
  exit 1
fi

echo "setup-python: creating/updating $VENV with $("$PY" --version)" >&2
if [[ ! -x "$VENV/bin/python" ]]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip setuptools wheel
# torch first and pinned, so nothing later resolves a different (CUDA, multi-GB) build.
"$VENV/bin/python" -m pip install --quiet "$TORCH_SPEC"
# The package and its dev extras (pytest, trl for the bench); torch stays pinned via a constraint.
CONSTRAINT="$(mktemp)"
trap 'rm -f "$CONSTRAINT"' EXIT
echo "$TORCH_SPEC" > "$CONSTRAINT"
# The JSON Schema validator the trainer shares with the grader (standard library only), editable:
# a change to it needs nothing here.
"$VENV/bin/python" -m pip install --quiet -e "$ROOT/apps/agent/python-schema"
if [[ "$AGENTLAB_GPU" == "1" ]]; then
  "$VENV/bin/python" -m pip install --quiet -c "$CONSTRAINT" -e "$PKG[dev,gpu]"
  # vLLM in its own venv: it pins torch 2.14 and transformers < 5.21, which would replace the trainer's.
  [[ -x "$VLLM_VENV/bin/python" ]] || "$PY" -m venv "$VLLM_VENV"
  "$VLLM_VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VLLM_VENV/bin/python" -m pip install --quiet -r "$PKG/vllm/requirements.txt"
  "$VLLM_VENV/bin/python" -c "import vllm, torch; print('setup-python: vLLM venv', vllm.__version__, 'torch', torch.__version__)" >&2
else
  "$VENV/bin/python" -m pip install --quiet -c "$CONSTRAINT" -e "$PKG[dev]"
  echo "setup-python: no CUDA (nvidia-smi) here: skipped the GPU extra (bitsandbytes) and the vLLM venv" >&2
fi
# Lint and type-check tools for `npm run lint:py` (scripts/lint-py.mjs), pinned; training needs neither.
"$VENV/bin/python" -m pip install --quiet ruff==0.17.6 mypy==2.4.1
"$VENV/bin/python" -c "import torch, transformers, peft, agentlab_trainer; print('setup-python: torch', torch.__version__, 'transformers', transformers.__version__, 'peft', peft.__version__)" >&2
echo "$WANT" > "$STAMP"
