#!/bin/sh
# Regenerates demo.mp3, the bundled sample that the default station loops (24 s, 44.1 kHz joint stereo, 128 kb/s):
# three rounds of a 16-note plucked arpeggio over a quiet C/G drone. Needs sox and lame. Deterministic (no dither).
set -eu
out="$(cd "$(dirname "$0")" && pwd)/demo.mp3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
i=0
for n in C4 E4 G4 C5 A3 C4 E4 A4 F3 A3 C4 F4 G3 B3 D4 G4 C4 E4 G4 C5 A3 C4 E4 A4 F3 A3 C4 F4 G3 B3 D4 G4 \
         C4 E4 G4 C5 A3 C4 E4 A4 F3 A3 C4 F4 G3 B3 D4 G4; do
    sox -D -n -r 44100 -c 2 -b 16 "n$(printf %03d $i).wav" synth 0.5 pluck "$n" pluck "$n" vol 0.6 fade 0 0.5 0.05
    i=$((i + 1))
done
sox -D n*.wav melody.wav
sox -D -n -r 44100 -c 2 -b 16 pad.wav synth 24 sine C3 sine G3 vol 0.12 fade 1 24 1
sox -D -m melody.wav pad.wav mix.wav
lame --quiet -b 128 -m j --tt "radio-relay demo" --ta "radio-relay" mix.wav "$out"
