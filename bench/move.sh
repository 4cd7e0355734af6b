#!/usr/bin/env bash
# What moving listeners costs: two stations (a and b, the test fixture's audio, looped), N raw listeners of station a (radio-relay-load,
# which checks every listener's Ogg stream page by page), the server's CPU in a steady window before
# `/admin/moveclients?mount=/a.opus&destination=/b.opus` and in one after it, and what the load tool saw: a moved
# listener's stream must stay one valid stream (no CRC, framing or start error, no disconnect). After a move each
# listener's pages are re-stamped for it (its serial, sequence, granules and CRC: `OggSplice`), so the second window
# costs more: this prints how much.
#
#   bench/move.sh                     # N = 2000 5000, 20 s windows
#   COUNTS="10000" bench/move.sh
#
# Environment: COUNTS, WINDOW (20), PORT (18231; b: PORT+1, HTTP: PORT+2), RADIO_RELAY and LOAD (the binaries). Loopback
# only; every process started here is stopped by PID; each run is bounded (2 × WINDOW + 40 s).
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RR=$(relay_binary)
LOAD=$(load_binary)
bench_defaults "COUNTS=2000 5000" WINDOW=20 PORT=18231
require_binaries "radio-relay:$RR" "radio-relay-load:$LOAD"
require_tools curl
raise_nofile
bench_tmpdir move
TMP=$BENCH_TMP
bench_traps

ticks() { process_ticks "$1" 2>/dev/null || echo 0; }
listening() { ss -Hltn "sport = :$1" | grep -q .; }
# The server's cores over `WINDOW` seconds from now.
cores() {
    local c0 c1 t0 t1
    c0=$(ticks "$1")
    t0=$(date +%s.%N)
    sleep "$WINDOW"
    c1=$(ticks "$1")
    t1=$(date +%s.%N)
    awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v c="$CLK_TCK" 'BEGIN { printf "%.3f", (b - a) / c / (e - s) }'
}

echo "== moveclients of N raw listeners from station a to b; $(nproc) cores; $(relay_version "$RR")"
printf '%-6s %7s %12s %12s %7s %s\n' N errors "CPU before" "CPU after" ratio answer
for n in $COUNTS; do
    cat >"$TMP/move.conf" <<CONF
[server]
status = off
http = 127.0.0.1:$((PORT + 2))
admin_password = bench-move-1
log_level = warning
[station a]
upstream = $REPO_ROOT/Tests/Fixtures/stereo-44k-128k.mp3
bind = 127.0.0.1
port = $PORT
max_listeners = 0
max_per_ip = 0
[station b]
upstream = $REPO_ROOT/Tests/Fixtures/stereo-44k-128k.mp3
bind = 127.0.0.1
port = $((PORT + 1))
max_listeners = 0
max_per_ip = 0
CONF
    "$RR" serve --config "$TMP/move.conf" >"$TMP/server.log" 2>&1 &
    rr=$!
    bench_track "$rr"
    wait_until 10 "$rr" listening "$PORT" || true
    sleep 3
    ramp=$(awk -v n="$n" 'BEGIN { printf "%.2f", n / 2000 }')
    duration=$(awk -v r="$ramp" -v w="$WINDOW" 'BEGIN { printf "%d", r + 2 * w + 12 }')
    timeout $((duration + 30)) "$LOAD" --port "$PORT" -n "$n" --duration "$duration" --ramp "$ramp" \
        --json "$TMP/load.json" >"$TMP/load.txt" 2>&1 &
    load=$!
    bench_track "$load"
    sleep "$(awk -v r="$ramp" 'BEGIN { printf "%d", r + 3 }')"
    before=$(cores "$rr")
    answer=$(curl -s -u admin:bench-move-1 \
        "http://127.0.0.1:$((PORT + 2))/admin/moveclients?mount=/a.opus&destination=/b.opus" |
        sed -n 's/.*<message>\(.*\)<\/message>.*/\1/p')
    sleep 2
    after=$(cores "$rr")
    wait "$load" || true
    bench_stop "$load" "$rr"
    [[ -s $TMP/load.json ]] || { cat "$TMP/load.txt" "$TMP/server.log" >&2; die "no load report for N=$n"; }
    python3 - "$TMP/load.json" "$n" "$before" "$after" "$answer" <<'PY'
import json, sys
report, n, before, after, answer = sys.argv[1:]
r = json.load(open(report))
ogg = r["ogg"]
errors = (ogg["crc_errors"] + ogg["framing_errors"] + ogg["start_errors"] + ogg["serial_changes"]
          + ogg["granule_regressions"] + r["unexpected_disconnects_normal"] + r["stuck_at_end"] + r["connect_failures"]
          + (r["listeners"] - r["connected"]))
ratio = float(after) / float(before) if float(before) > 0 else float("nan")
print(f"{n:<6} {errors:7d} {float(before):12.3f} {float(after):12.3f} {ratio:7.2f} {answer}")
PY
done
echo "(errors: Ogg CRC/framing/start errors, serial changes, granule regressions + unexpected disconnects + stuck + connect failures + never connected;"
echo " CPU: the server's cores in a ${WINDOW} s window before the move and one starting 2 s after it)"
