#!/usr/bin/env bash
# What the station's processing costs: CPU and RSS of a station with loudness and the true-peak limiter, with the
# limiter alone, with neither, and with the archive (`archive`, 60 s files, in a temporary folder), side by side in
# the same run (the same programme, one ffmpeg listener each), repeated ROUNDS times with the servers started in a
# rotating order; medians per configuration, and each one's ratio to "neither". The programme is a hot one (pink
# noise breathing under a 220 Hz tone, peaks over full scale), so the limiter works all the time; each server decodes
# it, measures its loudness and limits it as a station does.
#
#   bench/processing.sh                          # MODES="both limiter neither": about 2.5 minutes
#   MODES="archive neither" bench/processing.sh  # what the archive costs
#
# Environment: MODES, ROUNDS (3), SECONDS_PER_ROUND (40), PORT (18261; the servers take PORT…PORT+11), RADIO_RELAY.
# Loopback only; every process started here is stopped by PID; bounded (ROUNDS × (SECONDS_PER_ROUND + 15) s).
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RR=$(relay_binary)
bench_defaults ROUNDS=3 SECONDS_PER_ROUND=40 PORT=18261 "MODES=both limiter neither"
require_int --positive ROUNDS SECONDS_PER_ROUND
require_binaries "radio-relay:$RR"
require_tools ffmpeg python3
bench_tmpdir processing
TMP=$BENCH_TMP
bench_traps

# station MODE FIRSTPORT: a station on FIRSTPORT (raw), +1 (HTTP), +2 (status); prints its PID.
station() {
    local mode=$1 port=$2
    local args=(serve --name test --bind 127.0.0.1 --port "$port" --http "127.0.0.1:$((port + 1))"
        --status "127.0.0.1:$((port + 2))" --upstream "$TMP/programme.mp3" --log-level warning)
    case $mode in
        both) args+=(--loudness -16) ;;
        limiter) ;;
        neither) args+=(--true-peak off) ;;
        archive) args+=(--true-peak off --archive "$TMP/archive" --archive-span 60) ;;
    esac
    "$RR" "${args[@]}" >"$TMP/server-$mode.log" 2>&1 &
    echo $!
}
ticks() { process_ticks "$1" 2>/dev/null || echo 0; }

echo "== processing cost (loudness, true-peak limiter); $(nproc) cores; $(relay_version "$RR")"
duration=$((ROUNDS * (SECONDS_PER_ROUND + 15) + 30))
ffmpeg -hide_banner -loglevel error -nostdin -f lavfi -i "anoisesrc=color=pink:amplitude=0.9:duration=$duration" \
    -f lavfi -i "sine=frequency=220:duration=$duration" \
    -filter_complex "[0]tremolo=f=0.3:d=0.7[n];[n][1]amix=inputs=2:normalize=0,volume=6dB,aformat=channel_layouts=stereo:sample_fmts=fltp" \
    -ar 44100 -c:a libmp3lame -b:a 192k -y "$TMP/programme.mp3"
echo "programme: $duration s of pink noise and a 220 Hz tone, MP3 decoding to over full scale"

read -r -a modes <<<"$MODES"
count=${#modes[@]}
: >"$TMP/figures"
for ((round = 0; round < ROUNDS; round++)); do
    pids=()
    for ((k = 0; k < count; k++)); do
        mode=${modes[$(((k + round) % count))]}
        index=$(((k + round) % count))
        pid=$(station "$mode" "$((PORT + 3 * index))")
        pids+=("$pid")
        bench_track "$pid"
    done
    for ((index = 0; index < count; index++)); do
        wait_until 10 "${pids[0]}" port_busy "$((PORT + 3 * index + 1))" || true
    done
    listeners=()
    for ((index = 0; index < count; index++)); do
        ffmpeg -hide_banner -loglevel error -nostdin -i "http://127.0.0.1:$((PORT + 3 * index + 1))/test.opus" \
            -f null - >/dev/null 2>&1 &
        listeners+=("$!")
        bench_track "$!"
    done
    sleep 3
    declare -A before
    for ((k = 0; k < count; k++)); do before[$k]=$(ticks "${pids[$k]}"); done
    t0=$(date +%s.%N)
    sleep "$SECONDS_PER_ROUND"
    t1=$(date +%s.%N)
    for ((k = 0; k < count; k++)); do
        mode=${modes[$(((k + round) % count))]}
        after=$(ticks "${pids[$k]}")
        rss=$(proc_status_kb "${pids[$k]}" VmRSS 2>/dev/null || echo 0)
        echo "$round $mode $(awk -v a="${before[$k]}" -v b="$after" -v c="$CLK_TCK" -v t0="$t0" -v t1="$t1" \
            'BEGIN { printf "%.5f", (b - a) / c / (t1 - t0) }') $rss" >>"$TMP/figures"
    done
    bench_stop "${listeners[@]}"
    bench_stop "${pids[@]}"
done
python3 - "$TMP/figures" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
by, rss = {}, {}
for _, mode, cores, kb in rows:
    by.setdefault(mode, []).append(float(cores))
    rss.setdefault(mode, []).append(float(kb) / 1024)
base = statistics.median(by["neither"]) if "neither" in by else 0
base_rss = statistics.median(rss["neither"]) if "neither" in rss else 0
print(f"\n{'configuration':<34} {'rounds (cores)':<28} {'median':>8} {'vs neither':>11} {'RSS MiB':>8} {'vs':>6}")
for mode, label in [("both", "loudness -16 + limiter -1 dBTP"), ("limiter", "limiter -1 dBTP (the default)"),
                    ("archive", "archive (60 s files), no limiter"), ("neither", "neither (true_peak = off)")]:
    if mode not in by:
        continue
    values = by[mode]
    shown = " ".join(f"{v:.4f}" for v in values)
    ratio = statistics.median(values) / base if base else float("nan")
    memory = statistics.median(rss[mode])
    memory_ratio = memory / base_rss if base_rss else float("nan")
    print(f"{label:<34} {shown:<28} {statistics.median(values):8.4f} {ratio:10.2f}x {memory:8.1f} {memory_ratio:5.2f}x")
PY
