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
# connections; default 5), WARMUP (s before the first run, 4), RADIO_RELAY and LOAD (release binaries), KEEP_TMP=1.
# Prints each run, then the medians side by side with the ratio http/raw.
set -euo pipefail
shopt -s extglob
export LC_ALL=C
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "http: error: $*" >&2; exit 1; }
N=${N:-5000}
DURATION=${DURATION:-30}
ROUNDS=${ROUNDS:-3}
RAMP=${RAMP:-5}
WARMUP=${WARMUP:-4}
RR=${RADIO_RELAY:-$REPO_ROOT/.build/release/radio-relay}
LOAD=${LOAD:-$REPO_ROOT/.build/release/radio-relay-load}
for v in N DURATION ROUNDS RAMP WARMUP; do [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer"; done
source "$REPO_ROOT/bench/lib.sh"
require_binaries "radio-relay:$RR" "radio-relay-load:$LOAD"
command -v jq >/dev/null || install_bench_tools
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
(($(ulimit -n) >= N + 100)) || die "open-file limit $(ulimit -n) is below N+100"

TMP=$(mktemp -d /tmp/http-bench.XXXXXX)
RR_PID=
cleanup() {
    local status=$?
    [[ -n $RR_PID ]] && bench_stop_pid "$RR_PID"
    if [[ ${KEEP_TMP:-0} == 1 ]]; then echo "http: kept $TMP" >&2; else rm -rf "$TMP"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PORT_RAW=$(bench_free_port)
PORT_HTTP=$(bench_free_port)
[[ $PORT_RAW != "$PORT_HTTP" ]] || PORT_HTTP=$(bench_free_port)
clk_tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
# thread_ticks PATTERN: CPU ticks of the server's threads whose name matches PATTERN (a shell pattern: net, net-*:
# the network loops; http: the front end that reads requests and hands them over), summed.
thread_ticks() {
    local task total=0 name
    for task in /proc/"$RR_PID"/task/*; do
        name=$(cat "$task/comm" 2>/dev/null) || continue
        # shellcheck disable=SC2053  # a pattern on purpose
        [[ $name == $1 ]] && total=$((total + $(cpu_ticks "${task#/proc/}")))
    done
    echo "$total"
}
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "== HTTP vs raw listeners: N=$N, ${DURATION} s per run, $ROUNDS rounds, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(uname -sr), $(nproc) cores; $("$RR" --version | head -1)"
"$RR" serve --bind 127.0.0.1 --port "$PORT_RAW" --http "127.0.0.1:$PORT_HTTP" --max-listeners 0 \
    --log-level notice >"$TMP/radio-relay.log" 2>&1 &
RR_PID=$!
for _ in $(seq 75); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT_HTTP") 2>/dev/null && break
    kill -0 "$RR_PID" 2>/dev/null || { cat "$TMP/radio-relay.log"; die "radio-relay did not start"; }
    sleep 0.2
done
sleep "$WARMUP"

# run KIND ROUND: one load run; appends "kind cpu_ms_per_listener first_audio_p50 first_audio_p99 stall_p99 errors
# served" to $TMP/runs.
run() {
    local kind=$1 round=$2 json=$TMP/$1-$2.json c0 c1 args=(--port "$PORT_RAW")
    [[ $kind == http ]] && args=(--port "$PORT_HTTP" --http /main.opus)
    c0=$(cpu_ticks "$RR_PID")
    local n0 h0 n1 h1
    n0=$(thread_ticks "net@(|-+([0-9])|-main)")
    h0=$(thread_ticks http)
    timeout --kill-after=10 $((DURATION + 120)) "$LOAD" "${args[@]}" -n "$N" --duration "$DURATION" --ramp "$RAMP" \
        --json "$json" >"$TMP/$kind-$round.txt" 2>&1 || true
    c1=$(cpu_ticks "$RR_PID")
    n1=$(thread_ticks "net@(|-+([0-9])|-main)")
    h1=$(thread_ticks http)
    kill -0 "$RR_PID" 2>/dev/null || die "radio-relay died during the $kind run"
    local served cpu errors
    served=$(jq '.first_audio_ms.count' "$json")
    cpu=$(calc "($c1 - $c0) / $clk_tck" 3)
    errors=$(jq '[.ogg.crc_errors, .ogg.framing_errors, .ogg.start_errors, .ogg.serial_changes,
                  .ogg.gaps_beyond_join, .ogg.granule_regressions, .unexpected_disconnects_normal,
                  .connect_failures, .http_refused] | map(. // 0) | add' "$json")
    ((served > 0)) || die "no listener got audio in the $kind run (see $TMP/$kind-$round.txt)"
    printf '%s %s %s %s %s %s %s %s %s %s\n' "$kind" "$(calc "1000 * $cpu / $served" 4)" \
        "$(jq '.first_audio_ms.p50 * 100 | round / 100' "$json")" "$(jq '.first_audio_ms.p99 * 100 | round / 100' "$json")" \
        "$(jq '.stall_ms.p99 * 10 | round / 10' "$json")" \
        "$errors" "$served" "$cpu" "$(calc "1000 * ($n1 - $n0) / $clk_tck / $served" 4)" \
        "$(calc "1000 * ($h1 - $h0) / $clk_tck / $served" 4)" >>"$TMP/runs"
    printf '   round %d %-4s: %5d served, server CPU %7.2f s, %.4f ms per listener (network loop %.4f, front end %.4f), first audio p50 %s ms, errors %s\n' \
        "$round" "$kind" "$served" "$cpu" "$(calc "1000 * $cpu / $served" 4)" \
        "$(calc "1000 * ($n1 - $n0) / $clk_tck / $served" 4)" "$(calc "1000 * ($h1 - $h0) / $clk_tck / $served" 4)" \
        "$(jq '.first_audio_ms.p50 * 100 | round / 100' "$json")" "$errors"
}
: >"$TMP/runs"
for round in $(seq "$ROUNDS"); do
    run raw "$round"
    run http "$round"
done

col() { awk -v k="$1" -v c="$2" '$1 == k { print $c }' "$TMP/runs" | median; }
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
