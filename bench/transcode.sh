#!/usr/bin/env bash
# Transcode benchmark: radio-relay vs ffmpeg/libopus, MP3 -> Ogg Opus, 96 kb/s, complexity 10.
#
#   bench/transcode.sh                      # the static release build when built, else .build/release/radio-relay
#   RUNS=5 bench/transcode.sh               # 5 timed runs per tool instead of 3
#   RADIO_RELAY=/path/to/radio-relay bench/transcode.sh
#   BENCH_OUT=/tmp/bench bench/transcode.sh # cache/output dir (default bench/out/, git-ignored)
#
# See bench/README.md for what is measured and how to read the figures.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-3}
BITRATE=96k
COMPLEXITY=10
LONG_S=600   # 10-minute input
SHORT_S=60   # 1-minute input

RR=$(relay_binary)
OUT=$(abs_path "${BENCH_OUT:-$REPO_ROOT/bench/out}")

require_int --positive RUNS

require_binaries "radio-relay:$RR"
install_bench_tools

mkdir -p "$OUT/logs"

# ---------------------------------------------------------------- test signal
# Deterministic, music-like synthetic signal (sox -D: no dither, -R: fixed PRNG seed):
#  - a 16 s loop of four plucked 6-note chords (Am F C G), 8 plucks per chord at 120 bpm, notes split
#    left/right so the stereo image is real;
#  - pink-noise "hi-hat" bed, high-passed and amplitude-modulated at 4 Hz;
#  - a slow sine sweep across the whole file so that no two loops are identical.
# Bump GEN_VERSION when changing the recipe so stale cached MP3s are not reused.
GEN_VERSION=v1
CHORDS=(
    "A2 E3 A3 C4 E4 A4"
    "F2 C3 F3 A3 C4 F4"
    "C3 G3 C4 E4 G4 C5"
    "G2 D3 G3 B3 D4 G4"
)

gen_mp3() { # gen_mp3 SECONDS OUT.mp3
    local secs=$1 dst=$2 tmp i n reps
    tmp=$(mktemp -d "$OUT/gen.XXXXXX")
    for i in "${!CHORDS[@]}"; do
        local spec=()
        for n in ${CHORDS[$i]}; do spec+=(pluck "$n"); done
        sox -D -R -V1 -r 44100 -c 6 -n -c 2 -b 16 "$tmp/chord$i.wav" \
            synth 0.5 "${spec[@]}" remix 1,3,5 2,4,6 repeat 7
    done
    sox -D -R -V1 "$tmp"/chord{0,1,2,3}.wav "$tmp/loop.wav"     # 16 s
    reps=$(( (secs + 15) / 16 - 1 ))
    sox -D -R -V1 -m \
        -v 0.55 "|sox -D -R -V1 '$tmp/loop.wav' -p repeat $reps trim 0 $secs" \
        -v 0.35 "|sox -D -R -V1 -r 44100 -c 2 -n -p synth $secs pinknoise highpass 5000 tremolo 4 90" \
        -v 0.12 "|sox -D -R -V1 -r 44100 -c 2 -n -p synth $secs sine 150:2400 tremolo 0.1 60" \
        -b 16 -t wav - |
        lame --quiet --noreplaygain --cbr -b 128 - "$dst.partial"
    mv "$dst.partial" "$dst"
    rm -rf "$tmp"
}

IN_LONG=$OUT/synth-$GEN_VERSION-${LONG_S}s-44k1-stereo-128k.mp3
IN_SHORT=$OUT/synth-$GEN_VERSION-${SHORT_S}s-44k1-stereo-128k.mp3
for pair in "$LONG_S:$IN_LONG" "$SHORT_S:$IN_SHORT"; do
    secs=${pair%%:*} f=${pair#*:}
    if [[ -s $f ]]; then
        echo "reusing $(basename "$f")"
    else
        echo "generating $(basename "$f") ..."
        t0=$SECONDS
        gen_mp3 "$secs" "$f"
        echo "  done in $((SECONDS - t0)) s"
    fi
done

# ---------------------------------------------------------------- helpers
# measure LABEL LOG -- CMD...   sets M_USER M_SYS M_CPU M_RSS(KiB) M_WALL
measure() {
    local label=$1 log=$2; shift 3
    local tf=$OUT/logs/time.txt
    if ! /usr/bin/time -f '%U %S %M %e' -o "$tf" "$@" >"$log" 2>&1; then
        echo "error: $label failed:" >&2
        echo "  command: $*" >&2
        sed 's/^/  | /' "$log" "$tf" >&2 || true
        exit 1
    fi
    read -r M_USER M_SYS M_RSS M_WALL < <(tail -n 1 "$tf")
    M_CPU=$(awk -v u="$M_USER" -v s="$M_SYS" 'BEGIN { printf "%.2f", u + s }')
}

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

run_rr() { measure "radio-relay" "$OUT/logs/radio-relay.log" -- "$RR" transcode "$1" "$2" --bitrate "$BITRATE" --complexity "$COMPLEXITY"; }
run_ff() { measure "ffmpeg" "$OUT/logs/ffmpeg.log" -- ffmpeg -nostdin -v error -y -i "$1" -c:a libopus -b:a "$BITRATE" -compression_level "$COMPLEXITY" -vbr constrained "$2"; }

SANITY_FAIL=0
# check_opus TOOL FILE EXPECTED_SECONDS: prints playback length and average bitrate; flags a broken output
check_opus() {
    local tool=$1 f=$2 want=$3 info len secs br status=ok
    if [[ ! -s $f ]] || ! info=$(opusinfo "$f" 2>&1); then
        printf '  %-12s %s: opusinfo FAILED\n' "$tool" "$(basename "$f")"
        [[ -n ${info:-} ]] && printf '%s\n' "$info" | sed 's/^/    | /'
        SANITY_FAIL=1; return
    fi
    len=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*Playback length:[[:space:]]*//p' | head -n 1)
    br=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*Average bitrate:[[:space:]]*//p' | head -n 1)
    # "10m:00.013s" or "1h:02m:03.4s" -> seconds
    secs=$(printf '%s\n' "$len" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) { v = $i; u = substr(v, length(v)); sub(/[hms]$/, "", v); s += v * (u == "h" ? 3600 : u == "m" ? 60 : 1) } printf "%.3f", s }')
    if [[ -z $len ]] || awk -v s="$secs" -v w="$want" 'BEGIN { d = s - w; if (d < 0) d = -d; exit !(d > 0.5) }'; then
        status="LENGTH MISMATCH (want ${want}s)"; SANITY_FAIL=1
    elif awk -v b="${br%% *}" 'BEGIN { exit !(b + 0 < 48) }'; then
        status="BITRATE SUSPICIOUSLY LOW"; SANITY_FAIL=1
    fi
    if printf '%s\n' "$info" | grep -qiE 'warning|error'; then
        status="$status; opusinfo warnings:"; SANITY_FAIL=1
    fi
    printf '  %-12s %-16s playback length %-13s (%9.3f s)  avg bitrate %-12s %s\n' \
        "$tool" "$(basename "$f")" "$len" "$secs" "$br" "$status"
    printf '%s\n' "$info" | grep -iE 'warning|error' | sed 's/^/    | /' || true
}

# ---------------------------------------------------------------- machine
echo
echo "== machine"
echo "date:        $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host:        $(uname -srm)"
echo "nproc:       $(nproc)"
echo "cpu:         $(cpu_model)"
echo "radio-relay: $RR"
echo "             $(relay_version "$RR")"
echo "ffmpeg:      $(ffmpeg -version | head -n 1)"
echo "libopus:     Debian libopus0 $(dpkg-query -W -f '${Version}' libopus0 2>/dev/null || echo '?')"
echo "             radio-relay -> $(ldd "$RR" 2>/dev/null | awk '/libopus/ { print $3; exit }')"
echo "             ffmpeg      -> $(ldd "$(command -v ffmpeg)" 2>/dev/null | awk '/libopus/ { print $3; exit }')"
echo "inputs:      $(basename "$IN_LONG") ($(du -h "$IN_LONG" | cut -f1)), $(basename "$IN_SHORT") ($(du -h "$IN_SHORT" | cut -f1))"
echo "settings:    $BITRATE, complexity $COMPLEXITY, constrained VBR for both (radio-relay's default;"
echo "             ffmpeg told -vbr constrained), RUNS=$RUNS"

# ---------------------------------------------------------------- CPU + peak RSS, 10-minute input
RR_OUT=$OUT/radio-relay-10m.opus
FF_OUT=$OUT/ffmpeg-10m.opus
rr_cpu=() rr_rss=() ff_cpu=() ff_rss=()
rm -f "$OUT"/logs/check-*.txt

echo
echo "== 10-minute input, $RUNS runs each, alternating (order flips every run)"
printf '%-4s %-12s %8s %8s %9s %9s %13s\n' run tool "user s" "sys s" "CPU s" "wall s" "peak RSS MiB"
row() { printf '%-4s %-12s %8s %8s %9s %9s %13s\n' "$1" "$2" "$M_USER" "$M_SYS" "$M_CPU" "$M_WALL" "$(mib "$M_RSS")"; }
for ((i = 1; i <= RUNS; i++)); do
    if ((i % 2)); then order=(rr ff); else order=(ff rr); fi
    for t in "${order[@]}"; do
        if [[ $t == rr ]]; then
            rm -f "$RR_OUT"
            run_rr "$IN_LONG" "$RR_OUT"; row "$i" radio-relay
            rr_cpu+=("$M_CPU"); rr_rss+=("$M_RSS")
            check_opus radio-relay "$RR_OUT" "$LONG_S" >"$OUT/logs/check-rr-$i.txt"
        else
            rm -f "$FF_OUT"
            run_ff "$IN_LONG" "$FF_OUT"; row "$i" ffmpeg
            ff_cpu+=("$M_CPU"); ff_rss+=("$M_RSS")
            check_opus ffmpeg "$FF_OUT" "$LONG_S" >"$OUT/logs/check-ff-$i.txt"
        fi
    done
done

rr_med=$(median "${rr_cpu[@]}"); ff_med=$(median "${ff_cpu[@]}")
rr_rss_med=$(median "${rr_rss[@]}"); ff_rss_med=$(median "${ff_rss[@]}")
cpu_ratio=$(ratio "$rr_med" "$ff_med")
verdict=$(awk -v r="$cpu_ratio" 'BEGIN { if (r == "n/a") print "?"; else if (r <= 0.8) print "meets the 0.8 aim"; else if (r <= 1.0) print "meets the <= 1.0 target, short of the 0.8 aim"; else print "OVER the <= 1.0 target" }')

echo
echo "== summary (medians of $RUNS)"
printf '%-12s %10s %14s\n' tool "CPU s" "peak RSS MiB"
printf '%-12s %10.2f %14s\n' radio-relay "$rr_med" "$(mib "$rr_rss_med")"
printf '%-12s %10.2f %14s\n' ffmpeg "$ff_med" "$(mib "$ff_rss_med")"
echo "CPU ratio radio-relay/ffmpeg: $cpu_ratio  ($verdict)"
echo "RSS ratio radio-relay/ffmpeg: $(ratio "$rr_rss_med" "$ff_rss_med")"

# ---------------------------------------------------------------- memory flatness
RR_SHORT_OUT=$OUT/radio-relay-1m.opus
rr_short_rss=()
for ((i = 1; i <= RUNS; i++)); do
    rm -f "$RR_SHORT_OUT"
    run_rr "$IN_SHORT" "$RR_SHORT_OUT"
    rr_short_rss+=("$M_RSS")
done
short_med=$(median "${rr_short_rss[@]}")
growth_kib=$(awk -v a="$rr_rss_med" -v b="$short_med" 'BEGIN { printf "%d", a - b }')
flat=$(awk -v d="$growth_kib" -v b="$short_med" 'BEGIN { if (d <= 1024 && d <= 0.05 * b) print "flat"; else printf "GROWS by %.1f MiB", d / 1024 }')
echo
echo "== memory flatness: radio-relay peak RSS, median of $RUNS runs each"
printf '%-14s %14s\n' input "peak RSS MiB"
printf '%-14s %14s\n' "1 minute" "$(mib "$short_med")"
printf '%-14s %14s\n' "10 minutes" "$(mib "$rr_rss_med")"
echo "ratio 10 min / 1 min: $(ratio "$rr_rss_med" "$short_med")  (difference ${growth_kib} KiB: $flat)"

# ---------------------------------------------------------------- output sanity
echo
echo "== output sanity (opusinfo on the last timed run's output; expected length = input length)"
check_opus radio-relay "$RR_OUT" "$LONG_S"
check_opus ffmpeg "$FF_OUT" "$LONG_S"
check_opus radio-relay "$RR_SHORT_OUT" "$SHORT_S"
# every timed run was checked too; surface any failure among them
if grep -lE 'MISMATCH|FAILED|LOW|warnings' "$OUT"/logs/check-*.txt >/dev/null 2>&1; then
    echo "  some timed runs produced bad output:"
    grep -hE 'MISMATCH|FAILED|LOW|warnings' "$OUT"/logs/check-*.txt | sed 's/^/  /'
    SANITY_FAIL=1
fi
rm -f "$OUT"/logs/check-*.txt

echo
if ((SANITY_FAIL)); then
    echo "RESULT: output sanity check FAILED -- the timings above do not count."
    exit 1
fi
echo "RESULT: CPU radio-relay/ffmpeg = $cpu_ratio ($verdict); peak RSS 10 min vs 1 min: $flat."
