#!/usr/bin/env bash
# How many listeners one station serves, with one network loop and with two: for each N and each loop count, the
# demo station and radio-relay-load on this machine, connecting at 2 000/s and staying for DURATION s.
#
#   bench/scale.sh                               # N = 10000 14000 19000, loops 1 and 2, 40 s each, ~5 minutes
#   COUNTS="10000" LOOPS="1 2" bench/scale.sh    # the busiest loop's CPU at 10 000, one loop against two
#   RADIO_RELAY=/tmp/old/radio-relay LOOPS=- bench/scale.sh   # a build without --network-threads ("-": its default)
#   EXTRA_ARGS="--flush-ms 300" bench/scale.sh   # more serve flags
#
# Environment: COUNTS, LOOPS, DURATION (40), PORT (18223), EXTRA_ARGS, RADIO_RELAY and LOAD (the binaries; default the
# static release builds when built, else .build/release).
#
# Printed per run: the load tool's errors (Ogg, disconnects, stuck, connect failures), first audio p99, longest
# stall p50/p99 (from each listener's first audio page), the server's peak RSS (VmHWM), its CPU in the steady part
# (from 2 s after the ramp to 2 s before the end: cores), the busiest network loop's CPU there (threads net, net-N)
# and the load tool's own CPU (it runs on the same cores). Loopback only; every process started here is stopped by
# PID; each run is bounded (DURATION + 30 s).
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RR=$(relay_binary)
LOAD=$(load_binary)
bench_defaults "COUNTS=10000 14000 19000" "LOOPS=1 2" DURATION=40 PORT=18223
require_binaries "radio-relay:$RR" "radio-relay-load:$LOAD"
raise_nofile
bench_tmpdir scale
TMP=$BENCH_TMP
bench_traps

ticks() { process_ticks "$1" 2>/dev/null || echo 0; }
# Something listens on 127.0.0.1:$1 (ss: no connection to the station).
listening() { ss -Hltn "sport = :$1" | grep -q .; }
# "NAME TICKS" for every network loop thread of PID.
loop_ticks() { thread_table "$1" | awk '$2 ~ /^net(-[0-9]+|-main)?$/ { print $2, $3 }'; }

echo "== one station, N listeners at 2000/s for $DURATION s; $(nproc) cores; $(relay_version "$RR")"
printf '%-6s %-5s %6s %9s %9s %9s %8s %9s %13s %9s\n' loops N errors "first p99" "stall p50" "stall p99" "RSS MB" \
    "CPU cores" "busiest loop" "load CPU"
for n in $COUNTS; do
    for loops in $LOOPS; do
        args=(serve --bind 127.0.0.1 --port "$PORT" --max-listeners 0 --log-level warning)
        [[ $loops != - ]] && args+=(--network-threads "$loops")
        # shellcheck disable=SC2206  # split on purpose
        [[ -n ${EXTRA_ARGS:-} ]] && args+=($EXTRA_ARGS)
        "$RR" "${args[@]}" >"$TMP/server.log" 2>&1 &
        rr=$!
        bench_track "$rr"
        wait_until 10 "$rr" listening "$PORT" || true
        sleep 3  # the station's first pages, a burst to give
        ramp=$(awk -v n="$n" 'BEGIN { printf "%.2f", n / 2000 }')
        timeout $((DURATION + 30)) "$LOAD" --port "$PORT" -n "$n" --duration "$DURATION" --ramp "$ramp" \
            --json "$TMP/load.json" >"$TMP/load.txt" 2>&1 &
        load=$!
        bench_track "$load"
        steady=$(awk -v r="$ramp" 'BEGIN { printf "%d", r + 2.5 }')
        sleep "$steady"
        c0=$(ticks "$rr")
        loop_ticks "$rr" >"$TMP/loops0"
        t0=$(date +%s.%N)
        sleep $((DURATION - steady - 2))
        c1=$(ticks "$rr")
        loop_ticks "$rr" >"$TMP/loops1"
        t1=$(date +%s.%N)
        hwm=$(proc_status_kb "$rr" VmHWM)
        wait "$load" || true
        bench_stop "$load" "$rr"
        [[ -s $TMP/load.json ]] || { cat "$TMP/load.txt" "$TMP/server.log" >&2; die "no load report for N=$n"; }
        busiest=$(join <(sort "$TMP/loops0") <(sort "$TMP/loops1") | awk -v c="$CLK_TCK" -v w="$(echo "$t1 - $t0" | bc)" \
            '{ d = ($3 - $2) / c / w; if (d > max) { max = d; name = $1 } } END { printf "%s %.3f", name, max }')
        python3 - "$TMP/load.json" "$loops" "$n" "$hwm" "$c0" "$c1" "$t0" "$t1" "$CLK_TCK" "$busiest" <<'PY'
import json, sys
report, loops, n, hwm, c0, c1, t0, t1, clk, busiest = sys.argv[1:]
r = json.load(open(report))
ogg = r["ogg"]
errors = (ogg["crc_errors"] + ogg["framing_errors"] + ogg["start_errors"] + r["unexpected_disconnects_normal"]
          + r["stuck_at_end"] + r["connect_failures"] + (r["listeners"] - r["connected"]))
cores = (int(c1) - int(c0)) / int(clk) / (float(t1) - float(t0))
f = lambda v: "-" if v is None else f"{v:.0f}"
print(f"{loops:<6} {n:<5} {errors:6d} {f(r['first_audio_ms']['p99']):>9} {f(r['stall_ms']['p50']):>9} "
      f"{f(r['stall_ms']['p99']):>9} {int(hwm) / 1024:8.1f} {cores:9.3f} {busiest:>13} "
      f"{r['cpu_seconds'] / r['duration_seconds']:9.3f}")
PY
    done
done
echo "(errors: Ogg CRC/framing/start errors + unexpected disconnects + stuck + connect failures + never connected;"
echo " CPU cores and the busiest loop in the steady part; load CPU: the load tool's cores over its whole run)"
