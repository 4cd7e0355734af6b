#!/usr/bin/env bash
# Holes in an edge's audio after its root restarts, for one build or two side by side.
#
#   bench/edge-restart.sh                                   # this tree's build: about 3 minutes
#   bench/edge-restart.sh /path/to/old/radio-relay          # and an older build after it: about 6 minutes
#   RESTARTS=3 PLAY=8 bench/edge-restart.sh                 # a quick check
#   RADIO_RELAY=/path/to/new/radio-relay BENCH_OUT=/tmp/bench bench/edge-restart.sh OLD
#
# Environment:
#   RESTARTS     root restarts per build (10)
#   PLAY         seconds the restarted root plays before the next kill (12)
#   DOWN         seconds the root stays down (3)
#   BASELINE     seconds the listener hears before the first kill (8)
#   EDGE_JOIN    ready: the edge starts once the root sends audio (default); with: right after the root, before it
#                has audio (the edge settles with the root's lead at its first audio, none if the root has none)
#   ICE_BURST    Icecast's burst-size in bytes (65535, its default: about 4 s of the 128k MP3, so a (re)started root
#                has a join burst at once); 0: a (re)started root has no audio ahead
#   RADIO_RELAY  the build measured first, "NEW" (default: the static release build when built, else
#                .build/release/radio-relay); the argument is "OLD"
#   OLD_WAIT     seconds to wait for the OLD binary to appear (a build still running; default 0)
#   BENCH_OUT    cache and logs (default bench/out/, git-ignored): the tone MP3, logs/edge-restart-DATE/
#   PYTHON       python3 (3.9+, standard library)
#
# Per build, all on 127.0.0.1, free ports: Debian's icecast2 (bench_icecast_config) with /tone.mp3 fed by
# `ffmpeg -re -stream_loop -1 -i TONE.mp3 -c copy -f mp3 icecast://…` (TONE: 32 s of 440 Hz left / 1 kHz right at
# -12 dBFS, 128k 44.1 kHz, looping without a silent seam: bench/edge_restart.py gen); a ROOT (`serve --upstream
# http://127.0.0.1:ICE/tone.mp3 --port R`); an EDGE (`serve --upstream tcp://127.0.0.1:R --port E`); one raw-TCP
# listener on the edge that keeps every byte with its arrival time (edge_restart.py listen). After BASELINE s, RESTARTS
# times: SIGKILL the root by its PID, DOWN s, start it again on the same port, PLAY s. Then edge_restart.py analyze
# decodes the capture (ffmpeg, f32le 48 kHz stereo), takes the RMS of 20 ms windows, and finds runs below -40 dBFS:
# the expected result is one silent run per restart (the outage, about DOWN s plus the edge's reconnect) and nothing
# else; every other run is a HOLE. It reports per restart the outage and the holes after it (ms, and seconds from
# the root's restart), the listener's disconnects (there should be none), and the capture's validity (own Ogg checks
# and oggz-validate). Last, the builds side by side. Every process is started here and stopped by its PID; every
# wait has a deadline (a build takes BASELINE + RESTARTS x (DOWN + PLAY) + about 30 s).
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COMMAND_LINE="$(for v in RESTARTS PLAY DOWN BASELINE EDGE_JOIN ICE_BURST; do
    if [[ -n ${!v:-} ]]; then printf '%s=%s ' "$v" "${!v}"; fi; done)bench/edge-restart.sh${1:+ $1}"

bench_defaults RESTARTS=10 PLAY=12 DOWN=3 BASELINE=8 OLD_WAIT=0 EDGE_JOIN=ready ICE_BURST=65535
NEW_RR=$(relay_binary)
OLD_RR=${1:+$(abs_path "$1")}
OUT=$(abs_path "${BENCH_OUT:-$REPO_ROOT/bench/out}")
PY=${PYTHON:-python3}
HELPER=$REPO_ROOT/bench/edge_restart.py

require_int RESTARTS PLAY DOWN BASELINE OLD_WAIT ICE_BURST
((RESTARTS >= 1 && RESTARTS <= 50 && PLAY >= 4 && PLAY <= 120 && DOWN <= 60)) \
    || die "RESTARTS 1 to 50, PLAY 4 to 120, DOWN at most 60"
[[ $EDGE_JOIN == ready || $EDGE_JOIN == with ]] || die "EDGE_JOIN must be ready or with (got '$EDGE_JOIN')"

require_binaries "radio-relay:$NEW_RR"
require_tools "icecast2, ffmpeg, oggz-tools, curl" icecast2 ffmpeg oggz-validate curl
id icecast2 >/dev/null 2>&1 || die "no icecast2 user (Debian's icecast2 package creates it)"
require_python "$PY" 9

RUN_DIR=$OUT/logs/edge-restart-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN_DIR"
chmod 755 "$OUT" "$OUT/logs" "$RUN_DIR"   # Icecast reads its config as the icecast2 user

# ---------------------------------------------------------------- cleanup: only our own processes, by PID
ICE_PID="" FF_PID="" ROOT_PID="" EDGE_PID="" LISTEN_PID=""
stop_all() {
    bench_stop "$LISTEN_PID" "$EDGE_PID" "$ROOT_PID" "$FF_PID" "$ICE_PID"
    ICE_PID="" FF_PID="" ROOT_PID="" EDGE_PID="" LISTEN_PID=""
}
bench_on_exit() { stop_all; }
bench_traps

now_ns() { date +%s%N; }
alive() { kill -0 "$1" 2>/dev/null; }

echo "edge-restart: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(machine), load $(loadavg)"
echo "$(icecast2 -v 2>&1 | head -1); $(ffmpeg -hide_banner -version | head -1 | cut -d' ' -f1-3); $("$PY" --version 2>&1)"
echo "$RESTARTS restarts: root SIGKILL, $DOWN s down, $PLAY s playing; $BASELINE s before the first; edge join $EDGE_JOIN," \
    "Icecast burst $ICE_BURST bytes; logs in $RUN_DIR"
TONE=$("$PY" "$HELPER" gen --out "$OUT")

# run_build LABEL BINARY: the whole scenario for one build; its report in $RUN_DIR/LABEL/report.json.
run_build() {
    local label=$1 rr=$2 dir=$RUN_DIR/$1 k t
    local version ice_port root_port edge_port password events
    mkdir -p "$dir"
    chmod 755 "$dir"
    events=$dir/events.txt
    : >"$events"
    version=$(relay_version "$rr")
    echo
    echo "== $label: $rr ($version)"

    password=er$RANDOM$RANDOM
    ice_port=$(bench_free_port)
    bench_icecast_config "$dir" "$ice_port" "$password" 20 "$ICE_BURST" 524288
    start_icecast "$dir" "$ice_port"

    ffmpeg -nostdin -v warning -re -stream_loop -1 -i "$TONE" -c copy -content_type audio/mpeg -f mp3 \
        "icecast://source:$password@127.0.0.1:$ice_port/tone.mp3" >"$dir/ffmpeg.log" 2>&1 &
    FF_PID=$!
    wait_until 15 "$FF_PID" icecast_mounted "$ice_port" "$password" /tone.mp3 \
        || { cat "$dir/ffmpeg.log" >&2; die "no /tone.mp3 on Icecast"; }

    root_port=$(bench_free_port)
    edge_port=$(bench_free_port)
    [[ $root_port != "$edge_port" ]] || edge_port=$(bench_free_port)
    start_root() {  # LOG
        "$rr" serve --upstream "http://127.0.0.1:$ice_port/tone.mp3" --bind 127.0.0.1 --port "$root_port" >"$1" 2>&1 &
        ROOT_PID=$!
    }
    start_root "$dir/root-0.log"
    if [[ $EDGE_JOIN == ready ]]; then
        timeout 30 "$PY" "$HELPER" probe --port "$root_port" --timeout 20 || { cat "$dir/root-0.log" >&2; die "no audio from the root"; }
    else
        wait_until 10 "$ROOT_PID" port_busy "$root_port" || { cat "$dir/root-0.log" >&2; die "the root did not listen"; }
    fi
    "$rr" serve --upstream "tcp://127.0.0.1:$root_port" --bind 127.0.0.1 --port "$edge_port" >"$dir/edge.log" 2>&1 &
    EDGE_PID=$!
    timeout 30 "$PY" "$HELPER" probe --port "$edge_port" --timeout 20 || { cat "$dir/edge.log" >&2; die "no audio from the edge"; }
    echo "   icecast :$ice_port (PID $ICE_PID), ffmpeg PID $FF_PID, root :$root_port, edge :$edge_port (PID $EDGE_PID)"

    local budget=$((BASELINE + RESTARTS * (DOWN + PLAY) + 60))
    "$PY" "$HELPER" listen --port "$edge_port" --dir "$dir" --max-seconds "$budget" 2>"$dir/listen.log" &
    LISTEN_PID=$!
    for ((t = 0; t < 100; t++)); do [[ -s $dir/ready ]] && break; alive "$LISTEN_PID" || break; sleep 0.1; done
    [[ -s $dir/ready ]] || { cat "$dir/listen.log" >&2; die "the listener got nothing from the edge in 10 s"; }
    echo "listen $(now_ns) 0" >>"$events"
    sleep "$BASELINE"

    for ((k = 1; k <= RESTARTS; k++)); do
        alive "$ROOT_PID" || echo "note $(now_ns) root-was-not-running-before-kill-$k" >>"$events"
        echo "kill $(now_ns) $k" >>"$events"
        kill -KILL "$ROOT_PID" 2>/dev/null || true
        { wait "$ROOT_PID"; } 2>/dev/null || true   # reaped here, so its PID is never signalled again
        ROOT_PID=""
        sleep "$DOWN"
        # The old root's listening socket is gone with the process; the port rebinds at once (SO_REUSEADDR).
        start_root "$dir/root-$k.log"
        echo "start $(now_ns) $k" >>"$events"
        printf '   restart %d/%d: root PID %s\n' "$k" "$RESTARTS" "$ROOT_PID"
        sleep "$PLAY"
        alive "$EDGE_PID" || { echo "note $(now_ns) edge-exited-after-restart-$k" >>"$events"; break; }
        alive "$LISTEN_PID" || { echo "note $(now_ns) listener-exited-after-restart-$k" >>"$events"; break; }
    done
    echo "end $(now_ns) 0" >>"$events"
    bench_stop "$LISTEN_PID"
    LISTEN_PID=""
    stop_all
    grep -iE 'upstream|reconnect|outage|silence|restart|error|warn' "$dir/edge.log" >"$dir/edge-upstream.log" || true
    timeout 300 "$PY" "$HELPER" analyze --dir "$dir" --events "$events" --label "$label" --binary "$rr" \
        --version "$version" --play "$PLAY" --json "$dir/report.json" --edge-log "$dir/edge.log" || die "the analysis of $label failed"
}

run_build NEW "$NEW_RR"
REPORTS=("$RUN_DIR/NEW/report.json")
if [[ -n $OLD_RR ]]; then
    if [[ ! -x $OLD_RR ]] && ((OLD_WAIT > 0)); then
        say "waiting up to $OLD_WAIT s for $OLD_RR"
        deadline=$((SECONDS + OLD_WAIT))
        while [[ ! -x $OLD_RR ]] && ((SECONDS < deadline)); do sleep 5; done
        sleep 2   # a binary that just appeared may still be being linked
    fi
    require_binaries "radio-relay:$OLD_RR"
    run_build OLD "$OLD_RR"
    REPORTS+=("$RUN_DIR/OLD/report.json")
fi

echo
echo "== summary: $COMMAND_LINE ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(loadavg))"
"$PY" "$HELPER" table "${REPORTS[@]}"
