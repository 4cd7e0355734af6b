#!/usr/bin/env bash
# End-to-end latency benchmark: upstream sends an MP3 frame -> a raw-TCP listener receives the Ogg page holding it.
#
#   bench/latency.sh                        # 30 s per run: 2 configurations x 4 send patterns x 2 joins, ~10 min
#   DURATION=60 bench/latency.sh            # seconds measured per run
#   SENDS="frame chunk250" JOINS=2 bench/latency.sh   # a subset: upstream send patterns, listener join delays
#
# Send patterns (how the upstream writes, as real servers do): frame (one MP3 frame per send() at its due time),
# chunk50 (whatever became due, every 20-50 ms), chunk250 (every 250 ms: a server's write loop), burst2 (2 s of
# frames at once on connect, then one per send()). Joins: the listener connects 0.3 s and 2 s after the upstream.
#   EXTRA=1 bench/latency.sh                # also 100 ms pages with flush-ms 0 (separates page size from flushing)
#   ATTACH=5000 CONFIGS=default bench/latency.sh   # the defaults only, with 5000 other listeners
#   CONFIGS=default DEFAULT_ARGS="--flush-ms 500" bench/latency.sh   # the defaults with other flags
#   LOW_ARGS="--page-ms 20 --flush-ms 0" bench/latency.sh   # low-latency mode's flags (default: --page-ms 10
#                                           # --flush-ms 0 --latency low; a build before 2026-12-06 takes 20 only)
#   ATTACH=5000 bench/latency.sh            # 5000 other listeners (radio-relay-load) connected to the station
#                                           # before the measured one joins: flush_ms auto flushes for that audience
#   RADIO_RELAY=/path/to/radio-relay bench/latency.sh
#   BENCH_OUT=/tmp/bench bench/latency.sh   # cache/output dir (default bench/out/, git-ignored)
#
# Each configuration runs bench/latency.py once: one process that is both the upstream (an HTTP/1.0 server on
# 127.0.0.1 sending a test MP3 at real time, frame by frame) and the listener (raw TCP; decodes the Ogg Opus with
# libopus and finds marker bursts), on one clock. latency.py starts the server under test itself, with the
# upstream URL and a free port, and stops it by PID. Loopback only. The method and its error are described at the
# top of bench/latency.py.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# CONNECT_DELAY: seconds between the relay's upstream connection and the listener's; CONFIGS: which of the three to
# run; DEFAULT_ARGS: more flags for the "default" configuration, e.g. --flush-ms 500.
bench_defaults DURATION=30 "SENDS=frame chunk50 chunk250 burst2" "JOINS=0.3 2" EXTRA=0 CONNECT_DELAY=2 ATTACH=0 \
    "CONFIGS=default low-latency ffmpeg" "DEFAULT_ARGS=" "LOW_ARGS=--page-ms 10 --flush-ms 0 --latency low"
RR=$(relay_binary)
LOAD=$(load_binary)
OUT=$(abs_path "${BENCH_OUT:-$REPO_ROOT/bench/out}")
PY=${PYTHON:-python3}
LATENCY_PY=$REPO_ROOT/bench/latency.py

[[ $DURATION =~ ^[0-9]+([.][0-9]+)?$ ]] && [[ ${DURATION%.*} -ge 5 ]] || die "DURATION must be a number of seconds >= 5"
[[ $CONNECT_DELAY =~ ^[0-9]+([.][0-9]+)?$ ]] || die "CONNECT_DELAY must be a number of seconds"

require_binaries "radio-relay:$RR"
if ((ATTACH > 0)); then
    require_binaries "radio-relay-load:$LOAD"
    raise_nofile   # the server and the load tool each hold ATTACH descriptors
fi
install_bench_tools
require_python "$PY" 9

RUN_DIR=$OUT/logs/latency-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN_DIR"

# ---------------------------------------------------------------- cleanup: only our own processes, by PID
CURRENT_PID=""
CURRENT_CHILD_FILE=""
# latency.py, then the server under test, in case latency.py itself died before stopping it (its PID in a file).
bench_on_exit() {
    bench_stop "$CURRENT_PID"
    if [[ -n $CURRENT_CHILD_FILE && -s $CURRENT_CHILD_FILE ]]; then
        local child
        child=$(cat "$CURRENT_CHILD_FILE")
        if [[ $child =~ ^[0-9]+$ ]] && kill -0 "$child" 2>/dev/null \
            && [[ $(cat "/proc/$child/comm" 2>/dev/null) =~ ^(radio-relay|ffmpeg)$ ]]; then
            kill -TERM "$child" 2>/dev/null || true
            sleep 0.5
            kill -KILL "$child" 2>/dev/null || true
        fi
    fi
}
bench_traps

# ---------------------------------------------------------------- context and test signal
echo "latency benchmark: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(machine)"
echo "radio-relay: $RR ($(relay_version "$RR"))"
echo "ffmpeg: $(ffmpeg -hide_banner -version | head -1)"
echo "libopus: $(dpkg-query -W -f '${Version}' libopus0 2>/dev/null || echo '?'); python: $("$PY" --version 2>&1)"
load_note() {  # latency is a real-time measurement: other CPU load on the machine adds to it
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    if awk -v l="$load" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
        echo "warning: load average $load on $(nproc) cores $1: other processes compete for the CPU and add latency"
    else
        echo "load average $load $1"
    fi
}
load_note "before the runs"
MP3=$("$PY" "$LATENCY_PY" gen --out "$OUT")
echo "measuring ${DURATION} s per configuration; logs in $RUN_DIR"
echo

# ---------------------------------------------------------------- runs
JSONS=()
run() {  # name label connect-delay send-pattern -- command...
    local name=$1 label=$2 delay=$3 send=$4
    shift 5
    local file=${name//\//-}
    local json=$RUN_DIR/$file.json
    CURRENT_CHILD_FILE=$RUN_DIR/$file.pid
    "$PY" "$LATENCY_PY" run --out "$OUT" --name "$name" --label "$label" --duration "$DURATION" --send "$send" \
        --connect-delay "$delay" --json "$json" --log "$RUN_DIR/$file.log" --pidfile "$CURRENT_CHILD_FILE" \
        --dump "$RUN_DIR/$file.dump" --attach "$ATTACH" --load-binary "$LOAD" \
        -- "$@" &
    CURRENT_PID=$!
    # latency.py bounds its own run (startup <= 30 s, then DURATION, then the analysis); this is a backstop.
    local limit=$(( ${DURATION%.*} + 120 )) waited=0
    while kill -0 "$CURRENT_PID" 2>/dev/null; do
        if ((waited >= limit * 10)); then
            echo "error: $name did not finish within $limit s; stopping it" >&2
            kill -TERM "$CURRENT_PID" 2>/dev/null || true
            break
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
    wait "$CURRENT_PID" || echo "($name failed; see $RUN_DIR/$file.log)"
    CURRENT_PID=""
    CURRENT_CHILD_FILE=""
    JSONS+=("$json")
    echo
}

DEFAULT_FLUSH=$("$RR" serve --help 2>&1 | sed -n 's/.*--flush-ms MS.*: \([a-z0-9]*\) (default).*/\1/p' | head -1)
DEFAULT_HOLD=$("$RR" serve --help 2>&1 | sed -n 's/.*--flush-hold-ms MS.*(default \([0-9]*\).*/\1/p' | head -1)
[[ -n $DEFAULT_HOLD ]] && DEFAULT_FLUSH="$DEFAULT_FLUSH, hold $DEFAULT_HOLD"
((ATTACH > 0)) && DEFAULT_FLUSH="$DEFAULT_FLUSH; $ATTACH attached"
[[ -n $DEFAULT_ARGS ]] && DEFAULT_FLUSH="$DEFAULT_FLUSH; $DEFAULT_ARGS"
DEFAULT_PAGE=$("$RR" serve --help 2>&1 | sed -n 's/.*--page-ms MS.*(default \([0-9]*\).*/\1/p' | head -1)
for send in $SENDS; do
    for join in $JOINS; do
        [[ " $CONFIGS " == *" default "* ]] &&
            run "default/$send/join$join" "defaults (pages ${DEFAULT_PAGE:-?} ms, flush ${DEFAULT_FLUSH:-?})" \
                "$join" "$send" -- "$RR" serve --upstream '{upstream}' --bind 127.0.0.1 --port '{port}' \
                --max-listeners 0 $DEFAULT_ARGS
        [[ " $CONFIGS " == *" low-latency "* ]] &&
            run "low-latency/$send/join$join" "$LOW_ARGS" "$join" "$send" -- \
                "$RR" serve --upstream '{upstream}' --bind 127.0.0.1 --port '{port}' $LOW_ARGS
        if [[ $EXTRA == 1 ]]; then
            run "page100-flush0/$send/join$join" "--page-ms 100 --flush-ms 0" "$join" "$send" -- \
                "$RR" serve --upstream '{upstream}' --bind 127.0.0.1 --port '{port}' --flush-ms 0
        fi
    done
done
# ffmpeg accepts one listener and opens its output only after probing the input; latency.py connects as soon as it
# listens (retrying every 2 ms). Audio that queued up before that is excluded like the relay's burst.
[[ " $CONFIGS " == *" ffmpeg "* ]] && ATTACH=0 run "ffmpeg/frame/join0" "libopus 96k, -page_duration 100000" 0 frame -- \
    ffmpeg -nostdin -v error -i '{upstream}' -c:a libopus -b:a 96k -page_duration 100000 -f ogg \
    'tcp://127.0.0.1:{port}?listen=1'

"$PY" "$LATENCY_PY" table "${JSONS[@]}"
load_note "after the runs"
