#!/usr/bin/env bash
# Start the product the way a user does (`npm start`) with a throwaway data dir, wait until it says
# it is running, and stop it the way a user does (SIGTERM to npm's group): the server must be gone
# with it (nothing listens on the port after). Used by .ci/run to prove that starting leaves
# `git status` clean.
# Env: START_SMOKE_TIMEOUT_S (default 600: the first start builds the dashboard).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
data="$(mktemp -d /tmp/agentlab-start-smoke.XXXXXX)"
log="$data/start.log"
port=$((4900 + RANDOM % 90))
AGENTLAB_DATA_DIR="$data/data" PORT="$port" HOST=127.0.0.1 setsid npm start >"$log" 2>&1 &
pid=$!
stop() {
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
}
trap 'stop; rm -rf "$data"' EXIT
deadline=$(( $(date +%s) + ${START_SMOKE_TIMEOUT_S:-600} ))
until grep -q "agentlab is running" "$log"; do
  if ! kill -0 "$pid" 2>/dev/null || (( $(date +%s) > deadline )); then
    echo "start-smoke: npm start did not come up; its output:" >&2
    tail -50 "$log" >&2
    exit 1
  fi
  sleep 1
done
echo "start-smoke: npm start came up on port $port"
stop
for i in $(seq 30); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
  if (( i == 30 )); then
    echo "start-smoke: the server still listens on port $port 30 s after npm start was stopped" >&2
    exit 1
  fi
  sleep 1
done
echo "start-smoke: stopping npm start stopped the server"
