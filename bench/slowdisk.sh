#!/usr/bin/env bash
# The archive on a slow and then hung file system, against no archive and an archive on a normal directory: live
# listeners must not notice (issue 44's "disk faults" acceptance item). One station, its upstream local (latency.py's
# test MP3 at real time, frame by frame, on loopback), in interleaved rounds of three kinds, a fresh server each:
#   none    no archive;
#   slow    --archive on a FUSE file system (bench/slowfs.py, a pass-through that waits before each operation):
#           DELAY_MS per write/fsync/create (READ_DELAY_MS per read) all along; from SLOW_AT s after the listeners
#           start, SLOW_MS per operation for SLOW_FOR s (a disk that cannot keep up: the writer does one write per
#           page); then, from HANG_AT s, every operation hangs for HANG s (a disk that stopped answering); then
#           DELAY_MS again;
#   normal  --archive on a directory of the root file system;
#   full, readonly (not in the default KINDS): --archive on the FUSE file system, which from SLOW_AT s for
#           SLOW_FOR + HANG s refuses what takes room with ENOSPC (statfs: no free block) or every change with
#           EROFS, then writes again: a volume that fills up and is freed, or is remounted read-only and back.
# In each round N HTTP listeners (bench/timeshift.py's client: every page checked as Ogg; first byte, first audio
# page, gaps > 500 ms, bytes and audio seconds per second, the server's CPU over the steady window) and one raw-TCP
# listener measuring the end-to-end latency (bench/latency.py: the upstream's MP3 frame sent -> the Ogg page holding
# it received) listen for RAMP + HOLD s. The server's status.json is read in the middle of the hang (does it answer,
# what does it say) and at the end; its log lines about the archive are kept.
#
# Then one more phase, OVERFLOW=1 (default): a server with --page-ms 20 (50 pages a second: the writer's queue of
# 4096 items lasts 82 s) and the archive on the FUSE file system at full speed; N listeners; the file system hangs
# for OVERFLOW_HANG s (> 82 s: pages are dropped from the archive), then answers again. It shows what the log says,
# the status's counters, that the archive writes again (new files, bytes written, the index going on) and that
# time-shifted reads (?offset=, read by ffmpeg) play, both after the hang and across its gap.
#
#   bench/slowdisk.sh                      # N=200, ROUNDS=3, HOLD=70: about 20 minutes
#   ROUNDS=1 N=50 HOLD=60 OVERFLOW=0 bench/slowdisk.sh   # a quick check (about 4 minutes)
#
# Environment: N (200), ROUNDS (3), RAMP (10), SETTLE (5), HOLD (70: the listeners stay RAMP + HOLD s; the steady
# window is RAMP + SETTLE to RAMP + HOLD), DELAY_MS (20), READ_DELAY_MS (20), SLOW_MS (500), SLOW_AT (15),
# SLOW_FOR (10), HANG_AT (25), HANG (20), KINDS ("none slow normal"), OVERFLOW (1), OVERFLOW_HANG (100),
# RADIO_RELAY_BINARY (else RADIO_RELAY, else the release build), KEEP_TMP=1 (keeps the logs, the archives and the
# rounds' JSON).
#
# What makes the slow disk: a dm-delay device first (losetup + dmsetup), when this kernel has device-mapper; else
# FUSE (/dev/fuse and Debian's python3-fusepy, installed with apt-get when missing). Whichever is used is printed.
# Runs as root (mounts). Loopback only; every process is stopped by its PID; the mount is released, unmounted and
# removed on exit, even on failure (the EXIT trap); each step bounded in time.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ -n ${RADIO_RELAY_BINARY:-} ]] && RADIO_RELAY=$RADIO_RELAY_BINARY
RR=$(relay_binary)
bench_defaults N=200 ROUNDS=3 RAMP=10 SETTLE=5 HOLD=70 DELAY_MS=20 READ_DELAY_MS=20 SLOW_MS=500 SLOW_AT=15 \
    SLOW_FOR=10 HANG_AT=25 HANG=20 "KINDS=none slow normal" OVERFLOW=1 OVERFLOW_HANG=100 SOURCES=40
require_int --positive N ROUNDS RAMP HOLD SLOW_AT HANG_AT HANG OVERFLOW_HANG SOURCES
require_int SETTLE DELAY_MS READ_DELAY_MS SLOW_MS SLOW_FOR OVERFLOW
((SETTLE < HOLD)) || die "SETTLE must be below HOLD"
((SLOW_AT + SLOW_FOR <= HANG_AT && HANG_AT + HANG < RAMP + HOLD)) || die "need SLOW_AT + SLOW_FOR <= HANG_AT < RAMP + HOLD - HANG"
((EUID == 0)) || die "run as root (it mounts a file system)"
require_binaries "radio-relay:$RR"
require_tools "python3 curl jq ffmpeg" python3 curl jq ffmpeg
require_python python3 9
raise_nofile
need_nofile $((2 * N + 100)) "2 N + 100"
bench_tmpdir --keepable slowdisk
TMP=$BENCH_TMP
chmod 755 "$TMP"
PY=python3
HERE=$REPO_ROOT/bench
NAME=sd
MNT=$TMP/slow                # the slow file system
CTL=$TMP/slowfs.control      # its mode (bench/slowfs.py)
FUSE_PID=""
SLOW_KIND=""                 # dm-delay or fuse

# ---------------------------------------------------------------- the slow file system

# set_mode MODE: "hang", or "DELAY READ_DELAY" in ms.
set_mode() { printf '%s\n' "$1" >"$CTL.new" && mv "$CTL.new" "$CTL"; }

# The EXIT trap's extra step (after the tracked processes are stopped): the file system released, unmounted and its
# process stopped.
bench_on_exit() {
    [[ -n $SLOW_KIND ]] || return 0
    set_mode "0 0" 2>/dev/null || true
    if [[ -n $FUSE_PID ]]; then
        sleep 0.2
        bench_stop "$FUSE_PID"   # SIGTERM: libfuse unmounts
    fi
    if mountpoint -q "$MNT" 2>/dev/null; then umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true; fi
}
# The server must not sit in a hung FUSE call while it is being stopped: the file system answers again first.
# (set +e: errexit applies in a trap, and `(exit $st)` hands the status on to bench_exit)
trap 'st=$?; set +e; [[ -n $SLOW_KIND ]] && set_mode "0 0" 2>/dev/null; (exit $st); bench_exit' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

try_dm_delay() {
    say "trying dm-delay: dmsetup targets"
    if ! out=$(timeout 10 dmsetup targets 2>&1) || ! grep -q '^delay' <<<"$out"; then
        say "  no dm-delay: $(head -2 <<<"$out" | tr '\n' ' ')"
        command -v modprobe >/dev/null && { timeout 10 modprobe dm-delay 2>&1 | head -2 | sed 's/^/  modprobe: /' >&2 || true; }
        return 1
    fi
    say "  dm-delay is there, but this script drives FUSE only so far (its control of the delay is the FUSE one)"
    return 1
}

start_fuse() {
    if ! /usr/bin/python3 -c 'import fusepy' 2>/dev/null; then
        say "installing python3-fusepy (apt-get)"
        DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends python3-fusepy \
            >/dev/null || die "python3-fusepy could not be installed"
    fi
    [[ -c /dev/fuse ]] || die "no /dev/fuse"
    mkdir -p "$TMP/backing" "$MNT"
    set_mode "$DELAY_MS $READ_DELAY_MS"
    /usr/bin/python3 "$HERE/slowfs.py" "$TMP/backing" "$MNT" "$CTL" --max-hang $((OVERFLOW_HANG + 60)) \
        >>"$TMP/slowfs.log" 2>&1 &
    FUSE_PID=$!
    bench_track "$FUSE_PID"
    SLOW_KIND=fuse
    wait_until 15 "$FUSE_PID" mountpoint -q "$MNT" || { cat "$TMP/slowfs.log" >&2; die "the FUSE file system did not mount"; }
    local t0=$SECONDS
    dd if=/dev/zero of="$MNT/probe" bs=4k count=10 oflag=sync status=none
    rm -f "$MNT/probe"
    say "FUSE file system on $MNT (bench/slowfs.py, PID $FUSE_PID): 10 synced 4 KiB writes took $((SECONDS - t0)) s"
}

try_dm_delay || true
start_fuse

# ---------------------------------------------------------------- one round

# untrack PID: no longer stopped on exit (a process another one stopped and waited for).
untrack() {
    local i
    for i in "${!BENCH_PIDS[@]}"; do [[ ${BENCH_PIDS[i]} != "$1" ]] || unset 'BENCH_PIDS[i]'; done
    BENCH_PIDS=("${BENCH_PIDS[@]}")
}

HTTP_PORT="" STATUS_PORT="" SERVER_PID=""
# status_json FILE [TIMEOUT]: the server's /status.json in FILE, with fetched_at (Unix seconds) added; {} on a failure.
status_json() {
    local body
    body=$(curl -fsS -m "${2:-3}" "http://127.0.0.1:$STATUS_PORT/status.json" 2>/dev/null) || body='{}'
    jq '. + {fetched_at: now}' <<<"$body" >"$1" 2>/dev/null || echo '{}' >"$1"
}

# schedule: the slow disk's episodes, from now (the listeners' start); stops itself.
schedule() {
    local kind=$1 tag=$2
    if [[ $kind == full || $kind == readonly ]]; then
        # the volume full (ENOSPC, statfs: no free block) or read-only (EROFS) from SLOW_AT for SLOW_FOR + HANG s
        sleep "$SLOW_AT"
        set_mode "$kind"
        sleep $((SLOW_FOR + HANG / 2))
        status_json "$TMP/$tag.hang.json" 5
        sleep $((HANG - HANG / 2))
        set_mode "$DELAY_MS $READ_DELAY_MS"
        return 0
    fi
    [[ $kind == slow ]] || return 0
    sleep "$SLOW_AT"
    set_mode "$SLOW_MS $SLOW_MS"
    sleep "$SLOW_FOR"
    sleep $((HANG_AT - SLOW_AT - SLOW_FOR))
    set_mode hang
    sleep $((HANG / 2))
    # the status in the middle of the hang: does it answer, and how fast
    local t0 t1
    t0=$(date +%s%N)
    status_json "$TMP/$tag.hang.json" 5
    t1=$(date +%s%N)
    jq --argjson ms "$(((t1 - t0) / 1000000))" '. + {answered_ms: $ms}' "$TMP/$tag.hang.json" >"$TMP/$tag.hang.tmp" \
        && mv "$TMP/$tag.hang.tmp" "$TMP/$tag.hang.json"
    sleep $((HANG - HANG / 2))
    set_mode "$DELAY_MS $READ_DELAY_MS"
}

round() {
    local kind=$1 r=$2 tag="$1-$2"
    local archive=()
    case $kind in
        slow | full | readonly) archive=(--archive "$MNT/$tag" --archive-span 60) ;;
        normal) archive=(--archive "$TMP/normal/$tag" --archive-span 60) ;;
    esac
    HTTP_PORT=$(bench_free_port)
    STATUS_PORT=$(bench_free_port)
    [[ $HTTP_PORT != "$STATUS_PORT" ]] || STATUS_PORT=$(bench_free_port)
    set_mode "$DELAY_MS $READ_DELAY_MS"
    local fuse0 duration=$((RAMP + HOLD + 10))
    fuse0=$(process_ticks "$FUSE_PID")
    rm -f "$TMP/$tag.pid"
    "$PY" "$HERE/latency.py" run --name "$tag" --label "$kind round $r" --duration "$duration" --connect-delay 2 \
        --json "$TMP/$tag.lat.json" --log "$TMP/$tag.log" --pidfile "$TMP/$tag.pid" -- \
        "$RR" serve --name "$NAME" --upstream '{upstream}' --bind 127.0.0.1 --port '{port}' \
        --http "127.0.0.1:$HTTP_PORT" --status "127.0.0.1:$STATUS_PORT" --log-level info "${archive[@]}" \
        >"$TMP/$tag.lat.out" 2>&1 &
    local lat=$!
    bench_track "$lat"
    wait_until 30 "$lat" test -s "$TMP/$tag.pid" || die "latency.py did not start the server ($tag)"
    SERVER_PID=$(cat "$TMP/$tag.pid")
    bench_track "$SERVER_PID"   # latency.py stops it; tracked too, so that an interrupted run stops it first
    wait_until 20 "$lat" port_busy "$HTTP_PORT" || { cat "$TMP/$tag.log" >&2; die "radio-relay did not start ($tag)"; }
    sleep 2
    schedule "$kind" "$tag" &
    local sched=$!
    bench_track "$sched"
    # in the background, waited for: a signal to this script is handled at once, not when the listeners end
    timeout --kill-after=10 $((RAMP + HOLD + 60)) "$PY" "$HERE/timeshift.py" listen --port "$HTTP_PORT" \
        --mount "/$NAME.opus" -n "$N" --ramp "$RAMP" --settle "$SETTLE" --hold "$HOLD" --sources "$SOURCES" \
        --first-source 2 --server-pid "$SERVER_PID" --status-port "$STATUS_PORT" --label "$kind round $r" \
        --json "$TMP/$tag.json" &
    local listeners=$!
    bench_track "$listeners"
    wait "$listeners" || true
    bench_stop "$listeners" "$sched"
    set_mode "$DELAY_MS $READ_DELAY_MS"
    status_json "$TMP/$tag.status.json"
    curl -fsS -m 3 "http://127.0.0.1:$STATUS_PORT/metrics" 2>/dev/null | grep '^radio_relay_archive_' \
        >"$TMP/$tag.metrics" || true
    echo "{\"fuse_cpu_s\": $(calc "($(process_ticks "$FUSE_PID") - $fuse0) / $CLK_TCK" 2)}" >"$TMP/$tag.fuse.json"
    wait "$lat" || true
    bench_stop "$lat"
    untrack "$SERVER_PID"      # latency.py stopped and waited for it: not signalled again (its PID may be reused)
    grep -E "LATENCY|FAILED" "$TMP/$tag.lat.out" | sed 's/^/   /' || true
    [[ -s $TMP/$tag.json ]] || die "no report from round $r ($kind)"
    # the server's lines about its archive and its disk, and every warning or error
    grep -E -i 'archive|disk|warning|error' "$TMP/$tag.log" | sed "s/^/   [$tag] /" >>"$TMP/notes" || true
    sleep 2
}

echo "== the archive on a slow file system: N=$N HTTP listeners + 1 latency listener, $ROUNDS rounds of $KINDS," \
    "ramp $RAMP s, hold $HOLD s (steady from $((RAMP + SETTLE)) s to $((RAMP + HOLD)) s); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine), $(cpu_model); $(relay_version "$RR") ($RR)"
echo "   slow disk: $SLOW_KIND; the slow rounds: $DELAY_MS ms per write (reads $READ_DELAY_MS ms) all along," \
    "$SLOW_MS ms from $SLOW_AT s for $SLOW_FOR s, hung from $HANG_AT s for $HANG s"
"$PY" "$HERE/latency.py" gen --out "$REPO_ROOT/bench/out" >/dev/null
: >"$TMP/notes"
kinds=($KINDS)
for ((r = 1; r <= ROUNDS; r++)); do
    # the order turns from round to round
    for ((k = 0; k < ${#kinds[@]}; k++)); do
        round "${kinds[(k + r - 1) % ${#kinds[@]}]}" "$r"
    done
done

echo
"$PY" "$HERE/slowdisk.py" summary "$TMP" $KINDS
echo
echo "== the server's log lines about the archive, the disk, warnings and errors (per round, counted)"
if [[ -s $TMP/notes ]]; then
    sed -E 's/ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z? / /; s/ [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)? / /' "$TMP/notes" \
        | sort | uniq -c | sort -k2 | head -60
else
    echo "   none"
fi

# ---------------------------------------------------------------- the overflow: pages dropped, then writing again
((OVERFLOW)) || exit 0
echo
echo "== overflow: --page-ms 20 (50 pages/s: the queue of 4096 lasts 82 s), the archive on $SLOW_KIND at full speed," \
    "hung for $OVERFLOW_HANG s; N=$N listeners"
set_mode "0 0"
HTTP_PORT=$(bench_free_port)
STATUS_PORT=$(bench_free_port)
[[ $HTTP_PORT != "$STATUS_PORT" ]] || STATUS_PORT=$(bench_free_port)
UPSTREAM=$(ls "$REPO_ROOT"/bench/out/latency-*.mp3 2>/dev/null | head -1)
[[ -r $UPSTREAM ]] || UPSTREAM=$REPO_ROOT/Tests/Fixtures/stereo-44k-128k.mp3
"$RR" serve --name "$NAME" --port none --http "127.0.0.1:$HTTP_PORT" --status "127.0.0.1:$STATUS_PORT" \
    --upstream "$UPSTREAM" --page-ms 20 --archive "$MNT/overflow" --archive-span 60 --log-level info \
    >"$TMP/overflow.log" 2>&1 &
SERVER_PID=$!
bench_track "$SERVER_PID"
wait_until 20 "$SERVER_PID" port_busy "$HTTP_PORT" || { cat "$TMP/overflow.log" >&2; die "radio-relay did not start"; }
OV_HOLD=$((OVERFLOW_HANG + 50))
(
    sleep 20
    status_json "$TMP/ov-before.json"
    date -u +%s >"$TMP/ov-hang-start"
    set_mode hang
    sleep $((OVERFLOW_HANG - 5))
    t0=$(date +%s%N)
    status_json "$TMP/ov-during.json" 5
    echo $((($(date +%s%N) - t0) / 1000000)) >"$TMP/ov-during-ms"
    sleep 5
    set_mode "0 0"
    date -u +%s >"$TMP/ov-hang-end"
) &
OV_SCHED=$!
bench_track "$OV_SCHED"
timeout --kill-after=10 $((OV_HOLD + 60)) "$PY" "$HERE/timeshift.py" listen --port "$HTTP_PORT" \
    --mount "/$NAME.opus" -n "$N" --ramp "$RAMP" --settle "$SETTLE" --hold "$OV_HOLD" --sources "$SOURCES" \
    --first-source 2 --server-pid "$SERVER_PID" --status-port "$STATUS_PORT" --label "overflow (hung $OVERFLOW_HANG s)" \
    --json "$TMP/overflow.json" &
OV_LISTENERS=$!
bench_track "$OV_LISTENERS"
wait "$OV_LISTENERS" || true
bench_stop "$OV_LISTENERS" "$OV_SCHED"
set_mode "0 0"
status_json "$TMP/ov-after.json"
hang_start=$(cat "$TMP/ov-hang-start")
hang_end=$(cat "$TMP/ov-hang-end")
now=$(date -u +%s)
echo "   status.json archive before the hang, during it (answered in $(cat "$TMP/ov-during-ms") ms) and" \
    "$((now - hang_end)) s after it:"
for f in before during after; do
    jq -c --argjson now "$now" '.stations[0].archive | {state, files, bytes_written, pages_dropped, write_errors,
        newest_end, current, last_error}' "$TMP/ov-$f.json" | sed "s/^/     $f: /"
done
echo "   the archive's files and index (the file system answering again):"
ls -l "$MNT/overflow/$NAME" | sed 's/^/     /'
sed 's/^/     index: /' "$MNT/overflow/$NAME/index.txt" 2>/dev/null | tail -8 || echo "     (no index.txt yet)"
# Where the archive's gap starts: the end of the last file that ends before the hang's end (the queue filled about
# 82 s into the hang; the pages after that were dropped).
gap_start=$(awk -v end="$((hang_end * 1000))" '$1 == "F" && $4 < end && $4 > g { g = $4 } END { print int(g / 1000) }' \
    "$MNT/overflow/$NAME/index.txt" 2>/dev/null || echo 0)
echo "   hung from $(date -u -d "@$hang_start" +%T) to $(date -u -d "@$hang_end" +%T); the archive's gap starts at" \
    "$(date -u -d "@$gap_start" +%T) ($((gap_start - hang_start)) s into the hang)"
# time-shifted reads (9 s of the stream saved, its Ogg links listed, decoded by ffmpeg): one after the hang, one from
# 4 s before the gap, to play across it
for at in after across; do
    now=$(date -u +%s)
    if [[ $at == after ]]; then offset=10; else offset=$((now - gap_start + 4)); fi
    curl -s -m 9 -o "$TMP/ov-$at.opus" "http://127.0.0.1:$HTTP_PORT/$NAME.opus?offset=$offset" || true
    label="?offset=$offset ($at the $([[ $at == after ]] && echo hang || echo gap))"
    if timeout 30 ffmpeg -nostdin -v error -i "$TMP/ov-$at.opus" -f wav -y "$TMP/ov-$at.wav" 2>"$TMP/ov-$at.err"; then
        secs=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$TMP/ov-$at.wav")
        echo "   $label: ffmpeg decoded $secs s, error lines: $(wc -l <"$TMP/ov-$at.err"); $("$PY" "$HERE/slowdisk.py" links "$TMP/ov-$at.opus")"
        echo "      the decoded audio: $("$PY" "$HERE/slowdisk.py" bursts "$TMP/ov-$at.wav")"
    else
        echo "   $label: ffmpeg failed: $(head -3 "$TMP/ov-$at.err" | tr '\n' ' ')"
    fi
done
echo "   the server's log, archive and disk lines, warnings and errors:"
grep -E -i 'archive|disk|warning|error|time-shifted listener .* starts' "$TMP/overflow.log" | sed 's/^/     /' | head -30
echo "   the slow file system's log:"
sed 's/^/     /' "$TMP/slowfs.log" | tail -40
