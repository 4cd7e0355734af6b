#!/usr/bin/env bash
# Connection storm: how much a crowd connecting at once costs the listeners already connected.
#
#   bench/storm.sh                         # 50 steady listeners; a storm of 10 000 connects in 1 s
#   STORM=5000 STEADY=20 bench/storm.sh    # smaller
#
# Environment:
#   STEADY        listeners connected before and through the storm (50)
#   STORM         connections the storm opens (10000), within STORM_RAMP seconds (1)
#   DURATION      seconds each steady run lasts (40); the storm starts STORM_AT seconds into the second one (10)
#   PORT          radio-relay's port on 127.0.0.1 (18140)
#   RADIO_RELAY, LOAD   binaries (default: the static release builds when built, else .build/release/radio-relay,
#                       .build/release/radio-relay-load)
#
# Run 1: STEADY listeners for DURATION s, no storm: their longest stalls (largest gap between two reads with data)
# give the baseline p99. Run 2: the same, and STORM_AT s in, a second load tool opens STORM connections within
# STORM_RAMP s and holds them for 15 s. The script prints the steady listeners' stall p50/p99/max in both runs and the
# difference of the p99s (target: at most +100 ms), the storm's own connect results, and the server's CPU and RSS.
# Loopback only; every process it starts is stopped by PID.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_defaults STEADY=50 STORM=10000 STORM_RAMP=1 STORM_AT=10 DURATION=40 PORT=18140
RR=$(relay_binary)
LOAD=$(load_binary)
require_binaries "radio-relay:$RR" "radio-relay-load:$LOAD"
need_tools jq

# One descriptor per connection, for the server and for the storm's load tool.
raise_nofile 65536
bench_tmpdir storm
tmp=$BENCH_TMP
bench_traps

"$RR" serve --bind 127.0.0.1 --port "$PORT" --max-listeners 0 --log-level notice 2>"$tmp/server.log" &
server=$!
bench_track "$server"
wait_until 10 "$server" port_busy "$PORT" || true
sleep 3

stall() { jq -r "(.stall_ms.$2 // null) | if . == null then \"n/a\" else (. * 10 | round / 10 | tostring) end" "$1"; }

echo "== connection storm: $STEADY steady listeners, $STORM connects in ${STORM_RAMP} s, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine); $(relay_version "$RR"); ulimit -n $(ulimit -n)"

set +e
"$LOAD" --port "$PORT" -n "$STEADY" --duration "$DURATION" --json "$tmp/calm.json" >"$tmp/calm.txt" 2>&1
calm_rc=$?
c0=$(process_ticks "$server")
"$LOAD" --port "$PORT" -n "$STEADY" --duration "$DURATION" --json "$tmp/storm-steady.json" >"$tmp/steady.txt" 2>&1 &
steady=$!
bench_track "$steady"
sleep "$STORM_AT"
"$LOAD" --port "$PORT" -n "$STORM" --duration 15 --ramp "$STORM_RAMP" --connect-timeout 10 \
    --json "$tmp/storm.json" >"$tmp/storm.txt" 2>&1
storm_rc=$?
wait "$steady"
steady_rc=$?
set -e
bench_stop "$steady"
c1=$(process_ticks "$server")
kill -0 "$server" 2>/dev/null || die "the server died: $(tail -5 "$tmp/server.log")"
rss=$(proc_status_kb "$server" VmHWM)

p99_calm=$(stall "$tmp/calm.json" p99)
p99_storm=$(stall "$tmp/storm-steady.json" p99)
printf '\n%-34s %12s %12s\n' "steady listeners' longest stall" "no storm" "storm"
for q in p50 p99 max; do
    printf '%-34s %12s %12s\n' "  $q ms" "$(stall "$tmp/calm.json" $q)" "$(stall "$tmp/storm-steady.json" $q)"
done
printf '%-34s %12s %12s\n' "  load tool exit (0: all valid)" "$calm_rc" "$steady_rc"
rise=$(awk -v a="$p99_calm" -v b="$p99_storm" 'BEGIN { printf "%.0f", b - a }')
printf '%-34s %25s\n' "p99 rise ms (target <= 100)" "$rise"
echo
echo "storm: $(jq -r '"\(.connected) of \(.listeners) connected, \(.connect_failures) failed, connect p99 \(.connect_ms.p99 // "n/a") ms, first audio p99 \(.first_audio_ms.p99 // "n/a") ms"' "$tmp/storm.json") (load tool exit $storm_rc)"
echo "server: $(awk -v t="$(( c1 - c0 ))" -v k="$CLK_TCK" 'BEGIN { printf "%.1f", t / k }') CPU s in the storm run, peak RSS $((rss / 1024)) MB, $(grep -c '' "$tmp/server.log") log lines"
verdict=ok
((calm_rc == 0 && steady_rc == 0)) || verdict=FAIL
((rise <= 100)) || verdict=FAIL
echo "result: $verdict"
[[ $verdict == ok ]]
