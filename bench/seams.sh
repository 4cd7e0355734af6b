#!/usr/bin/env bash
# What a listener hears at every seam (a DJ's hand-back, a kill, a hang, a file loop) and what a hung upstream costs,
# with real peers (icecast2, ffmpeg sources and DJs, an ffmpeg listener decoding at 48 kHz):
#
#   bench/seams.sh            # both modes (about 2 minutes)
#   bench/seams.sh hang [S]   # a SIGSTOPped studio Icecast with a hot backup, stall_timeout S (default 5)
#   bench/seams.sh dj         # hand-back, killsource, a hung DJ, and a file loop's seams
#   bench/seams.sh djset [M]  # Ogg Opus DJs (ffmpeg, Liquidsoap) on the air for M minutes (default 10)
#
# Environment: RADIO_RELAY (the build; default the static release build), PYTHON. What each mode does and prints:
# bench/seams.py's header.
set -euo pipefail
export LC_ALL=C
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_tools icecast2 ffmpeg
require_tools "icecast2 ffmpeg" icecast2 ffmpeg
RADIO_RELAY="$(relay_binary)"
export RADIO_RELAY
require_binaries "radio-relay:$RADIO_RELAY"
PYTHON=${PYTHON:-python3}
require_python "$PYTHON" 9
BENCH_DIR="$REPO_ROOT/bench"
case "${1:-all}" in
all)
    "$PYTHON" "$BENCH_DIR/seams.py" hang
    "$PYTHON" "$BENCH_DIR/seams.py" dj
    ;;
hang) "$PYTHON" "$BENCH_DIR/seams.py" hang --stall "${2:-5}" ;;
dj) "$PYTHON" "$BENCH_DIR/seams.py" dj ;;
djset) "$PYTHON" "$BENCH_DIR/seams.py" djset --minutes "${2:-10}" ;;
*)
    echo "usage: $0 [all | hang [S] | dj | djset [M]]" >&2
    exit 2
    ;;
esac
