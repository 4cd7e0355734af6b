#!/usr/bin/env bash
# Catch-up radio against a schedule: a station whose upstream changes tone every 30 s at known UTC times is archived
# for DURATION s; then ffmpeg reads `?start=` at five moments spread over the archive, on the Opus mount and on the
# MP3 mount, all ten at once for READ s (real time), and after them `?offset=` at five offsets the same way; each
# decoded stream is cut in 100 ms windows and each window's tone (Goertzel) checked against the schedule's at that
# moment, for the whole READ s. Then, with PLAYERS=1, VLC and mpv seek back 10 minutes (SEEK_BACK s) in the archive's
# HLS playlist and the tone they decode is checked the same way.
#
#   bench/archive-schedule.sh                 # DURATION=1200 (20 minutes archived), READ=60: about 27 minutes
#   bench/archive-schedule.sh --quick         # DURATION=180, READ=30, SEEK_BACK=120: about 7 minutes
#   DURATION=600 bench/archive-schedule.sh
#
# Environment: DURATION (1200 s archived before the readers; --quick 180), READ (60; --quick 30), SPAN (60: the
# archive's files, so every read crosses one), FRACTIONS (the `?start=` moments as fractions of DURATION after the
# archive's start: 0.1,0.3,0.5,0.7,0.9, i.e. 2, 6, 10, 14, 18 min of 20; each moment is SHIFT = 7.3 s into the
# schedule's step there, plus 4.1 s for each one after the first: five places in a step, none near a change),
# OFFSET_FRACTIONS (the `?offset=` moments the same way when they are asked, so the offsets reach from about
# DURATION - 40 s to about 40 s: 0.2,0.4,0.6,0.8,1.0), TOLERANCE (0.25 s: a window that near a change of the schedule
# may hold either tone or none), PLAYERS (1: the players' step), SEEK_BACK (600; --quick 120),
# RADIO_RELAY (or RADIO_RELAY_BINARY, the end-to-end tests' name; else bench/lib.sh's relay_binary), KEEP_TMP=1
# (keeps the archive, the logs, the decoded audio and the readers' JSON).
#
# bench/archive_schedule.py is the upstream (an HTTP MP3 source at real time: each frame's tone is the schedule's at
# the wall clock when it is sent, so the schedule is known in UTC; the method is at its top), the readers (ffmpeg,
# s16le mono 16 kHz) and the analysis (the table: moment, the tones the schedule had, windows matching / unclear /
# wrong / at a boundary, and the drift between the schedule and the audio at the read's first and last change of
# tone: after READ s it still follows the schedule when they agree). The server is `serve` with one station: the
# upstream, `--mp3 yes`, `--archive` in a temporary folder, `--archive-span SPAN`, HTTP and status on loopback. Its
# CPU and RSS are printed for the archiving alone, the readers' minutes and the players'. Every process is started
# here, bounded in time and stopped by its PID; loopback only.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QUICK=0
for arg in "$@"; do
    case $arg in
        --quick) QUICK=1 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$arg' (--quick, --help)" ;;
    esac
done
if ((QUICK)); then bench_defaults DURATION=180 READ=30 SEEK_BACK=120; fi
bench_defaults DURATION=1200 READ=60 SPAN=60 SHIFT=7.3 TOLERANCE=0.25 PLAYERS=1 SEEK_BACK=600 \
    FRACTIONS=0.1,0.3,0.5,0.7,0.9 OFFSET_FRACTIONS=0.2,0.4,0.6,0.8,1.0
require_int --positive DURATION READ SPAN SEEK_BACK
((DURATION >= 120)) || die "DURATION must be at least 120 s"
((SEEK_BACK + 30 < DURATION)) || die "SEEK_BACK must be below DURATION - 30"
[[ -n ${RADIO_RELAY:-} ]] || RADIO_RELAY=${RADIO_RELAY_BINARY:-}
RR=$(relay_binary)
require_binaries "radio-relay:$RR"
require_tools "ffmpeg, lame, curl, jq" ffmpeg lame curl jq
require_python python3 9
if [[ $PLAYERS == 1 ]]; then
    require_tools "vlc, mpv" cvlc mpv
fi
bench_tmpdir --keepable archive-schedule
TMP=$BENCH_TMP
chmod 755 "$TMP"
bench_traps
PY=(python3 "$REPO_ROOT/bench/archive_schedule.py")
NAME=sched
HTTP_PORT=$(bench_free_port)
STATUS_PORT=$(bench_free_port)
[[ $HTTP_PORT != "$STATUS_PORT" ]] || STATUS_PORT=$(bench_free_port)
LIMIT=$((DURATION + 8 * READ + 600))   # every process's bound

echo "== archive against a schedule: ${DURATION} s archived (files of $SPAN s), readers of $READ s;" \
    "$(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine), $(cpu_model); $(relay_version "$RR"); $(ffmpeg -version | head -1 | cut -d' ' -f1-3)"

timeout --kill-after=5 "$LIMIT" "${PY[@]}" upstream --dir "$TMP" --port-file "$TMP/upstream.port" \
    --json "$TMP/upstream.json" --duration "$LIMIT" 2>"$TMP/upstream.log" &
UP_PID=$!
bench_track "$UP_PID"
wait_until 60 "$UP_PID" test -s "$TMP/upstream.port" || { cat "$TMP/upstream.log" >&2; die "no upstream"; }
timeout --kill-after=5 "$LIMIT" "$RR" serve --name "$NAME" --port none --http "127.0.0.1:$HTTP_PORT" \
    --status "127.0.0.1:$STATUS_PORT" --upstream "http://127.0.0.1:$(cat "$TMP/upstream.port")/stream.mp3" \
    --mp3 yes --archive "$TMP/archive" --archive-span "$SPAN" --log-level info >"$TMP/server.log" 2>&1 &
RR_PID=$!
bench_track "$RR_PID"
wait_until 15 "$RR_PID" port_busy "$HTTP_PORT" || { cat "$TMP/server.log" >&2; die "radio-relay did not start"; }
# The server's own PID (timeout is its parent): the CPU and RSS are its.
SERVER_PID=$(pgrep -P "$RR_PID" -x radio-relay || true)
[[ -n $SERVER_PID ]] || SERVER_PID=$(pgrep -P "$RR_PID" | head -1)
[[ -n $SERVER_PID ]] || die "no radio-relay process under $RR_PID"

status() { curl -fsS -m 3 "http://127.0.0.1:$STATUS_PORT/status.json"; }
oldest() { status | jq -r '.stations[0].archive.oldest_start // empty' 2>/dev/null; }
for _ in $(seq 300); do [[ -n $(oldest) ]] && break; sleep 0.1; done
ORIGIN_UTC=$(oldest)
[[ -n $ORIGIN_UTC ]] || { cat "$TMP/server.log" >&2; die "nothing archived within 30 s"; }
ORIGIN=$(date -u -d "$ORIGIN_UTC" +%s.%3N)
say "archiving from $ORIGIN_UTC; the readers start at $(date -u -d "@$(calc "$ORIGIN + $DURATION" 0)" +%H:%M:%S) UTC"

# cpu_mark NAME: the server's CPU ticks and the time, kept under NAME; cpu_between A B: cores between two marks.
declare -A TICKS WHEN
cpu_mark() { TICKS[$1]=$(process_ticks "$SERVER_PID"); WHEN[$1]=$(date +%s.%N); }
cpu_between() { calc "(${TICKS[$2]} - ${TICKS[$1]}) / $CLK_TCK / (${WHEN[$2]} - ${WHEN[$1]})" 4; }
alive() { kill -0 "$RR_PID" 2>/dev/null || { tail -20 "$TMP/server.log" >&2; die "radio-relay stopped $1"; }; }

sleep 5
cpu_mark archive_start
RSS_START=$(proc_status_kb "$SERVER_PID" VmRSS)
END=$(calc "$ORIGIN + $DURATION" 3)
while :; do
    left=$(calc "$END - $(date +%s.%N)" 1)
    awk -v l="$left" 'BEGIN { exit !(l <= 0) }' && break
    alive "while archiving"
    nap=$(awk -v l="$left" 'BEGIN { print (l < 60 ? l : 60) }')
    sleep "$nap"
    awk -v l="$left" 'BEGIN { exit !(l > 60) }' && say "archiving: $(status | jq -r '.stations[0].archive |
        "\(.files) files, \(.bytes) bytes, up to \(.newest_end), \(.pages_dropped) pages dropped"')"
done
cpu_mark archive_end
RSS_ARCHIVE=$(proc_status_kb "$SERVER_PID" VmRSS)

MOUNTS="/$NAME.opus,/$NAME.mp3"
READERS=$TMP/readers.json
for kind in start offset; do
    fractions=$FRACTIONS
    [[ $kind == offset ]] && fractions=$OFFSET_FRACTIONS
    say "$kind readers: 5 moments × 2 mounts, $READ s"
    cpu_mark "${kind}_start"
    timeout --kill-after=5 $((READ + 60)) "${PY[@]}" read --kind "$kind" --port "$HTTP_PORT" --mounts "$MOUNTS" \
        --origin "$ORIGIN" --duration "$DURATION" --fractions "$fractions" --shift "$SHIFT" --seconds "$READ" \
        --out "$TMP" --log "$TMP/server.log" --readers "$READERS" &
    reader_pid=$!
    bench_track "$reader_pid"
    sleep 2
    RSS_READERS=$(proc_status_kb "$SERVER_PID" VmRSS)
    wait "$reader_pid" || die "the $kind readers failed"
    bench_stop "$reader_pid"
    cpu_mark "${kind}_end"
    alive "during the $kind readers"
done

echo
echo "== the readers: ${READ} s each from each moment; windows of 100 ms; min = minutes after the archive's start" \
    "($ORIGIN_UTC); drift = when the audio changes tone − when the schedule did (s, + late), first and last change"
set +e
"${PY[@]}" analyze --readers "$READERS" --json "$TMP/results.json" --tolerance "$TOLERANCE" --origin "$ORIGIN"
VERDICT=$?
set -e

if [[ $PLAYERS == 1 ]]; then
    echo
    echo "== players: seek back $SEEK_BACK s in /$NAME/archive.m3u8"
    cpu_mark players_start
    set +e
    timeout --kill-after=5 600 "${PY[@]}" players --port "$HTTP_PORT" --name "$NAME" --back "$SEEK_BACK" \
        --out "$TMP" --tolerance "$TOLERANCE" --seconds "$READ"
    PLAYERS_VERDICT=$?
    set -e
    cpu_mark players_end
    ((PLAYERS_VERDICT == 0)) || VERDICT=1
fi

echo
echo "== the server (PID $SERVER_PID)"
up=$(jq -r '"upstream: \(.frames) frames sent, the latest send \(.late_max * 1000 | round) ms after its time,
    \(.late_over_50ms) more than 50 ms late; \(.connections | length) connection(s); the wall clock gained
    \(.clock_divergence_s * 1000 | round) ms on the monotonic one"' "$TMP/upstream.json" | tr -s ' \n' ' ')
echo "   $up"
players_cpu=""
[[ -z ${TICKS[players_end]:-} ]] || players_cpu="; with the players: $(cpu_between players_start players_end)"
echo "   CPU while archiving alone: $(cpu_between archive_start archive_end) cores;" \
    "with the 10 start readers: $(cpu_between start_start start_end); with the 10 offset readers:" \
    "$(cpu_between offset_start offset_end)$players_cpu"
echo "   RSS: $((RSS_START / 1024)) MiB after 5 s, $((RSS_ARCHIVE / 1024)) MiB after $DURATION s of archive," \
    "$((RSS_READERS / 1024)) MiB with readers, peak $(($(proc_status_kb "$SERVER_PID" VmHWM) / 1024)) MiB"
status | jq -r '.stations[0] | [.archive, .archive_mp3][] | "   archive \(.format): \(.files) files, \(.bytes) bytes, "
    + "\(.pages_dropped) pages dropped, \(.write_errors) write errors, \(.time_shift_served) time-shifted listeners "
    + "served, \(.time_shift_refused) refused"'
echo
echo "   the server's log, lines other than listeners arriving and leaving:"
grep -v -E 'time-shifted listener .* starts at|left after|connected \(' "$TMP/server.log" | sed -n '1,40p' |
    sed 's/^/   /'
exit "$VERDICT"
