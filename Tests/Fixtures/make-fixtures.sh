#!/usr/bin/env bash
# Regenerates the MP3 test fixtures in this directory (Tests/Fixtures).
#
# Deterministic: sox runs with dither disabled (-D), lame is deterministic for
# identical input, and every "random" byte comes from SHA-256 in counter mode
# with a fixed seed string (not Python's `random`, so the bytes do not depend on
# the Python version).
#
# Requires: sox, lame, python3; ffprobe and mpg123 are needed only for the
# reference figures (expected.tsv and the report printed at the end).
# Reference toolchain (Debian 12): SoX 14.4.2, LAME 3.100, ffmpeg/ffprobe 5.1,
# mpg123 1.31. Other versions of lame may produce different bytes.
#
# Usage:  Tests/Fixtures/make-fixtures.sh          # regenerate + write expected.tsv + report
set -euo pipefail
export LC_ALL=C

HERE="$(cd "$(dirname "$0")" && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cd "$HERE"

# tone OUT.wav RATE CHANNELS SECONDS FREQ [FREQ ...]
# One sine per channel, in channel order (1st FREQ = left, 2nd = right), peak
# amplitude exactly 0.5 of full scale (-6.02 dBFS), 16-bit PCM, starting at
# phase 0, no dither.
tone() {
  local out=$1 rate=$2 ch=$3 dur=$4
  shift 4
  local spec=()
  for f in "$@"; do spec+=(sine "$f"); done
  sox -D -n -r "$rate" -c "$ch" -b 16 -e signed-integer "$out" \
      synth "$dur" "${spec[@]}" vol 0.5
  # Sanity check: every channel peaks at 0.5 full scale (16-bit: 16384/32768).
  local c peak
  for ((c = 1; c <= ch; c++)); do
    peak=$(sox "$out" -n remix "$c" stat 2>&1 | awk '/^Maximum amplitude/ {print $3}')
    awk -v p="$peak" 'BEGIN { exit !(p > 0.499 && p < 0.501) }' \
      || { echo "tone $out channel $c: peak $peak != 0.5" >&2; exit 1; }
  done
}

# lame: --quiet = no console output; --resample pins the output rate (lame would otherwise pick a
# lower rate for some low bitrates); -m s = plain L/R stereo, -m j = joint
# stereo (lame uses M/S for identical channels), -m m = mono.

# 1. stereo-44k-128k.mp3: CBR 128k, with lame's Xing "Info" + LAME tag frame.
tone "$TMP/s44.wav" 44100 2 3 440 1000
lame --quiet --cbr -b 128 -m s --resample 44.1 "$TMP/s44.wav" stereo-44k-128k.mp3

# 2. mono-48k.mp3: CBR 64k mono, with Info + LAME tag frame.
tone "$TMP/m48.wav" 48000 1 2 660
lame --quiet --cbr -b 64 -m m --resample 48 "$TMP/m48.wav" mono-48k.mp3

# 3. stereo-22k.mp3: MPEG-2 Layer III, CBR 64k stereo, with Info + LAME tag frame.
tone "$TMP/s22.wav" 22050 2 2 330 880
lame --quiet --cbr -b 64 -m s --resample 22.05 "$TMP/s22.wav" stereo-22k.mp3

# 4. id3-xing-vbr.mp3: VBR -V 4 joint stereo with Xing + LAME tag frame; an
#    ID3v2.4 tag (built below, no footer, 32 bytes padding) is prepended and a
#    second ID3v2.4 tag WITH footer (flag 0x10, "3DI" footer) is appended.
tone "$TMP/v44.wav" 44100 2 2 550 550
lame --quiet -V 4 -m j --resample 44.1 "$TMP/v44.wav" "$TMP/vbr-core.mp3"

# 5. garbage-spliced.mp3: CBR 128k without Xing/LAME tag (-t); garbage spliced in below.
lame --quiet -t --cbr -b 128 -m s --resample 44.1 "$TMP/s44.wav" "$TMP/garbage-core.mp3"

# 6. rate-switch.mp3: two tag-less CBR encodes concatenated byte for byte.
tone "$TMP/rsA.wav" 44100 2 1.5 440 440
tone "$TMP/rsB.wav" 48000 1 1.5 880
lame --quiet -t --cbr -b 128 -m j --resample 44.1 "$TMP/rsA.wav" "$TMP/rs-a.mp3"
lame --quiet -t --cbr -b 64  -m m --resample 48   "$TMP/rsB.wav" "$TMP/rs-b.mp3"
cat "$TMP/rs-a.mp3" "$TMP/rs-b.mp3" > rate-switch.mp3

python3 - "$TMP" <<'PY'
import hashlib, struct, sys
tmp = sys.argv[1]

def syncsafe(n):
    assert 0 <= n < (1 << 28)
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])

def text_frame(fid, text):
    # ID3v2.4 text frame, encoding 0x03 = UTF-8; v2.4 frame sizes are syncsafe.
    body = b"\x03" + text.encode("utf-8")
    return fid.encode("ascii") + syncsafe(len(body)) + b"\x00\x00" + body

def id3v24(frames, padding=0, footer=False):
    body = b"".join(frames) + b"\x00" * padding
    assert not (footer and padding), "ID3v2.4: a tag with a footer must not have padding"
    flags = 0x10 if footer else 0x00
    out = b"ID3\x04\x00" + bytes([flags]) + syncsafe(len(body)) + body
    if footer:
        out += b"3DI\x04\x00" + bytes([flags]) + syncsafe(len(body))
    return out

def garbage(seed, n):
    out, i = b"", 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{i}".encode()).digest()
        i += 1
    return out[:n]

# --- 4. id3-xing-vbr.mp3
core = open(f"{tmp}/vbr-core.mp3", "rb").read()
front = id3v24([text_frame("TIT2", "Fixture Title"),
                text_frame("TPE1", "radio-relay")], padding=32)
back = id3v24([text_frame("TIT2", "Appended Tag"),
               text_frame("TPE1", "radio-relay"),
               # TXXX: empty description, NUL, value "footer-test"
               text_frame("TXXX", "\x00footer-test")], footer=True)
open("id3-xing-vbr.mp3", "wb").write(front + core + back)

# --- 5. garbage-spliced.mp3
core = open(f"{tmp}/garbage-core.mp3", "rb").read()
# Frame start offsets of the clean stream (CBR 128k @ 44.1k: 417/418-byte frames).
starts, p = [], 0
while p + 4 <= len(core):
    h = struct.unpack(">I", core[p:p+4])[0]
    assert h >> 21 == 0x7FF, f"lost sync at {p}"
    pad = (h >> 9) & 1
    starts.append(p)
    p += 144 * 128000 // 44100 + pad
assert p == len(core)
splices = [(24100, 3000, "radio-relay-garbage-1"),   # (offset in clean stream, length, seed)
           (36000, 500,  "radio-relay-garbage-2")]
out, prev, shift = b"", 0, 0
for off, n, seed in splices:
    assert off not in starts, f"{off} is a frame boundary"
    fs = max(s for s in starts if s < off)
    print(f"garbage-spliced: {n} bytes inserted at clean offset {off} = final offset {off+shift}, "
          f"{off-fs} bytes into frame #{starts.index(fs)} (frame starts at clean offset {fs})")
    out += core[prev:off] + garbage(seed, n)
    prev, shift = off, shift + n
out += core[prev:]
open("garbage-spliced.mp3", "wb").write(out)
print(f"garbage-spliced: clean stream {len(core)} bytes, {len(starts)} frames; final {len(out)} bytes")
PY

# ---------------------------------------------------------------- reference figures
FILES=(stereo-44k-128k.mp3 mono-48k.mp3 stereo-22k.mp3 id3-xing-vbr.mp3 garbage-spliced.mp3 rate-switch.mp3)

if command -v ffprobe >/dev/null; then
  # ffprobe_packets counts "packet" records, NOT raw lines: with -of csv, a packet
  # that carries side data (lame's skip/end-padding samples) is followed by an
  # extra empty line, so `... -show_packets -of csv | wc -l` over-counts by 2 for
  # files with a LAME tag.  ffprobe_duration_s is the *stream* duration.
  {
    printf 'file\tsample_rate\tchannels\tffprobe_packets\tffprobe_duration_s\n'
    for f in "${FILES[@]}"; do
      q() { ffprobe -v error -select_streams a:0 -show_entries "stream=$1" -of default=nw=1:nk=1 "$f"; }
      sr=$(q sample_rate); ch=$(q channels); du=$(q duration)
      [ "$du" = "N/A" ] && du=""
      np=$(ffprobe -v error -select_streams a -show_packets -of csv "$f" | grep -c '^packet' || true)
      printf '%s\t%s\t%s\t%s\t%s\n' "$f" "$sr" "$ch" "$np" "$du"
    done
  } > expected.tsv
fi

# Report (informational; not written to disk): independent frame walk, ffprobe
# stderr, mpg123 frame counter, sizes and hashes.
python3 - "${FILES[@]}" <<'PY'
import sys
BR = {1: [0,32,40,48,56,64,80,96,112,128,160,192,224,256,320],      # MPEG-1 L3
      2: [0,8,16,24,32,40,48,56,64,80,96,112,128,144,160]}         # MPEG-2/2.5 L3
SR = {3: [44100,48000,32000], 2: [22050,24000,16000], 0: [11025,12000,8000]}
def hdr(b, p):
    if p + 4 > len(b) or b[p] != 0xFF or (b[p+1] & 0xE0) != 0xE0: return None
    ver, lay = (b[p+1] >> 3) & 3, (b[p+1] >> 1) & 3
    bri, sri, pad = b[p+2] >> 4, (b[p+2] >> 2) & 3, (b[p+2] >> 1) & 1
    if ver == 1 or lay != 1 or bri in (0, 15) or sri == 3: return None
    mp1 = ver == 3
    br = BR[1 if mp1 else 2][bri] * 1000; sr = SR[ver][sri]
    ch = 1 if (b[p+3] >> 6) == 3 else 2
    n = (144 if mp1 else 72) * br // sr + pad
    side = (32 if ch == 2 else 17) if mp1 else (17 if ch == 2 else 9)
    return n, sr, ch, b[p+4+side:p+8+side] in (b"Xing", b"Info")
def id3len(b, p):
    if b[p:p+3] != b"ID3": return 0
    s = b[p+6:p+10]; n = (s[0]<<21)|(s[1]<<14)|(s[2]<<7)|s[3]
    return 10 + n + (10 if b[p+5] & 0x10 else 0)
for f in sys.argv[1:]:
    b = open(f, "rb").read(); p = 0; frames = 0; xing = 0; fmts = []; junk = []; tags = []
    while p < len(b):
        t = id3len(b, p)
        if t: tags.append((p, t)); p += t; continue
        h = hdr(b, p)
        if h and (p + h[0] == len(b) or hdr(b, p + h[0]) or b[p+h[0]:p+h[0]+3] == b"ID3"):
            frames += 1; xing += h[3]
            if not fmts or fmts[-1][0] != h[1:3]: fmts.append([h[1:3], 0])
            fmts[-1][1] += 1; p += h[0]; continue
        if junk and junk[-1][0] + junk[-1][1] == p: junk[-1][1] += 1
        else: junk.append([p, 1])
        p += 1
    print(f"{f}: {len(b)} bytes, walker frames={frames} (xing/info frames={xing}), "
          f"runs={[(sr, ch, n) for (sr, ch), n in fmts]}, id3 tags(offset,len)={tags}, junk(offset,len)={junk}")
PY

for f in "${FILES[@]}"; do
  echo "== $f"
  if command -v ffprobe >/dev/null; then
    echo "   ffprobe -show_streams -show_format stderr: [$(ffprobe -v error -show_streams -show_format "$f" 2>&1 >/dev/null)]"
    echo "   ffprobe: $(ffprobe -v error -select_streams a:0 -show_entries stream=start_time,duration,duration_ts,nb_frames -of compact=p=0 "$f")"
    echo "   ffprobe format: $(ffprobe -v error -show_entries format=start_time,duration,bit_rate -of compact=p=0 "$f")"
  fi
  if command -v ffmpeg >/dev/null; then
    ns=$(ffprobe -v error -select_streams a:0 -show_entries frame=nb_samples -of csv=p=0 "$f" 2>/dev/null | awk '{s+=$1} END {print s}')
    echo "   ffmpeg decoded samples/channel (after gapless trim): $ns"
    echo "   ffmpeg decode stderr: [$(ffmpeg -nostdin -v error -i "$f" -f null - 2>&1 | tr '\n' '|')]"
  fi
  if command -v mpg123 >/dev/null; then
    # mpg123 -t -v prints "> FRAMES+REMAINING ..." progress records separated by \r;
    # the first number of the last record is the number of audio frames decoded
    # (the Xing/Info frame is not counted).  Default resync limit is 1024 bytes.
    for opt in "" "--resync-limit -1"; do
      out=$(mpg123 -t -v $opt "$f" 2>&1 | tr '\r' '\n')
      last=$(grep -E '^> [0-9]+\+[0-9]+' <<<"$out" | tail -1 | awk '{print $2}')
      msgs=$(grep -E 'Note|error|warning' <<<"$out" | tr '\n' '|' || true)
      echo "   mpg123 -t -v $opt: last progress $last; messages: [$msgs]"
    done
  fi
done
ls -l "${FILES[@]}"
sha256sum "${FILES[@]}"
