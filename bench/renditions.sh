#!/usr/bin/env bash
# Renditions: the CPU of one station with 32k mono + 96k + 128k outputs (one decode, three encoders) against the
# same three encodings as three separate stations (three decodes).
#
#   bench/renditions.sh                      # 3 runs of 2 phases, 60 s each: about 6.5 minutes
#   RUNS=1 DURATION=20 bench/renditions.sh   # a quick check
#
# Environment:
#   RUNS         runs of both phases, alternating (3); the figures are medians over the runs
#   DURATION     seconds each phase is measured (60), after WARMUP seconds (3)
#   BASE_PORT    first port on 127.0.0.1 (18300); the status endpoint takes a free one
#   RADIO_RELAY  binary (default: the static release build when built, else .build/release/radio-relay)
#
# Both phases relay the bundled demo (44.1 kHz stereo MP3, decoded and resampled to 48 kHz) as a file upstream,
# read at real time and looped, so every phase encodes exactly DURATION seconds of audio per output. No listener is
# connected: what is measured is the pipelines (decode + encoders). Each pipeline thread's CPU is read from
# /proc/PID/task/*/stat around the window, the whole process's from /proc/PID/stat, and `perf record` (stacks
# unwound with DWARF: the C libraries have no frame pointers) samples the process during the same window, so that
# each pipeline's CPU can be split into what each output costs (a sample with libopus, libogg, StageChain.encode,
# encodeSilence or Pipeline.publish on its stack: encoding, the Ogg pages and publishing them to the output's ring)
# and the rest (parsing, libmpg123, libsoxr, the PCM queue, the
# stream clock, the upstream, the pipeline's loop).
#
#   phase R: one station, main output 128k stereo, renditions mid 96k stereo and low 32k mono (thread pipe-r)
#   phase S: three stations in one process, s128, s96 and s32 (mono), each with its own decode (pipe-s128, …)
#
# Printed: per run and as medians, each pipeline's CPU seconds and its encoder part; the one-decode counter from R's
# /status.json (readers, encoders, frames parsed and decoded, pages per output); and two ratios, each the median of
# the per-run ratios:
#   (a) R / (one decode + the three encoders measured alone), where "the encoders alone" is the per-output part of
#       each of s128, s96 and s32, and "one decode" the mean of their rest: what R should cost if it decodes once and
#       pays each output what it costs alone. Target <= 1.05.
#   (b) R / (s128 + s96 + s32): against three separate stations. libopus dominates at high complexity, so the
#       saving is the two decodes (and two pipelines) R does not run.
# Needs perf (Debian: linux-perf; `.ci/deps --bench`). Loopback only; every process it starts is stopped by PID.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_defaults RUNS=3 DURATION=60 WARMUP=3 BASE_PORT=18300
RR=$(relay_binary)
require_binaries "radio-relay:$RR"
need_tools jq curl perf
command -v perf >/dev/null || die "perf is missing (Debian: linux-perf)"
DEMO=$(dirname "$RR")/radio-relay_RadioRelay.resources/demo.mp3
[[ -f $DEMO ]] || die "the demo sample is missing: $DEMO"
require_int --positive RUNS DURATION

bench_tmpdir renditions
tmp=$BENCH_TMP
server=
bench_on_exit() { bench_stop "$server"; }
bench_traps
tck=$CLK_TCK
seconds() { awk -v t="$1" -v k="$tck" 'BEGIN { printf "%.2f", t / k }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }'; }

# station NAME PORT BITRATE [KEY=VALUE...]: a [station] section relaying the demo.
station() {
    printf '\n[station %s]\nupstream = %s\nbind = 127.0.0.1\nport = %d\nbitrate = %s\n' "$1" "$DEMO" "$2" "$3"
    shift 3
    local pair
    for pair in "$@"; do printf '%s = %s\n' "${pair%%=*}" "${pair#*=}"; done
}

# write_config FILE PHASE STATUS_PORT
write_config() {
    {
        printf '[server]\nstatus = 127.0.0.1:%d\nlog_level = warning\n' "$3"
        if [[ $2 == R ]]; then
            station r "$BASE_PORT" 128k
            printf '\n[rendition r/mid]\nport = %d\nbitrate = 96k\n' $((BASE_PORT + 1))
            printf '\n[rendition r/low]\nport = %d\nbitrate = 32k\nchannels = 1\n' $((BASE_PORT + 2))
        else
            station s128 $((BASE_PORT + 10)) 128k
            station s96 $((BASE_PORT + 11)) 96k
            station s32 $((BASE_PORT + 12)) 32k channels=1
        fi
    } >"$1"
}

# run_phase PHASE RUN THREAD...: runs the phase's server for the window; sets TICKS[thread] (CPU ticks) and
# ENCODER[thread] (the fraction of its perf samples that are per-output work, as above) for each thread, and PROCESS
# (ticks); keeps its final /status.json in $tmp/PHASE-RUN.json.
declare -A TICKS ENCODER
run_phase() {
    local phase=$1 run=$2 config="$tmp/$1.conf" status_port thread i process0
    shift 2
    status_port=$(bench_free_port)
    write_config "$config" "$phase" "$status_port"
    "$RR" --config "$config" 2>"$tmp/$phase-$run.log" &
    server=$!
    healthy() { curl -sf "http://127.0.0.1:$status_port/health" >/dev/null 2>&1; }
    wait_until 10 "$server" healthy || true
    sleep "$WARMUP"
    declare -A before
    for thread in "$@"; do before[$thread]=$(thread_ticks "$server" "$thread"); done
    process0=$(process_ticks "$server")
    perf record -q --call-graph dwarf,16384 -F 3999 -p "$server" -o "$tmp/$phase-$run.perf" -- sleep "$DURATION" 2>>"$tmp/perf.log"
    for thread in "$@"; do TICKS[$thread]=$(($(thread_ticks "$server" "$thread") - ${before[$thread]})); done
    PROCESS=$(($(process_ticks "$server") - process0))
    curl -sf "http://127.0.0.1:$status_port/status.json" >"$tmp/$phase-$run.json" \
        || die "phase $phase: no status: $(tail -3 "$tmp/$phase-$run.log")"
    kill -0 "$server" 2>/dev/null || die "the server died in phase $phase: $(tail -3 "$tmp/$phase-$run.log")"
    bench_stop "$server"
    server=
    # One record per sample: the thread's name, then its stack, leaf first.
    perf script -i "$tmp/$phase-$run.perf" -F comm,ip,sym,dso 2>/dev/null | awk -v RS= '
        { n = split($0, line, "\n"); comm = line[1]; gsub(/^[ \t]+|[ \t]+$/, "", comm); out = 0
          for (i = 2; i <= n; i++) if (line[i] ~ /lib(opus|ogg)\.so|StageChainC6encode|encodeSilence|PipelineC7publish/) out = 1
          total[comm]++; per[comm] += out }
        END { for (c in total) printf "%s %.4f\n", c, per[c] / total[c] }' >"$tmp/$phase-$run.split"
    rm -f "$tmp/$phase-$run.perf"
    for thread in "$@"; do
        ENCODER[$thread]=$(awk -v t="$thread" '$1 == t { print $2 }' "$tmp/$phase-$run.split")
        [[ -n ${ENCODER[$thread]} ]] || die "phase $phase: no perf samples of $thread"
    done
}

echo "== renditions: one decode + 3 encoders vs 3 stations, ${DURATION} s per phase, $RUNS runs," \
    "$(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine), $(cpu_model)"
echo "   $(relay_version "$RR")"
# Per run: CPU seconds of each pipeline and, after the slash, its encoders' part.
row() { printf '%-6s %13s %13s %13s %13s %9s %9s %9s %7s %7s\n' "$@"; }
echo
row run "R pipe/enc" "s128/enc" "s96/enc" "s32/enc" "1 dec+3 enc" "R proc" "S proc" "(a)" "(b)"
s_rest=() s_enc=() r_cpu=() r_enc=() s128_cpu=() s96_cpu=() s32_cpu=() base=() r_proc=() s_proc=() ratio_a=() ratio_b=() rest=()
split() { awk -v t="$1" -v k="$tck" -v f="$2" 'BEGIN { printf "%.2f/%.2f", t / k, t * f / k }'; }
for ((run = 1; run <= RUNS; run++)); do
    # Alternate which phase goes first, so a drift of the machine does not favour one.
    for phase in $( ((run % 2)) && echo "R S" || echo "S R"); do
        if [[ $phase == R ]]; then
            run_phase R "$run" pipe-r
            r=${TICKS[pipe-r]} rf=${ENCODER[pipe-r]} rp=$PROCESS
        else
            run_phase S "$run" pipe-s128 pipe-s96 pipe-s32
            a=${TICKS[pipe-s128]} b=${TICKS[pipe-s96]} c=${TICKS[pipe-s32]} sp=$PROCESS
            af=${ENCODER[pipe-s128]} bf=${ENCODER[pipe-s96]} cf=${ENCODER[pipe-s32]}
        fi
    done
    # One decode (the mean of the three stations' non-encoder parts) plus each station's encoder part.
    reference=$(awk -v a="$a" -v b="$b" -v c="$c" -v x="$af" -v y="$bf" -v z="$cf" \
        'BEGIN { printf "%.2f", (a * (1 - x) + b * (1 - y) + c * (1 - z)) / 3 + a * x + b * y + c * z }')
    ra=$(ratio "$r" "$reference")
    rb=$(ratio "$r" $((a + b + c)))
    r_cpu+=("$(seconds "$r")") r_enc+=("$(awk -v t="$r" -v f="$rf" -v k="$tck" 'BEGIN { printf "%.2f", t * f / k }')")
    rest+=("$(awk -v t="$r" -v f="$rf" -v k="$tck" 'BEGIN { printf "%.2f", t * (1 - f) / k }')")
    s128_cpu+=("$(seconds "$a")") s96_cpu+=("$(seconds "$b")") s32_cpu+=("$(seconds "$c")")
    base+=("$(seconds "$reference")") r_proc+=("$(seconds "$rp")") s_proc+=("$(seconds "$sp")")
    ratio_a+=("$ra") ratio_b+=("$rb")
    row "$run" "$(split "$r" "$rf")" "$(split "$a" "$af")" "$(split "$b" "$bf")" "$(split "$c" "$cf")" \
        "${base[-1]}" "${r_proc[-1]}" "${s_proc[-1]}" "$ra" "$rb"
    s_rest+=("$(awk -v a="$a" -v b="$b" -v c="$c" -v x="$af" -v y="$bf" -v z="$cf" -v k="$tck" \
        'BEGIN { printf "%.2f", (a * (1 - x) + b * (1 - y) + c * (1 - z)) / 3 / k }')")
    s_enc+=("$(awk -v a="$a" -v b="$b" -v c="$c" -v x="$af" -v y="$bf" -v z="$cf" -v k="$tck" \
        'BEGIN { printf "%.2f", (a * x + b * y + c * z) / k }')")
done
row median "$(median "${r_cpu[@]}")" "$(median "${s128_cpu[@]}")" "$(median "${s96_cpu[@]}")" \
    "$(median "${s32_cpu[@]}")" "$(median "${base[@]}")" "$(median "${r_proc[@]}")" "$(median "${s_proc[@]}")" \
    "$(median "${ratio_a[@]}")" "$(median "${ratio_b[@]}")"
echo "(CPU seconds over ${DURATION} s, the per-output part after the slash; R proc and S proc: the whole servers)"
echo "R: per-output work $(median "${r_enc[@]}") s, the rest (decode, pipeline) $(median "${rest[@]}") s;" \
    "separate: per-output work $(median "${s_enc[@]}") s together, the rest $(median "${s_rest[@]}") s per station"
echo
echo "== one decode (phase R, run $RUNS, /status.json)"
jq -r '.stations[0] | "readers \(.readers), encoders \(.encoders), frames parsed \(.packets), decoded \(.decoded_packets)" +
    " (decoded / parsed = \(if .packets > 0 then (.decoded_packets / .packets * 1000 | round / 1000) else 0 end))"' \
    "$tmp/R-$RUNS.json"
jq -r '.stations[0].outputs[] | "  \(.rendition): \(.mount) on \(.listen), \(.opus_bitrate / 1000)k, \(.channels) ch, \(.pages) pages"' \
    "$tmp/R-$RUNS.json"
jq -r '.stations[] | "  separate \(.name): readers \(.readers), frames decoded \(.decoded_packets)"' \
    "$tmp/S-$RUNS.json"
process_ratio=$(ratio "$(median "${r_proc[@]}")" "$(median "${s_proc[@]}")")

echo
med_a=$(median "${ratio_a[@]}")
med_b=$(median "${ratio_b[@]}")
echo "(a) renditions / (one decode + the three encoders alone) = $med_a (target <= 1.05)"
echo "(b) renditions / three separate stations                 = $med_b (expected about 0.9 or less)"
echo "    process CPU, renditions / three separate stations     = $process_ratio"
readers=$(jq '.stations[0].readers' "$tmp/R-$RUNS.json")
encoders=$(jq '.stations[0].encoders' "$tmp/R-$RUNS.json")
once=$(jq '.stations[0] | .packets > 0 and .decoded_packets == .packets' "$tmp/R-$RUNS.json")
verdict=ok
[[ $readers == 1 && $encoders == 3 && $once == true ]] || verdict=FAIL
awk -v a="$med_a" 'BEGIN { exit !(a <= 1.05) }' || verdict=FAIL
echo "result: $verdict"
[[ $verdict == ok ]]
