#!/usr/bin/env bash
# Never dead air, measured with real peers (icecast2, ffmpeg sources and an ffmpeg listener, radio-relay-load):
#
#   bench/failover.sh                 # the scenario with cold standby, then hot (about 6 minutes)
#   bench/failover.sh cpu             # CPU and RSS with a hot standby against cold (ROUNDS x 2 x (DURATION + 10) s)
#   bench/failover.sh chaos [MIN]     # the chaos run: MIN minutes (default 30) of kills, restarts and reloads
#
# Environment: RADIO_RELAY (the build; default the static release build), LOAD (radio-relay-load), ROUNDS and
# DURATION (cpu), PYTHON. What each mode does and prints: bench/failover.py's header.
set -euo pipefail
export LC_ALL=C
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_tools icecast2 ffmpeg
require_tools "icecast2 ffmpeg" icecast2 ffmpeg
RADIO_RELAY="$(relay_binary)"
LOAD="$(load_binary)"
export RADIO_RELAY LOAD
require_binaries "radio-relay:$RADIO_RELAY" "radio-relay-load:$LOAD"
PYTHON=${PYTHON:-python3}
require_python "$PYTHON" 9
raise_nofile
BENCH_DIR="$REPO_ROOT/bench"
case "${1:-scenario}" in
scenario)
    "$PYTHON" "$BENCH_DIR/failover.py" scenario --standby cold
    "$PYTHON" "$BENCH_DIR/failover.py" scenario --standby hot
    ;;
cpu) "$PYTHON" "$BENCH_DIR/failover.py" cpu ;;
chaos) "$PYTHON" "$BENCH_DIR/failover.py" chaos --minutes "${2:-30}" ;;
*)
    echo "usage: bench/failover.sh [scenario|cpu|chaos [MINUTES]]" >&2
    exit 2
    ;;
esac
