#!/usr/bin/env bash
# What an MP3 pass-through listener costs next to an Opus listener: one radio-relay serving its demo station with
# `--mp3 yes` on an HTTP address, loaded in turn, in the same run, with N listeners on /main.opus (Ogg Opus, 96 kb/s)
# and N on /main.mp3 (the demo's own 128 kb/s MP3 frames), RAMP + DURATION s each, alternating over ROUNDS. The
# relay's network loops' CPU (utime + stime of its net/net-N threads, /proc/PID/task/*) is sampled SETTLE s after
# the ramp and at the end: CPU per listener-second over that steady window, and the relay's bytes per
# listener-second (bytes_out from /status.json over the same window). A third run, mp3icy, has the MP3 listeners ask
# for titles in band (`Icy-MetaData: 1`: a metadata block cut into their writes every 16 000 bytes). Prints each run,
# then medians side by side with the ratios MP3/Opus and MP3+ICY/Opus. The pipeline's CPU is the same for both (the MP3 output needs no decode or encode of its
# own; one station makes both); it is printed per run too.
#
#   bench/mp3.sh                           # N=1000, 10 s ramp + 30 s per run, 2 rounds: about 5 minutes
#   N=200 DURATION=10 ROUNDS=1 bench/mp3.sh
#
# Environment: N (1000), DURATION (30), RAMP (10), SETTLE (2), ROUNDS (2), RADIO_RELAY (the static release binary when
# built, else .build/release/radio-relay), LOAD (the same for radio-relay-load), LOG_DIR (bench/out/mp3-DATE).
# The load tool checks Ogg framing, which MP3 has not: its Ogg error counts on the MP3 runs are expected and not
# figures. Loopback only; every process started here is stopped by its PID. Needs jq; `ulimit -Hn` at least N + 100.
set -euo pipefail
export LC_ALL=C
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_defaults N=1000 DURATION=30 RAMP=10 SETTLE=2 ROUNDS=2 "LOG_DIR=$REPO_ROOT/bench/out/mp3-$(date -u +%Y%m%d-%H%M%S)"
LOAD=$(load_binary)
require_int --positive N DURATION RAMP ROUNDS
RR=$(relay_binary)
require_binaries "radio-relay:$RR" "radio-relay-load:$LOAD"
command -v jq >/dev/null || die "needs jq (.ci/deps --bench)"
raise_nofile
mkdir -p "$LOG_DIR"
HTTP=$(bench_free_port)
STATUS=$(bench_free_port)
PORT=$(bench_free_port)
"$RR" serve --port "$PORT" --bind 127.0.0.1 --http "127.0.0.1:$HTTP" --status "127.0.0.1:$STATUS" --mp3 yes \
    --max-listeners 0 --max-per-ip 0 --log-level notice >"$LOG_DIR/relay.log" 2>&1 &
RELAY=$!
bench_track "$RELAY"
bench_traps
wait_until 10 "$RELAY" port_busy "$HTTP" || { cat "$LOG_DIR/relay.log" >&2; die "the relay did not start"; }
sleep 3
bytes_out() { curl -s "http://127.0.0.1:$STATUS/status.json" | jq "[.stations[0].outputs[] | select(.mount == \"$1\") | .bytes_out] | add"; }
declare -A cpu bytes pipe
for round in $(seq "$ROUNDS"); do
    for kind in opus mp3 mp3icy; do
        mount=main.${kind%icy}
        icy=()
        [[ $kind == mp3icy ]] && icy=(--icy)
        "$LOAD" --port "$HTTP" --http "/$mount" "${icy[@]}" -n "$N" --ramp "$RAMP" --duration "$((RAMP + DURATION))" \
            --no-start-check --json "$LOG_DIR/load-$kind-$round.json" >"$LOG_DIR/load-$kind-$round.txt" 2>&1 &
        load=$!
        bench_track "$load"
        sleep "$((RAMP + SETTLE))"
        t0=$(date +%s.%N) n0=$(thread_ticks "$RELAY" 'net*') p0=$(thread_ticks "$RELAY" 'pipe-*') b0=$(bytes_out "$mount")
        sleep "$((DURATION - SETTLE - 1))"
        t1=$(date +%s.%N) n1=$(thread_ticks "$RELAY" 'net*') p1=$(thread_ticks "$RELAY" 'pipe-*') b1=$(bytes_out "$mount")
        wait "$load" || true
        bench_stop "$load"
        cpu[$kind,$round]=$(awk -v a="$n0" -v b="$n1" -v t0="$t0" -v t1="$t1" -v n="$N" -v hz="$CLK_TCK" \
            'BEGIN { printf "%.5f", (b - a) / hz * 1000 / ((t1 - t0) * n) }')
        bytes[$kind,$round]=$(awk -v a="$b0" -v b="$b1" -v t0="$t0" -v t1="$t1" -v n="$N" \
            'BEGIN { printf "%.0f", (b - a) / ((t1 - t0) * n) }')
        pipe[$kind,$round]=$(awk -v a="$p0" -v b="$p1" -v t0="$t0" -v t1="$t1" -v hz="$CLK_TCK" \
            'BEGIN { printf "%.2f", (b - a) / hz * 100 / (t1 - t0) }')
        echo "round $round $kind: $N listeners on /$mount; net threads ${cpu[$kind,$round]} ms CPU per listener-s," \
            "${bytes[$kind,$round]} bytes per listener-s; pipeline ${pipe[$kind,$round]} % of a core"
        sleep 2
    done
done
med() { local kind=$1 what=$2 values=() r; for r in $(seq "$ROUNDS"); do eval "values+=(\${$what[$kind,$r]})"; done; median "${values[@]}"; }
echo
printf '%-40s %10s %10s %10s %9s %9s\n' "medians over $ROUNDS rounds, N=$N, ${DURATION}s" "Opus" "MP3" "MP3+ICY" \
    "MP3/Opus" "ICY/Opus"
ratio() { awk -v o="$1" -v m="$2" 'BEGIN { printf "%.2f", (o > 0 ? m / o : 0) }'; }
for what in cpu bytes pipe; do
    label=$([[ $what == cpu ]] && echo "net threads, ms CPU per listener-s" || { [[ $what == bytes ]] && echo "bytes sent per listener-s" || echo "pipeline, % of a core"; })
    o=$(med opus $what) m=$(med mp3 $what) i=$(med mp3icy $what)
    printf '%-40s %10s %10s %10s %9s %9s\n' "$label" "$o" "$m" "$i" "$(ratio "$o" "$m")" "$(ratio "$o" "$i")"
done
echo "logs: $LOG_DIR"
