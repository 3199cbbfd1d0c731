#!/usr/bin/env bash
# The prepared GPU check (also `npm run bench -- gpu`), <= 8 min on one H200, no downloads:
# a random-init Qwen2.5-1.5B-sized model, NF4 QLoRA and bf16 LoRA steps with gradient checkpointing,
# greedy generation with transformers and with vLLM serving the adapter (skipped with its reason when
# the vLLM venv is missing), base vs adapter answers and the adapter hash checked; ONE JSON line on
# stdout (tokens/s, MFU estimate and peak memory per method, generation tokens/s per backend).
# The code is apps/agent/python/src/agentlab_trainer/gpu_smoke.py; its CPU dry run is a pytest.
# Exit codes: 0 ok, 1 a check failed, 2 no CUDA (nothing was trained), other = failure.
# Args are passed on (e.g. --dry-run: the same steps on the CPU with a tiny config).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/apps/agent/python"
PY="${AGENTLAB_PYTHON:-$PKG/.venv/bin/python}"

if [[ ! -x "$PY" ]]; then
  bash "$ROOT/scripts/setup-python.sh" >&2
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/agentlab-gpu-smoke-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cd "$PKG"
exec "$PY" -m agentlab_trainer.gpu_smoke --work "$WORK" "$@"
