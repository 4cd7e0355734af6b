#!/usr/bin/env bash
# Soak: radio-relay serve with a faulty live upstream and N raw-TCP listeners for minutes.
#
#   bench/soak.sh                            # 10 minutes, 50 listeners (about 11 minutes in all)
#   DURATION=150 bench/soak.sh               # a short run: faults at 60 (drop), 90 (stall), 120 s (garbage+drop)
#   LISTENERS=20 bench/soak.sh
#   RADIO_RELAY=/path/to/radio-relay BENCH_OUT=/tmp/bench bench/soak.sh
#   RELAY_ARGS='--page-ms 20 --flush-ms 0' bench/soak.sh   # extra `serve` options
#
# Environment: DURATION (seconds after the relay's first upstream connection, t0; default 600), LISTENERS (50),
# CONNECT_DELAY (listeners connect at t0 + this, default 3 s), RELAY_ARGS, RADIO_RELAY (default: the static release
# build when built, else .build/release/radio-relay), BENCH_OUT, PYTHON.
#
# bench/soak.py is the upstream (HTTP + ICY on 127.0.0.1: the test MP3 at real time, dropped every 60 s, stalled
# 5 s every 90 s, 2 s of garbage every 120 s, every fault logged) and, in a second process, the N listeners (every
# page checked and every packet decoded with libopus; levels of every 20 ms window; latency by marker bursts). This
# script starts both and the relay (bench/lib.sh's relay_binary; a missing one stops the script with the command that
# builds it), stops each by its PID, and runs the report: the table, a verdict per criterion, exit 1 if one fails.
# Loopback only; every process is bounded in time. The method is described at the top of bench/soak.py; logs in
# bench/out/logs/soak-*/.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_defaults DURATION=600 LISTENERS=50 CONNECT_DELAY=3 "RELAY_ARGS="
RR=$(relay_binary)
OUT=$(abs_path "${BENCH_OUT:-$REPO_ROOT/bench/out}")
PY=${PYTHON:-python3}
SOAK_PY=$REPO_ROOT/bench/soak.py

[[ $DURATION =~ ^[0-9]+$ ]] && ((DURATION >= 30)) || die "DURATION must be whole seconds >= 30 (got '$DURATION')"
[[ $LISTENERS =~ ^[0-9]+$ ]] && ((LISTENERS >= 1)) || die "LISTENERS must be a positive integer (got '$LISTENERS')"
[[ $CONNECT_DELAY =~ ^[0-9]+$ ]] && ((CONNECT_DELAY < 50)) || die "CONNECT_DELAY must be whole seconds < 50"

require_binaries "radio-relay:$RR"
if ! command -v lame >/dev/null || ! ldconfig -p | grep -q 'libopus\.so\.0' || ! ldconfig -p | grep -q 'libogg\.so\.0'; then
    install_bench_tools
fi
"$PY" -c 'import sys, warnings; warnings.simplefilter("ignore"); import audioop; sys.exit(sys.version_info < (3, 9))' \
    || die "$PY must be Python 3.9 to 3.12 (audioop)"
ulimit -n 4096 2>/dev/null || true
(($(ulimit -n) >= LISTENERS + 64)) || die "open-file limit $(ulimit -n) is too low for $LISTENERS listeners"

RUN_DIR=$OUT/logs/soak-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN_DIR"
LENGTH=$((DURATION + 90))   # the signal never loops within a run

# ---------------------------------------------------------------- cleanup: only our own processes, by PID
UP_PID="" RELAY_PID="" LISTEN_PID=""
bench_on_exit() { bench_stop "$LISTEN_PID" "$RELAY_PID" "$UP_PID"; }
bench_traps

echo "soak: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(machine), load $(loadavg)"
echo "radio-relay: $RR ($(relay_version "$RR"))${RELAY_ARGS:+, extra options: $RELAY_ARGS}"
echo "libopus $(dpkg-query -W -f '${Version}' libopus0 2>/dev/null || echo '?'), $("$PY" --version 2>&1)"
echo "$DURATION s, $LISTENERS listeners; logs in $RUN_DIR"
TABLE=$("$PY" "$SOAK_PY" gen --out "$OUT" --length "$LENGTH")
TABLE=${TABLE%.mp3}.json

# ---------------------------------------------------------------- upstream, relay, listeners
"$PY" "$SOAK_PY" upstream --out "$OUT" --length "$LENGTH" --duration "$((DURATION + 5))" \
    --port-file "$RUN_DIR/upstream.port" --t0-file "$RUN_DIR/t0" --json "$RUN_DIR/upstream.json" \
    2>"$RUN_DIR/upstream.log" &
UP_PID=$!
wait_until 30 "$UP_PID" test -s "$RUN_DIR/upstream.port" || die "the upstream did not start (see $RUN_DIR/upstream.log)"
UPORT=$(cat "$RUN_DIR/upstream.port")
LPORT=$(bench_free_port)
# shellcheck disable=SC2086  # RELAY_ARGS is a list of options
"$RR" serve --upstream "http://127.0.0.1:$UPORT/stream.mp3" --bind 127.0.0.1 --port "$LPORT" $RELAY_ARGS \
    >"$RUN_DIR/relay.log" 2>&1 &
RELAY_PID=$!
wait_until 30 "$RELAY_PID" test -s "$RUN_DIR/t0" || die "the relay never connected to the upstream (see $RUN_DIR/relay.log)"
T0=$(cat "$RUN_DIR/t0")
sleep "$CONNECT_DELAY"
kill -0 "$RELAY_PID" 2>/dev/null || die "the relay exited (see $RUN_DIR/relay.log)"
UNTIL=$((T0 + DURATION * 1000000000))
"$PY" "$SOAK_PY" listen --port "$LPORT" --n "$LISTENERS" --until-ns "$UNTIL" --relay-pid "$RELAY_PID" \
    --json "$RUN_DIR/listen.json" 2>"$RUN_DIR/listen.log" &
LISTEN_PID=$!
say "relay PID $RELAY_PID on 127.0.0.1:$LPORT, upstream PID $UP_PID on :$UPORT, listeners PID $LISTEN_PID"
limit=$((DURATION + 120)) waited=0
while kill -0 "$LISTEN_PID" 2>/dev/null; do   # backstop: soak.py listen stops by itself at t0 + DURATION
    ((waited < limit * 10)) || { say "the listeners did not finish within $limit s"; break; }
    sleep 0.1
    waited=$((waited + 1))
done
wait "$LISTEN_PID" || die "the listeners failed (see $RUN_DIR/listen.log)"
LISTEN_PID=""
kill -0 "$RELAY_PID" 2>/dev/null || say "the relay was no longer running at the end"
bench_stop "$RELAY_PID" "$UP_PID"
RELAY_PID="" UP_PID=""
[[ -s $RUN_DIR/upstream.json ]] || die "the upstream wrote no log (see $RUN_DIR/upstream.log)"

echo "upstream events and relay log: $RUN_DIR/upstream.log, $RUN_DIR/relay.log"
grep -iE 'upstream|retry|reconnect|outage|silence' "$RUN_DIR/relay.log" | grep -v 'listener' | head -40 | sed 's/^/  relay: /' || true
"$PY" "$SOAK_PY" report --upstream "$RUN_DIR/upstream.json" --listen "$RUN_DIR/listen.json" --table "$TABLE" \
    | tee "$RUN_DIR/report.txt"
exit "${PIPESTATUS[0]}"
