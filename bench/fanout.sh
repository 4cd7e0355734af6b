#!/usr/bin/env bash
# Fan-out benchmark: radio-relay vs Icecast 2 serving the same Ogg Opus stream to N listeners on loopback.
#
#   bench/fanout.sh                          # N=10000 listeners for 60 s each side
#   N=2000 DURATION=20 bench/fanout.sh       # a quick check
#   FLUSH_MS=300 PAGE_MS=100 bench/fanout.sh # radio-relay's --flush-ms / --page-ms (default: the server's)
#
# Environment:
#   N, DURATION          listeners, and seconds each load run lasts (ramp included)        (10000, 60)
#   FLUSH_MS, PAGE_MS    passed to radio-relay as --flush-ms / --page-ms when set; PAGE_MS also sets the page
#                        duration of ffmpeg's Ogg muxer feeding Icecast (default 100 ms, radio-relay's default)
#   BURST                radio-relay --burst seconds (default: the server's, 2 s)
#   NETWORK_THREADS      radio-relay --network-threads (default: the server's, one loop per CPU)
#   UPSTREAM             sample: radio-relay plays its bundled demo sample at real time (default);
#                        paced: ffmpeg -re serves the same demo MP3 over HTTP on PORT_U, paced frame by frame like a
#                        live station, and radio-relay relays that (--upstream http://127.0.0.1:PORT_U/stream.mp3)
#   RAMP                 seconds over which the load tool opens the N connections (default: 2000 connects/s)
#   ICECAST_BURST_BYTES, ICECAST_QUEUE_BYTES   Icecast's burst-size / queue-size (default 65535 / 524288)
#   PORT_A, PORT_B       radio-relay's and Icecast's ports on 127.0.0.1 (18123, 18124); PORT_U the paced upstream's
#                        (18125)
#   WARMUP               seconds each server runs before its load starts (default 4)
#   RADIO_RELAY, LOAD    binaries (default: the static release builds when built, else .build/release/radio-relay,
#                        .build/release/radio-relay-load)
#   KEEP_TMP=1           keep the temp dir (configs, logs, JSON reports)
#
#   SETTLE               seconds after the ramp ends before the steady-state hold window starts (default 3); the
#                        hold ends 2 s before the load run does
#
# Phase 1 loads radio-relay (bundled demo sample, looped at real time) with raw-TCP listeners; phase 2 feeds the
# same stream from radio-relay through ffmpeg (-c copy) into Icecast and loads Icecast with HTTP listeners. Each
# server's CPU seconds are read from /proc/PID/stat (and per thread from /proc/PID/task/*/stat) at three points: the
# load's start, the start of the hold window (every listener connected, checked with ss, SETTLE s after the ramp),
# and its end. The ramp (connect storm) and the steady state (everyone connected, nobody arriving) are reported
# apart: the steady state is what a station costs all day, and Icecast pays heavily for its connect storm. Peak RSS
# from VmHWM.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_defaults N=10000 DURATION=60 PORT_A=18123 PORT_B=18124 PORT_U=18125 UPSTREAM=sample WARMUP=4 SETTLE=3 \
    ICECAST_BURST_BYTES=65535 ICECAST_QUEUE_BYTES=524288
FEED_PAGE_MS=${PAGE_MS:-100}
RR=$(relay_binary)
LOAD=$(load_binary)

require_int --positive N DURATION
require_int PORT_A PORT_B PORT_U WARMUP SETTLE ICECAST_BURST_BYTES ICECAST_QUEUE_BYTES FEED_PAGE_MS
[[ -z ${FLUSH_MS:-} || $FLUSH_MS =~ ^[0-9]+$ ]] || die "FLUSH_MS must be a whole number of ms"
[[ -z ${PAGE_MS:-} || $PAGE_MS =~ ^[0-9]+$ ]] || die "PAGE_MS must be a whole number of ms"
[[ $UPSTREAM == sample || $UPSTREAM == paced ]] || die "UPSTREAM must be sample or paced (got '$UPSTREAM')"

require_binaries "radio-relay:$RR" "radio-relay-load:$LOAD"
install_bench_tools
id icecast2 >/dev/null 2>&1 || die "no icecast2 user (Debian's icecast2 package creates it)"

# Every listener is a file descriptor, on both ends.
raise_nofile 65536
need_nofile $((N + 100)) "N+100; raise it (ulimit -Hn) or lower N"

for port in "$PORT_A" "$PORT_B" "$PORT_U"; do
    port_busy "$port" && die "port $port on 127.0.0.1 is already in use (set PORT_A / PORT_B)"
done

# ---------------------------------------------------------------- processes and cleanup
bench_tmpdir --keepable fanout
TMP=$BENCH_TMP
chmod 755 "$TMP"
bench_traps

now() { date +%s.%N; }
# Sleeps until the time $1 (seconds since the epoch), if it is still ahead.
sleep_until() {
    local left
    left=$(calc "$1 - $(now)" 3)
    if awk "BEGIN { exit !($left > 0) }"; then sleep "$left"; fi
}
# Established TCP connections whose local port is $1.
established() { ss -Htn state established "( sport = :$1 )" 2>/dev/null | wc -l; }
RAMP_S=${RAMP:-$(calc "$N / 2000" 1)}

# Runs the load tool against PORT (extra args after it); keeps the JSON in $3 and the report in $4. The hold starts
# SETTLE s after the ramp, or later while connections still arrive (as long as they grow and fall short of N). Sets
# for the whole run CPU_S, SYS_S, WINDOW_S, LOAD_RC; for the ramp (the load's start to the hold) RAMP_CPU_S,
# RAMP_WINDOW_S; HOLD_CONNECTED_END (connections at the hold's end);
# for the steady-state hold HOLD_CPU_S, HOLD_SYS_S, HOLD_WINDOW_S, HOLD_CONNECTED (connections at its start) and
# $5 (per-thread CPU seconds in the hold: "NAME SECONDS" lines, busiest first).
measure() {
    local pid=$1 port=$2 json=$3 report=$4 threads=$5
    shift 5
    local t0 t1 c0 c1 s0 s1 th0 th1 ch0 ch1 sh0 sh1 load_pid hold_start hold_end
    hold_start=$(calc "$RAMP_S + $SETTLE" 1)
    hold_end=$((DURATION - 2))
    awk "BEGIN { exit !($hold_end - $hold_start >= 5) }" \
        || die "DURATION $DURATION leaves less than 5 s of hold after a ${RAMP_S} s ramp and ${SETTLE} s to settle"
    c0=$(process_ticks "$pid")
    s0=$(process_sys_ticks "$pid")
    t0=$(now)
    timeout --kill-after=10 $((DURATION + 120)) "$LOAD" --port "$port" -n "$N" --duration "$DURATION" \
        ${RAMP:+--ramp "$RAMP"} --json "$json" "$@" >"$report" 2>&1 &
    load_pid=$!
    bench_track "$load_pid"
    sleep_until "$(calc "$t0 + $hold_start" 3)"
    # Steady means every listener connected: wait (until 10 s before the end at most) while the connections still
    # grow and fall short of N; a server whose connect storm outlasts the ramp starts its hold later.
    local seen last_growth limit
    seen=$(established "$port")
    last_growth=$(now)
    limit=$(calc "$t0 + $hold_end - 10" 3)
    while ((seen < N)) && awk "BEGIN { exit !($(now) < $limit && $(now) - $last_growth < 3) }"; do
        sleep 0.5
        local current
        current=$(established "$port")
        if ((current > seen)); then seen=$current; last_growth=$(now); fi
    done
    ch0=$(process_ticks "$pid")
    sh0=$(process_sys_ticks "$pid")
    th0=$(now)
    thread_table "$pid" >"$threads.0"
    HOLD_CONNECTED=$(established "$port")
    sleep_until "$(calc "$t0 + $hold_end" 3)"
    ch1=$(process_ticks "$pid")
    sh1=$(process_sys_ticks "$pid")
    th1=$(now)
    thread_table "$pid" >"$threads.1"
    HOLD_CONNECTED_END=$(established "$port")
    set +e
    wait "$load_pid"
    LOAD_RC=$?
    set -e
    bench_stop "$load_pid"
    t1=$(now)
    kill -0 "$pid" 2>/dev/null || { cat "$report"; die "the server (pid $pid) died during the load run"; }
    c1=$(process_ticks "$pid")
    s1=$(process_sys_ticks "$pid")
    CPU_S=$(calc "($c1 - $c0) / $CLK_TCK")
    SYS_S=$(calc "($s1 - $s0) / $CLK_TCK")
    WINDOW_S=$(calc "$t1 - $t0")
    RAMP_CPU_S=$(calc "($ch0 - $c0) / $CLK_TCK")
    RAMP_WINDOW_S=$(calc "$th0 - $t0")
    HOLD_CPU_S=$(calc "($ch1 - $ch0) / $CLK_TCK")
    HOLD_SYS_S=$(calc "($sh1 - $sh0) / $CLK_TCK")
    HOLD_WINDOW_S=$(calc "$th1 - $th0")
    # Threads alive at both ends of the hold, their CPU in it, busiest first.
    awk -v hz="$CLK_TCK" 'NR == FNR { before[$1] = $3; next } ($1 in before) {
            printf "%s %.2f\n", $2, ($3 - before[$1]) / hz }' "$threads.0" "$threads.1" | sort -k2,2nr >"$threads"
}

echo "== fan-out benchmark: N=$N listeners, ${DURATION} s per run, loopback, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine), $(cpu_model)"
echo "   $(relay_version "$RR"); $(icecast2 -v 2>&1 | head -1); $(ffmpeg -version | head -1 | cut -d' ' -f1-3)"
echo "   ulimit -n $(ulimit -n)"

# ---------------------------------------------------------------- phase 1: radio-relay
rr_args=(serve --bind 127.0.0.1 --port "$PORT_A" --max-listeners 0)
if [[ $UPSTREAM == paced ]]; then
    demo=$(dirname "$RR")/radio-relay_RadioRelay.resources/demo.mp3
    [[ -f $demo ]] || demo=$REPO_ROOT/Sources/RadioRelay/Resources/demo.mp3
    [[ -f $demo ]] || die "cannot find the bundled demo.mp3 for UPSTREAM=paced"
    echo
    echo "== paced upstream: ffmpeg -re loops $demo as HTTP MP3 on 127.0.0.1:$PORT_U"
    ffmpeg -nostdin -v error -re -stream_loop -1 -i "$demo" -c copy -f mp3 -listen 1 \
        "http://127.0.0.1:$PORT_U/stream.mp3" >"$TMP/upstream.log" 2>&1 &
    UP_PID=$!
    bench_track "$UP_PID"
    sleep 0.5
    kill -0 "$UP_PID" 2>/dev/null || { cat "$TMP/upstream.log" >&2; die "the paced upstream did not start"; }
    rr_args+=(--upstream "http://127.0.0.1:$PORT_U/stream.mp3")
fi
[[ -n ${FLUSH_MS:-} ]] && rr_args+=(--flush-ms "$FLUSH_MS")
[[ -n ${PAGE_MS:-} ]] && rr_args+=(--page-ms "$PAGE_MS")
[[ -n ${BURST:-} ]] && rr_args+=(--burst "$BURST")
[[ -n ${NETWORK_THREADS:-} ]] && rr_args+=(--network-threads "$NETWORK_THREADS")
echo
echo "== phase 1: radio-relay ${rr_args[*]}"
"$RR" "${rr_args[@]}" >"$TMP/radio-relay.log" 2>&1 &
RR_PID=$!
bench_track "$RR_PID"
wait_until 15 "$RR_PID" port_busy "$PORT_A" || { cat "$TMP/radio-relay.log" >&2; die "radio-relay did not start listening on $PORT_A"; }
sleep "$WARMUP"
RR_RSS_BEFORE_KB=$(proc_status_kb "$RR_PID" VmRSS)
measure "$RR_PID" "$PORT_A" "$TMP/radio-relay.json" "$TMP/radio-relay.txt" "$TMP/radio-relay.threads"
RR_CPU=$CPU_S RR_SYS=$SYS_S RR_WINDOW=$WINDOW_S RR_RC=$LOAD_RC
RR_RAMP_CPU=$RAMP_CPU_S RR_RAMP_WINDOW=$RAMP_WINDOW_S RR_HOLD_CPU=$HOLD_CPU_S RR_HOLD_SYS=$HOLD_SYS_S
RR_HOLD_WINDOW=$HOLD_WINDOW_S RR_HOLD_CONNECTED=$HOLD_CONNECTED RR_HOLD_CONNECTED_END=$HOLD_CONNECTED_END
RR_HWM_KB=$(proc_status_kb "$RR_PID" VmHWM)
RR_RSS_AFTER_KB=$(proc_status_kb "$RR_PID" VmRSS)
cat "$TMP/radio-relay.txt"
echo "   radio-relay: CPU $RR_CPU s (kernel $RR_SYS s) in a $RR_WINDOW s window; RSS before load $(calc "$RR_RSS_BEFORE_KB / 1024" 1) MB," \
     "peak $(calc "$RR_HWM_KB / 1024" 1) MB, after $(calc "$RR_RSS_AFTER_KB / 1024" 1) MB; load tool exit $RR_RC"

# ---------------------------------------------------------------- phase 2: Icecast fed the same stream
PASSWORD=bench$RANDOM$RANDOM
bench_icecast_config "$TMP" "$PORT_B" "$PASSWORD" $((N + 10)) "$ICECAST_BURST_BYTES" "$ICECAST_QUEUE_BYTES"
echo
echo "== phase 2: Icecast 2 on 127.0.0.1:$PORT_B (clients $((N + 10)), burst-size $ICECAST_BURST_BYTES," \
     "queue-size $ICECAST_QUEUE_BYTES), fed by ffmpeg -c copy from radio-relay"
start_icecast "$TMP" "$PORT_B"
# ffmpeg's Ogg muxer writes 1 s pages by default and buffers its output; keep radio-relay's page duration and
# flush every page, so that Icecast gets the same page cadence as radio-relay's listeners.
ffmpeg -nostdin -v error -i "tcp://127.0.0.1:$PORT_A" -c copy -f ogg -page_duration $((FEED_PAGE_MS * 1000)) \
    -flush_packets 1 -content_type application/ogg \
    "icecast://source:$PASSWORD@127.0.0.1:$PORT_B/relay.opus" >"$TMP/ffmpeg.log" 2>&1 &
FF_PID=$!
bench_track "$FF_PID"
if ! wait_until 20 "$FF_PID" icecast_mounted "$PORT_B" "$PASSWORD" /relay.opus; then
    cat "$TMP/ffmpeg.log" "$TMP/icecast-log/error.log" >&2 2>/dev/null
    die "the /relay.opus mount did not appear on Icecast"
fi
echo "   mount /relay.opus is up (ffmpeg pid $FF_PID)"
sleep "$WARMUP"
ICE_RSS_BEFORE_KB=$(proc_status_kb "$ICE_PID" VmRSS)
measure "$ICE_PID" "$PORT_B" "$TMP/icecast.json" "$TMP/icecast.txt" "$TMP/icecast.threads" --http /relay.opus
ICE_CPU=$CPU_S ICE_SYS=$SYS_S ICE_WINDOW=$WINDOW_S ICE_RC=$LOAD_RC
ICE_RAMP_CPU=$RAMP_CPU_S ICE_RAMP_WINDOW=$RAMP_WINDOW_S ICE_HOLD_CPU=$HOLD_CPU_S ICE_HOLD_SYS=$HOLD_SYS_S
ICE_HOLD_WINDOW=$HOLD_WINDOW_S ICE_HOLD_CONNECTED=$HOLD_CONNECTED ICE_HOLD_CONNECTED_END=$HOLD_CONNECTED_END
ICE_HWM_KB=$(proc_status_kb "$ICE_PID" VmHWM)
ICE_RSS_AFTER_KB=$(proc_status_kb "$ICE_PID" VmRSS)
cat "$TMP/icecast.txt"
echo "   Icecast: CPU $ICE_CPU s (kernel $ICE_SYS s) in a $ICE_WINDOW s window; RSS before load $(calc "$ICE_RSS_BEFORE_KB / 1024" 1) MB," \
     "peak $(calc "$ICE_HWM_KB / 1024" 1) MB, after $(calc "$ICE_RSS_AFTER_KB / 1024" 1) MB; load tool exit $ICE_RC"
kill -0 "$FF_PID" 2>/dev/null || { echo "   warning: ffmpeg (the Icecast source) exited during the run:"; cat "$TMP/ffmpeg.log"; }

# ---------------------------------------------------------------- table
errors() { jq -r '[.ogg.crc_errors, .ogg.framing_errors, .ogg.start_errors, .ogg.serial_changes,
                   .ogg.gaps_beyond_join, .ogg.granule_regressions, .slow.ogg.crc_errors,
                   .slow.ogg.framing_errors] | add' "$1"; }
RJ=$TMP/radio-relay.json IJ=$TMP/icecast.json
RR_PCT=$(calc "100 * $RR_CPU / $RR_WINDOW" 1) ICE_PCT=$(calc "100 * $ICE_CPU / $ICE_WINDOW" 1)
RR_MB=$(calc "$RR_HWM_KB / 1024" 1) ICE_MB=$(calc "$ICE_HWM_KB / 1024" 1)
CPU_RATIO=$(awk "BEGIN { if ($ICE_CPU > 0) printf \"%.2f\", $RR_CPU / $ICE_CPU; else print \"-\" }")
RSS_RATIO=$(calc "$RR_HWM_KB / $ICE_HWM_KB")
RR_ERR=$(errors "$RJ") ICE_ERR=$(errors "$IJ")
RR_DISC=$(load_field "$RJ" .unexpected_disconnects_normal) ICE_DISC=$(load_field "$IJ" .unexpected_disconnects_normal)
RR_STALL=$(load_field "$RJ" .stall_ms.p99) ICE_STALL=$(load_field "$IJ" .stall_ms.p99)
verdict() { if awk "BEGIN { exit !($1) }"; then echo "met"; else echo "MISSED"; fi; }

echo
echo "== summary: N=$N, ${DURATION} s, upstream $UPSTREAM, radio-relay ${rr_args[*]:1}"
printf '%-28s %16s %16s %12s   %s\n' "" "radio-relay" "Icecast 2" "rr/Icecast" "target (radio-relay)"
ratio() { awk "BEGIN { if ($2 > 0) printf \"%.2f\", $1 / $2; else print \"-\" }"; }
printf '%-28s %16s %16s %12s   %s\n' "steady: hold window s" "$RR_HOLD_WINDOW" "$ICE_HOLD_WINDOW" "" \
    "every listener connected, nobody arriving"
printf '%-28s %16s %16s\n' "  connected at its start" "$RR_HOLD_CONNECTED" "$ICE_HOLD_CONNECTED"
printf '%-28s %16s %16s\n' "  connected at its end" "$RR_HOLD_CONNECTED_END" "$ICE_HOLD_CONNECTED_END"
# Listeners served in the hold: the mean of its two counts.
RR_HELD=$(calc "($RR_HOLD_CONNECTED + $RR_HOLD_CONNECTED_END) / 2" 0)
ICE_HELD=$(calc "($ICE_HOLD_CONNECTED + $ICE_HOLD_CONNECTED_END) / 2" 0)
RR_HOLD_RATE=$(calc "$RR_HOLD_CPU / $RR_HOLD_WINDOW" 4) ICE_HOLD_RATE=$(calc "$ICE_HOLD_CPU / $ICE_HOLD_WINDOW" 4)
printf '%-28s %16s %16s %12s\n' "  CPU s per s (cores)" "$RR_HOLD_RATE" "$ICE_HOLD_RATE" \
    "$(ratio "$RR_HOLD_RATE" "$ICE_HOLD_RATE")"
printf '%-28s %16s %16s\n' "  of which kernel s per s" "$(calc "$RR_HOLD_SYS / $RR_HOLD_WINDOW" 4)" \
    "$(calc "$ICE_HOLD_SYS / $ICE_HOLD_WINDOW" 4)"
RR_PER_LS=$(calc "1e6 * $RR_HOLD_RATE / ($RR_HELD > 0 ? $RR_HELD : 1)" 1)
ICE_PER_LS=$(calc "1e6 * $ICE_HOLD_RATE / ($ICE_HELD > 0 ? $ICE_HELD : 1)" 1)
printf '%-28s %16s %16s %12s   %s\n' "  CPU us per listener-second" "$RR_PER_LS" "$ICE_PER_LS" \
    "$(ratio "$RR_PER_LS" "$ICE_PER_LS")" "<= 0.5x Icecast: $(verdict "$RR_PER_LS <= 0.5 * $ICE_PER_LS")"
printf '%-28s %16s %16s %12s\n' "ramp: CPU s (connects)" "$RR_RAMP_CPU" "$ICE_RAMP_CPU" "$(ratio "$RR_RAMP_CPU" "$ICE_RAMP_CPU")"
printf '%-28s %16s %16s\n' "  ramp window s" "$RR_RAMP_WINDOW" "$ICE_RAMP_WINDOW"
printf '%-28s %16s %16s %12s\n' "whole run: CPU s" "$RR_CPU" "$ICE_CPU" "$CPU_RATIO"
printf '%-28s %15s%% %15s%% %12s\n' "  % of one core" "$RR_PCT" "$ICE_PCT" ""
printf '%-28s %16s %16s\n' "  of which kernel s" "$RR_SYS" "$ICE_SYS"
SERVED_RR=$(jq '.first_audio_ms.count' "$RJ") SERVED_ICE=$(jq '.first_audio_ms.count' "$IJ")
if ((SERVED_RR > 0 && SERVED_ICE > 0)); then
    RR_PER=$(calc "1000 * $RR_CPU / $SERVED_RR" 3) ICE_PER=$(calc "1000 * $ICE_CPU / $SERVED_ICE" 3)
    printf '%-28s %16s %16s %12s   %s\n' "  CPU ms per served listener" "$RR_PER" "$ICE_PER" \
        "$(awk "BEGIN { if ($ICE_PER > 0) printf \"%.2f\", $RR_PER / $ICE_PER }")" \
        "(served: got audio; fairer when Icecast leaves listeners waiting)"
fi
printf '%-28s %16s %16s %12s   %s\n' "peak RSS MB (VmHWM)" "$RR_MB" "$ICE_MB" "$RSS_RATIO" \
    "<= 100 MB: $(verdict "$RR_HWM_KB <= 100 * 1024")"
printf '%-28s %16s %16s\n' "RSS before load MB" "$(calc "$RR_RSS_BEFORE_KB / 1024" 1)" "$(calc "$ICE_RSS_BEFORE_KB / 1024" 1)"
printf '%-28s %16s %16s\n' "connected" "$(load_field "$RJ" .connected)" "$(load_field "$IJ" .connected)"
printf '%-28s %16s %16s\n' "connect failures" "$(load_field "$RJ" .connect_failures)" "$(load_field "$IJ" .connect_failures)"
printf '%-28s %16s %16s\n' "TTFB p50 ms" "$(load_field "$RJ" .ttfb_ms.p50)" "$(load_field "$IJ" .ttfb_ms.p50)"
printf '%-28s %16s %16s\n' "first audio page p50 ms" "$(load_field "$RJ" .first_audio_ms.p50)" "$(load_field "$IJ" .first_audio_ms.p50)"
printf '%-28s %16s %16s\n' "first audio page p99 ms" "$(load_field "$RJ" .first_audio_ms.p99)" "$(load_field "$IJ" .first_audio_ms.p99)"
printf '%-28s %16s %16s %12s   %s\n' "stall p99 ms" "$RR_STALL" "$ICE_STALL" "" \
    "< 500 ms: $([[ $RR_STALL == - ]] && echo "no figure" || verdict "$RR_STALL < 500")"
printf '%-28s %16s %16s %12s   %s\n' "errors (Ogg + extra gaps)" "$RR_ERR" "$ICE_ERR" "" "0: $(verdict "$RR_ERR == 0")"
printf '%-28s %16s %16s %12s   %s\n' "unexpected disconnects" "$RR_DISC" "$ICE_DISC" "" "0: $(verdict "$RR_DISC == 0")"
printf '%-28s %16s %16s\n' "stuck at the end" "$(load_field "$RJ" .stuck_at_end)" "$(load_field "$IJ" .stuck_at_end)"
printf '%-28s %16s %16s\n' "received MB/s" "$(load_field "$RJ" .megabytes_per_second)" "$(load_field "$IJ" .megabytes_per_second)"
printf '%-28s %16s %16s\n' "load tool CPU s" "$(load_field "$RJ" .cpu_seconds)" "$(load_field "$IJ" .cpu_seconds)"
printf '%-28s %16s %16s\n' "load tool exit code" "$RR_RC" "$ICE_RC"

echo
echo "== radio-relay's threads in the steady hold ($RR_HOLD_WINDOW s): CPU s and % of one core, busiest first"
awk -v w="$RR_HOLD_WINDOW" '$2 > 0.005 { printf "   %-16s %8.2f s %6.1f %%\n", $1, $2, 100 * $2 / w }' "$TMP/radio-relay.threads" | head -n 12
# The station network loops: threads named net (a pool of one) or net-0, net-1, ... The busiest one's share of their
# total says how evenly the pool carries the listeners.
awk -v w="$RR_HOLD_WINDOW" '$1 ~ /^net(-[0-9]+)?$/ { n++; total += $2; if ($2 > max) { max = $2; name = $1 } }
    END {
        if (n == 0) { print "   network loops: no thread named net or net-N"; exit }
        share = total > 0 ? 100 * max / total : 0
        printf "   network loops: %d, %.2f s in all; busiest %s %.2f s (%.0f %% of them, %.1f %% of one core)\n",
            n, total, name, max, share, 100 * max / w
    }' "$TMP/radio-relay.threads"
echo "== Icecast's threads in the steady hold ($ICE_HOLD_WINDOW s), busiest first"
awk -v w="$ICE_HOLD_WINDOW" '$2 > 0.005 { printf "   %-16s %8.2f s %6.1f %%\n", $1, $2, 100 * $2 / w }' "$TMP/icecast.threads" | head -n 6
