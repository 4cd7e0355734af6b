#!/usr/bin/env bash
# HTTP vs raw listeners: one radio-relay serving its demo station on a raw TCP port and on an HTTP address, loaded
# in turn with N raw listeners and N HTTP listeners (GET /main.opus), in the same run. HTTP listeners are handed to
# the same network loop after their request is read, so the cost per listener should differ only by parsing one
# request each.
#
#   bench/http.sh                       # N=5000, 30 s per run, 3 rounds (raw, http, raw, http, ...)
#   N=1000 DURATION=10 ROUNDS=1 bench/http.sh
#
# Environment: N, DURATION (s per load run, ramp included), ROUNDS (medians over them), RAMP (s to open the N
# connections; default 5), WARMUP (s before the first run, 4), RADIO_RELAY and LOAD (the binaries; default the static
# release builds when built, else .build/release), KEEP_TMP=1.
# Prints each run, then the medians side by side with the ratio http/raw.
set -euo pipefail
shopt -s extglob
export LC_ALL=C
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_defaults N=5000 DURATION=30 ROUNDS=3 RAMP=5 WARMUP=4
RR=$(relay_binary)
LOAD=$(load_binary)
require_int --positive N DURATION ROUNDS RAMP WARMUP
require_binaries "radio-relay:$RR" "radio-relay-load:$LOAD"
need_tools jq
raise_nofile 65536
need_nofile $((N + 100)) N+100

bench_tmpdir --keepable http-bench
TMP=$BENCH_TMP
bench_traps

PORT_RAW=$(bench_free_port)
PORT_HTTP=$(bench_free_port)
[[ $PORT_RAW != "$PORT_HTTP" ]] || PORT_HTTP=$(bench_free_port)
NET_THREADS="net@(|-+([0-9])|-main)"   # the network loops: net, net-N (net-main before the pool)

echo "== HTTP vs raw listeners: N=$N, ${DURATION} s per run, $ROUNDS rounds, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine); $(relay_version "$RR")"
"$RR" serve --bind 127.0.0.1 --port "$PORT_RAW" --http "127.0.0.1:$PORT_HTTP" --max-listeners 0 \
    --log-level notice >"$TMP/radio-relay.log" 2>&1 &
RR_PID=$!
bench_track "$RR_PID"
wait_until 15 "$RR_PID" port_busy "$PORT_HTTP" || { cat "$TMP/radio-relay.log"; die "radio-relay did not start"; }
sleep "$WARMUP"

# run KIND ROUND: one load run; appends "kind cpu_ms_per_listener first_audio_p50 first_audio_p99 stall_p99 errors
# served" to $TMP/runs.
run() {
    local kind=$1 round=$2 json=$TMP/$1-$2.json c0 c1 args=(--port "$PORT_RAW")
    [[ $kind == http ]] && args=(--port "$PORT_HTTP" --http /main.opus)
    c0=$(process_ticks "$RR_PID")
    local n0 h0 n1 h1
    n0=$(thread_ticks "$RR_PID" "$NET_THREADS")
    h0=$(thread_ticks "$RR_PID" http)
    timeout --kill-after=10 $((DURATION + 120)) "$LOAD" "${args[@]}" -n "$N" --duration "$DURATION" --ramp "$RAMP" \
        --json "$json" >"$TMP/$kind-$round.txt" 2>&1 || true
    c1=$(process_ticks "$RR_PID")
    n1=$(thread_ticks "$RR_PID" "$NET_THREADS")
    h1=$(thread_ticks "$RR_PID" http)
    kill -0 "$RR_PID" 2>/dev/null || die "radio-relay died during the $kind run"
    local served cpu errors
    served=$(jq '.first_audio_ms.count' "$json")
    cpu=$(calc "($c1 - $c0) / $CLK_TCK" 3)
    errors=$(jq '[.ogg.crc_errors, .ogg.framing_errors, .ogg.start_errors, .ogg.serial_changes,
                  .ogg.gaps_beyond_join, .ogg.granule_regressions, .unexpected_disconnects_normal,
                  .connect_failures, .http_refused] | map(. // 0) | add' "$json")
    ((served > 0)) || die "no listener got audio in the $kind run (see $TMP/$kind-$round.txt)"
    printf '%s %s %s %s %s %s %s %s %s %s\n' "$kind" "$(calc "1000 * $cpu / $served" 4)" \
        "$(jq '.first_audio_ms.p50 * 100 | round / 100' "$json")" "$(jq '.first_audio_ms.p99 * 100 | round / 100' "$json")" \
        "$(jq '.stall_ms.p99 * 10 | round / 10' "$json")" \
        "$errors" "$served" "$cpu" "$(calc "1000 * ($n1 - $n0) / $CLK_TCK / $served" 4)" \
        "$(calc "1000 * ($h1 - $h0) / $CLK_TCK / $served" 4)" >>"$TMP/runs"
    printf '   round %d %-4s: %5d served, server CPU %7.2f s, %.4f ms per listener (network loop %.4f, front end %.4f), first audio p50 %s ms, errors %s\n' \
        "$round" "$kind" "$served" "$cpu" "$(calc "1000 * $cpu / $served" 4)" \
        "$(calc "1000 * ($n1 - $n0) / $CLK_TCK / $served" 4)" "$(calc "1000 * ($h1 - $h0) / $CLK_TCK / $served" 4)" \
        "$(jq '.first_audio_ms.p50 * 100 | round / 100' "$json")" "$errors"
}
: >"$TMP/runs"
for round in $(seq "$ROUNDS"); do
    run raw "$round"
    run http "$round"
done

col() { awk -v k="$1" -v c="$2" '$1 == k { print $c }' "$TMP/runs" | median -f %.3f; }
echo
echo "== medians over $ROUNDS rounds, N=$N, ${DURATION} s each"
printf '%-34s %12s %12s %10s\n' "" "raw TCP" "HTTP" "http/raw"
for row in "2:server CPU ms per listener" "9:  network loops (net-*)" "10:  HTTP front end (http)" \
    "8:server CPU s per run" "3:first audio p50 ms" "4:first audio p99 ms" \
    "5:stall p99 ms" "6:stream errors + disconnects" "7:listeners served"; do
    c=${row%%:*} label=${row#*:}
    r=$(col raw "$c") h=$(col http "$c")
    printf '%-34s %12s %12s %10s\n' "$label" "$r" "$h" "$(awk "BEGIN { if ($r > 0) printf \"%.2f\", $h / $r; else print \"-\" }")"
done
