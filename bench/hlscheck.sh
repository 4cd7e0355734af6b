#!/usr/bin/env bash
# HLS check: two live HLS streams of a running radio-relay checked from outside for minutes (bench/hlscheck.py), with
# each discontinuity case made to happen on the way.
#
#   bench/hlscheck.sh                        # 5 minutes (about 6 in all)
#   DURATION=120 bench/hlscheck.sh
#   RADIO_RELAY=/path/to/radio-relay bench/hlscheck.sh
#
# What runs (loopback only, every process bounded in time and stopped by its PID):
#   * two copies of bench/soak.py's upstream (HTTP + ICY: the test MP3 at real time, a new StreamTitle every 30 s,
#     dropped every 60 s, stalled 5 s every 90 s, 2 s of garbage every 120 s);
#   * a root relay (`serve`, its own process) transcoding the first upstream, raw TCP only;
#   * the relay under test, from a config file: station `radio` (the second upstream, chain_titles = yes: each title
#     starts a chained link) and station `edge` (tcp:// from the root), HLS on its HTTP address;
#   * hlscheck.py on /radio/live.m3u8 and /edge/live.m3u8 for DURATION seconds.
# At DURATION × 1/3 the root is restarted as it was (the edge's upstream comes back as a new stream: a new serial);
# at DURATION × 2/3 it is restarted mono (`--channels 1`: the edge starts a new link of one channel). The upstream's
# outages are silence in the stream (ordinary audio). The checker's table lists each discontinuity and its cause.
#
# Environment: DURATION (seconds of checking, >= 90; default 300), RADIO_RELAY (default: the static release build when
# built, else .build/release/radio-relay), BENCH_OUT, PYTHON.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${DURATION:-300}
RR=$(relay_binary)
OUT=$(abs_path "${BENCH_OUT:-$REPO_ROOT/bench/out}")
PY=${PYTHON:-python3}
[[ $DURATION =~ ^[0-9]+$ ]] && ((DURATION >= 90)) || die "DURATION must be whole seconds >= 90 (got '$DURATION')"

require_binaries "radio-relay:$RR"
need_tools lame

RUN_DIR=$OUT/logs/hlscheck-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN_DIR"
LENGTH=$((DURATION + 90))
UP1="" UP2="" ROOT="" RELAY="" CHECK=""
bench_on_exit() { bench_stop "$CHECK" "$RELAY" "$ROOT" "$UP1" "$UP2"; }
bench_traps

echo "hlscheck: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(machine); $(relay_version "$RR")"
echo "$DURATION s of checking; logs in $RUN_DIR"
"$PY" "$REPO_ROOT/bench/soak.py" gen --out "$OUT" --length "$LENGTH" >/dev/null
upstream() {  # NAME: an upstream (a copy of soak.py's) whose port lands in $RUN_DIR/NAME.port
    "$PY" "$REPO_ROOT/bench/soak.py" upstream --out "$OUT" --length "$LENGTH" --duration "$((DURATION + 30))" \
        --port-file "$RUN_DIR/$1.port" --t0-file "$RUN_DIR/$1.t0" --json "$RUN_DIR/$1.json" 2>"$RUN_DIR/$1.log" &
}
upstream up1
UP1=$!
upstream up2
UP2=$!
wait_until 30 "$UP1" test -s "$RUN_DIR/up1.port" || die "upstream 1 did not start"
wait_until 30 "$UP2" test -s "$RUN_DIR/up2.port" || die "upstream 2 did not start"
ROOT_PORT=$(bench_free_port)
start_root() {  # extra serve options: the root relay, raw TCP
    "$RR" serve --name root --upstream "http://127.0.0.1:$(cat "$RUN_DIR/up1.port")/stream.mp3" --bind 127.0.0.1 \
        --port "$ROOT_PORT" --hls no "$@" >>"$RUN_DIR/root.log" 2>&1 &
    ROOT=$!
}
start_root
HTTP_PORT=$(bench_free_port)
STATUS_PORT=$(bench_free_port)
cat >"$RUN_DIR/relay.conf" <<EOF
[server]
http = 127.0.0.1:$HTTP_PORT
status = 127.0.0.1:$STATUS_PORT

[station radio]
upstream = http://127.0.0.1:$(cat "$RUN_DIR/up2.port")/stream.mp3
bind = 127.0.0.1
port = $(bench_free_port)
chain_titles = yes

[station edge]
upstream = tcp://127.0.0.1:$ROOT_PORT
bind = 127.0.0.1
port = $(bench_free_port)
EOF
"$RR" serve --config "$RUN_DIR/relay.conf" >"$RUN_DIR/relay.log" 2>&1 &
RELAY=$!
wait_until 10 "$RELAY" port_busy "$HTTP_PORT" || { cat "$RUN_DIR/relay.log"; die "the relay did not start"; }

"$PY" "$REPO_ROOT/bench/hlscheck.py" --base "http://127.0.0.1:$HTTP_PORT" --stream radio --stream edge \
    --duration "$DURATION" --json "$RUN_DIR/hlscheck.json" >"$RUN_DIR/hlscheck.txt" 2>&1 &
CHECK=$!
started=$(date +%s)
sleep $((DURATION / 3))
say "+$(($(date +%s) - started)) s: the root restarts (the edge's upstream comes back as a new stream)"
bench_stop "$ROOT"
start_root
sleep $((DURATION / 3))
say "+$(($(date +%s) - started)) s: the root restarts mono (the edge starts a new link of one channel)"
bench_stop "$ROOT"
start_root --channels 1
status=0
wait "$CHECK" || status=$?
cat "$RUN_DIR/hlscheck.txt"
kill -0 "$RELAY" 2>/dev/null || die "the relay under test died (see $RUN_DIR/relay.log)"
exit "$status"
