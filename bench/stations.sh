#!/usr/bin/env bash
# Many stations in one process: 20 stations × 500 listeners against 1 station × 10 000 listeners.
#
#   bench/stations.sh                        # 20 stations, 500 listeners each, 60 s per phase
#   STATIONS=5 PER_STATION=200 DURATION=20 bench/stations.sh
#
# Environment:
#   STATIONS, PER_STATION   stations in the multi-station phase and listeners on each (20, 500)
#   DURATION                seconds each load run lasts (60)
#   BASE_PORT               first station port on 127.0.0.1 (18200)
#   RADIO_RELAY, LOAD       binaries (default: the static release builds when built, else .build/release/radio-relay,
#                           .build/release/radio-relay-load)
#
# Phase 1 runs one station (a config file with one [station]) and loads it with STATIONS × PER_STATION listeners;
# phase 2 runs STATIONS stations from one config file, each with its own upstream (the bundled demo MP3, read at real
# time by each station's own pipeline), and loads each with PER_STATION listeners (one load tool per station, all at
# once). Every listener validates every byte as Ogg. CPU is read per thread from /proc/PID/task/*/stat around each load
# window: the network threads (net-*) and the pipelines (pipe-*) apart. Printed: network CPU per listener in both
# phases and their ratio (target: within 10 %), pipeline CPU per station, peak RSS (target: at most 150 MB), errors.
# Loopback only; every process it starts is stopped by PID.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_defaults STATIONS=20 PER_STATION=500 DURATION=60 BASE_PORT=18200
RR=$(relay_binary)
LOAD=$(load_binary)
require_binaries "radio-relay:$RR" "radio-relay-load:$LOAD"
need_tools jq
TOTAL=$((STATIONS * PER_STATION))
DEMO=$(dirname "$RR")/radio-relay_RadioRelay.resources/demo.mp3
[[ -f $DEMO ]] || die "the demo sample is missing: $DEMO"

raise_nofile 65536
bench_tmpdir stations
tmp=$BENCH_TMP
bench_traps

# write_config FILE N: N stations on BASE_PORT…, each relaying the demo file.
write_config() {
    {
        printf '[server]\nstatus = off\nlog_level = warning\nmax_listeners = 0\n'
        for ((i = 0; i < $2; i++)); do
            printf '\n[station s%02d]\nupstream = %s\nbind = 127.0.0.1\nport = %d\n' "$i" "$DEMO" $((BASE_PORT + i))
        done
    } >"$1"
}

# run_phase NAME STATIONS LISTENERS_EACH: sets NET_S, PIPE_S, RSS_MB, ERRORS, CONNECTED.
run_phase() {
    local name=$1 count=$2 each=$3 config="$tmp/$1.conf" server i load_pids=() n0 n1 p0 p1
    write_config "$config" "$count"
    "$RR" --config "$config" 2>"$tmp/$name.log" &
    server=$!
    bench_track "$server"
    wait_until 20 "$server" port_busy $((BASE_PORT + count - 1)) || true
    sleep 3
    n0=$(thread_ticks "$server" 'net-*')
    p0=$(thread_ticks "$server" 'pipe-*')
    for ((i = 0; i < count; i++)); do
        "$LOAD" --port $((BASE_PORT + i)) -n "$each" --duration "$DURATION" --json "$tmp/$name-$i.json" \
            >"$tmp/$name-$i.txt" 2>&1 &
        load_pids+=($!)
    done
    bench_track "${load_pids[@]}"
    local failed=0
    for pid in "${load_pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
    bench_stop "${load_pids[@]}"
    n1=$(thread_ticks "$server" 'net-*')
    p1=$(thread_ticks "$server" 'pipe-*')
    kill -0 "$server" 2>/dev/null || die "the server died in phase $name: $(tail -3 "$tmp/$name.log")"
    RSS_MB=$(calc "$(proc_status_kb "$server" VmHWM) / 1024" 1)
    bench_stop "$server"
    NET_S=$(calc "($n1 - $n0) / $CLK_TCK")
    PIPE_S=$(calc "($p1 - $p0) / $CLK_TCK")
    ERRORS=$(cat "$tmp/$name"-*.json | jq -s '[.[] | .ogg.crc_errors, .ogg.framing_errors, .ogg.start_errors,
        .ogg.serial_changes, .ogg.granule_regressions, .ogg.gaps_beyond_join, .unexpected_disconnects_normal] | add')
    CONNECTED=$(cat "$tmp/$name"-*.json | jq -s '[.[].connected] | add')
    LOAD_FAILED=$failed
}

echo "== many stations: $STATIONS × $PER_STATION listeners vs 1 × $TOTAL, ${DURATION} s, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine); $(relay_version "$RR"); ulimit -n $(ulimit -n)"
run_phase one 1 "$TOTAL"
one_net=$NET_S one_pipe=$PIPE_S one_rss=$RSS_MB one_err=$ERRORS one_conn=$CONNECTED one_fail=$LOAD_FAILED
run_phase many "$STATIONS" "$PER_STATION"
many_net=$NET_S many_pipe=$PIPE_S many_rss=$RSS_MB many_err=$ERRORS many_conn=$CONNECTED many_fail=$LOAD_FAILED

per() { awk -v s="$1" -v n="$2" 'BEGIN { x = (n > 0) ? s * 1000 / n : 0; printf "%.3f", x }'; }
printf '\n%-40s %14s %14s\n' "" "1 station" "$STATIONS stations"
printf '%-40s %14s %14s\n' "listeners connected" "$one_conn" "$many_conn"
printf '%-40s %14s %14s\n' "stream errors + unexpected disconnects" "$one_err" "$many_err"
printf '%-40s %14s %14s\n' "network threads CPU s" "$one_net" "$many_net"
printf '%-40s %14s %14s\n' "  per listener, ms" "$(per "$one_net" "$one_conn")" "$(per "$many_net" "$many_conn")"
printf '%-40s %14s %14s\n' "pipelines CPU s (all)" "$one_pipe" "$many_pipe"
printf '%-40s %14s %14s\n' "  per station, % of a core" \
    "$(awk -v s="$one_pipe" -v d="$DURATION" 'BEGIN { printf "%.2f", s * 100 / d }')" \
    "$(awk -v s="$many_pipe" -v n="$STATIONS" -v d="$DURATION" 'BEGIN { printf "%.2f", s * 100 / n / d }')"
printf '%-40s %14s %14s\n' "peak RSS MB (target <= 150)" "$one_rss" "$many_rss"
ratio=$(awk -v a="$(per "$one_net" "$one_conn")" -v b="$(per "$many_net" "$many_conn")" \
    'BEGIN { x = (a > 0) ? b / a : 0; printf "%.2f", x }')
echo "network CPU per listener, $STATIONS stations / 1 station: $ratio (target 0.90 to 1.10)"
verdict=ok
((one_err == 0 && many_err == 0 && one_fail == 0 && many_fail == 0)) || verdict=FAIL
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.9 && r <= 1.1) }' || verdict=FAIL
awk -v m="$many_rss" 'BEGIN { exit !(m <= 150) }' || verdict=FAIL
echo "result: $verdict"
[[ $verdict == ok ]]
