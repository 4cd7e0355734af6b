#!/usr/bin/env bash
# One loudness across inputs (`loudness = -16`), measured as a listener hears it: three inputs of one programme at
# −10, −22 and −30 LUFS (ffmpeg's `volume`, checked with its `ebur128`), hot standby, switched every SWITCH seconds
# (1, 2, 3, 1) through the status endpoint; an ffmpeg listener decodes the station and ffmpeg's `ebur128` measures
# what it heard: the short-term loudness in each 10 s window and the integrated loudness of the whole run, with
# `loudness = -16` and, beside it in the same run, `loudness = off`; each server's CPU over the run. Then speech with
# pauses (espeak-ng, at −30 LUFS): the gain over time beside the output's momentary loudness, to show that it holds
# in the pauses.
#
#   bench/loudness.sh                 # SWITCH=30: about 2.5 minutes, then 40 s of speech
#   PARTS=speech bench/loudness.sh    # the speech only
#
# Environment: PARTS ("switch speech"), SWITCH (30), PORT (18241; each server takes PORT…PORT+2 or PORT+3…PORT+5), RADIO_RELAY. Loopback only;
# every process started here is stopped by PID; bounded (4 × SWITCH + 90 s).
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RR=$(relay_binary)
bench_defaults SWITCH=30 PORT=18241 "PARTS=switch speech"
require_int --positive SWITCH
require_binaries "radio-relay:$RR"
require_tools ffmpeg espeak-ng curl python3
bench_tmpdir loudness
TMP=$BENCH_TMP
bench_traps

# integrated FILE: ffmpeg's integrated loudness of FILE (LUFS).
integrated() { ffmpeg -hide_banner -nostdin -i "$1" -af ebur128 -f null - 2>&1 | awk '/^ +I:/ { v = $2 } END { print v }'; }

# station MODE FIRSTPORT UPSTREAMS...: a station on FIRSTPORT (raw), +1 (HTTP), +2 (status), with loudness -16 or
# off; prints its PID.
station() {
    local mode=$1 port=$2
    shift 2
    local args=(serve --name test --bind 127.0.0.1 --port "$port" --http "127.0.0.1:$((port + 1))"
        --status "127.0.0.1:$((port + 2))" --standby hot --log-level warning)
    for upstream in "$@"; do args+=(--upstream "$upstream"); done
    [[ $mode == on ]] && args+=(--loudness -16)
    "$RR" "${args[@]}" >"$TMP/server-$mode.log" 2>&1 &
    echo $!
}
ticks() { process_ticks "$1" 2>/dev/null || echo 0; }
capture() {  # capture URL FILE: an ffmpeg listener decoding to 48 kHz stereo floats; prints its PID
    ffmpeg -hide_banner -loglevel error -nostdin -i "$1" -ac 2 -ar 48000 -f f32le -y "$2" >/dev/null 2>&1 &
    echo $!
}
force() { curl -s -X POST "http://127.0.0.1:$(($1 + 2))/stations/test/force/$2" >/dev/null; }
seconds_of() { awk -v b="$(stat -c %s "$1" 2>/dev/null || echo 0)" 'BEGIN { printf "%.2f", b / 384000 }'; }

echo "== one loudness across inputs; $(nproc) cores; $(relay_version "$RR")"
if [[ " $PARTS " == *" switch "* ]]; then
# A programme with dynamics: pink noise breathing at 0.3 Hz under a 220 Hz tone, 60 s, stereo.
ffmpeg -hide_banner -loglevel error -nostdin -f lavfi -i "anoisesrc=color=pink:amplitude=0.3:duration=60" \
    -f lavfi -i "sine=frequency=220:duration=60" \
    -filter_complex "[0]tremolo=f=0.3:d=0.7[n];[n][1]amix=inputs=2,aformat=channel_layouts=stereo" -ar 44100 \
    -y "$TMP/base.wav"
base=$(integrated "$TMP/base.wav")
echo "programme: pink noise and a 220 Hz tone, $base LUFS as made"
for target in -10 -22 -30; do
    gain=$(awk -v t="$target" -v b="$base" 'BEGIN { printf "%.2f", t - b }')
    ffmpeg -hide_banner -loglevel error -nostdin -i "$TMP/base.wav" -af "volume=${gain}dB" -c:a libmp3lame \
        -b:a 192k -y "$TMP/in$target.mp3"
    echo "input at $target LUFS: $(integrated "$TMP/in$target.mp3") LUFS measured"
done

inputs=("$TMP/in-10.mp3" "$TMP/in-22.mp3" "$TMP/in-30.mp3")
on=$(station on "$PORT" "${inputs[@]}")
off=$(station off "$((PORT + 3))" "${inputs[@]}")
bench_track "$on" "$off"
wait_until 10 "$on" port_busy "$((PORT + 1))" || true
wait_until 10 "$off" port_busy "$((PORT + 4))" || true
sleep 2
listen_on=$(capture "http://127.0.0.1:$((PORT + 1))/test.opus" "$TMP/on.f32")
listen_off=$(capture "http://127.0.0.1:$((PORT + 4))/test.opus" "$TMP/off.f32")
bench_track "$listen_on" "$listen_off"
c_on=$(ticks "$on")
c_off=$(ticks "$off")
t0=$(date +%s.%N)
: >"$TMP/switches"
for input in 2 3 1; do
    sleep "$SWITCH"
    echo "$input $(seconds_of "$TMP/on.f32") $(seconds_of "$TMP/off.f32")" >>"$TMP/switches"
    force "$PORT" "$input"
    force "$((PORT + 3))" "$input"
done
sleep "$SWITCH"
c_on1=$(ticks "$on")
c_off1=$(ticks "$off")
t1=$(date +%s.%N)
bench_stop "$listen_on" "$listen_off"
bench_stop "$on" "$off"
for mode in on off; do
    ffmpeg -hide_banner -nostdin -f f32le -ar 48000 -ac 2 -i "$TMP/$mode.f32" -af ebur128 -f null - \
        2>"$TMP/$mode.ebur128" || true
done
python3 - "$TMP" "$SWITCH" "$c_on" "$c_on1" "$c_off" "$c_off1" "$t0" "$t1" "$CLK_TCK" <<'PY'
import re, sys
tmp, switch = sys.argv[1], float(sys.argv[2])
c_on, c_on1, c_off, c_off1, t0, t1, clk = map(float, sys.argv[3:])
def series(mode):
    s, integrated = [], None
    for line in open(f"{tmp}/{mode}.ebur128"):
        m = re.search(r"t: *([0-9.]+) .* S: *(-?[0-9.inf]+) .* I: *(-?[0-9.]+) LUFS", line)
        if m:
            s.append((float(m.group(1)), float(m.group(2))))
            integrated = float(m.group(3))
    return s, integrated
on, i_on = series("on")
off, i_off = series("off")
switches = [line.split() for line in open(f"{tmp}/switches")]
marks = {"on": [0.0] + [float(w[1]) for w in switches], "off": [0.0] + [float(w[2]) for w in switches]}
names = ["1 (−10 LUFS)", "2 (−22 LUFS)", "3 (−30 LUFS)", "1 (−10 LUFS)"]
def window(series, a, b):
    v = [x for t, x in series if a <= t < b and x > -70]
    return (min(v), max(v)) if v else (float("nan"), float("nan"))
print(f"\nshort-term loudness (3 s) in each 10 s window, LUFS (loudness = -16 | loudness = off):")
print(f"{'input':<14} {'window':>12} {'-16: min':>9} {'max':>6} {'off: min':>9} {'max':>6}")
for k, name in enumerate(names):
    for w in range(int(switch // 10)):
        a_on = marks["on"][k] + 10 * w
        a_off = marks["off"][k] + 10 * w
        lo, hi = window(on, a_on, a_on + 10)
        lo2, hi2 = window(off, a_off, a_off + 10)
        print(f"{name:<14} {f'{10*w:.0f}-{10*w+10:.0f} s':>12} {lo:9.1f} {hi:6.1f} {lo2:9.1f} {hi2:6.1f}")
print(f"\nintegrated loudness of the whole run: {i_on:.1f} LUFS with loudness = -16, {i_off:.1f} LUFS with it off")
wall = t1 - t0
print(f"server CPU over the run: {(c_on1 - c_on) / clk / wall:.4f} cores with loudness = -16, "
      f"{(c_off1 - c_off) / clk / wall:.4f} cores off (ratio {((c_on1 - c_on) / max(1, c_off1 - c_off)):.2f})")
PY

fi

if [[ " $PARTS " == *" speech "* ]]; then
# Speech with pauses: the gain over time.
espeak-ng -s 150 -w "$TMP/speech.wav" \
    "This is the news. <break time=\"2500ms\"/> The relay measures every input. <break time=\"3s\"/> \
    A pause must not pump the gain. <break time=\"3s\"/> Speech comes back at the same level. <break time=\"2500ms\"/> \
    End of the news." -m
sgain=$(awk -v b="$(integrated "$TMP/speech.wav")" 'BEGIN { printf "%.2f", -30 - b }')
ffmpeg -hide_banner -loglevel error -nostdin -i "$TMP/speech.wav" -af "volume=${sgain}dB" -ac 2 -ar 44100 \
    -c:a libmp3lame -b:a 128k -y "$TMP/speech.mp3"
echo
echo "speech with pauses at $(integrated "$TMP/speech.mp3") LUFS, loudness = -16: the gain each 0.5 s beside the"
echo "output's momentary loudness (M, 400 ms; pauses are below -50)"
speaker=$(station on "$((PORT + 6))" "$TMP/speech.mp3")
bench_track "$speaker"
wait_until 10 "$speaker" port_busy "$((PORT + 8))" || true
listen=$(capture "http://127.0.0.1:$((PORT + 7))/test.opus" "$TMP/speech.f32")
bench_track "$listen"
: >"$TMP/gains"
for _ in $(seq 80); do
    gain=$(curl -s "http://127.0.0.1:$((PORT + 8))/status.json" |
        python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)["stations"][0]["inputs"][0]["loudness"]["gain_db"])
except (ValueError, LookupError, TypeError):
    print("nan")')
    echo "$(seconds_of "$TMP/speech.f32") $gain" >>"$TMP/gains"
    sleep 0.5
done
bench_stop "$listen" "$speaker"
ffmpeg -hide_banner -nostdin -f f32le -ar 48000 -ac 2 -i "$TMP/speech.f32" -af ebur128 -f null - \
    2>"$TMP/speech.ebur128" || true
python3 - "$TMP" <<'PY'
import re, sys
tmp = sys.argv[1]
m = []
for line in open(f"{tmp}/speech.ebur128"):
    r = re.search(r"t: *([0-9.]+) +TARGET:.* M: *(\S+)", line)
    if r:
        try:
            m.append((float(r.group(1)), float(r.group(2))))
        except ValueError:
            pass
def momentary(t):
    best = min(m, key=lambda p: abs(p[0] - t), default=(t, float("nan")))
    return best[1]
rows = [tuple(map(float, l.split())) for l in open(f"{tmp}/gains") if len(l.split()) == 2 and "nan" not in l]
rise_in_pauses, pauses = 0.0, 0
print(f"{'t (s)':>6} {'gain dB':>8} {'M LUFS':>8}")
previous = None
for t, gain in rows:
    mom = momentary(t)
    print(f"{t:6.1f} {gain:8.1f} {mom:8.1f}")
    if previous is not None and not mom >= -50:  # below -50, or digital silence (nan)
        pauses += 1
        rise_in_pauses = max(rise_in_pauses, gain - previous)
    previous = gain
print(f"largest gain rise over 0.5 s while the output was in a pause: {rise_in_pauses:.1f} dB ({pauses} samples)")
PY
fi
