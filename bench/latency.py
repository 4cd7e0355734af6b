#!/usr/bin/env python3
"""End-to-end latency of an MP3 -> Ogg Opus relay, measured from outside the server.

Latency of a sample of audio = the time the listener received the Ogg page holding it - the time the upstream
sent the MP3 frame holding it. One process is both ends, on one clock (time.monotonic_ns):
  * upstream: an HTTP/1.0 server on 127.0.0.1 that sends a test MP3 at real time, one frame per send() (frame g
    is due at t0 + g * 1152/44100 s, TCP_NODELAY, no initial burst); it records when each send() returned;
  * listener: a raw-TCP client of the server under test; every chunk it reads is stamped by the kernel
    (SO_TIMESTAMPNS, converted to the monotonic clock), so Python's wake-up time is not counted.
After the run the bytes are parsed as Ogg, every Opus packet is decoded with the system libopus (ctypes), and
each decoded sample gets its absolute position from the page granule positions.

Test signal (made once, cached in bench/out/): 120 s, 44.1 kHz stereo, lame 128 kb/s CBR without a Xing/LAME
tag (like a live stream), quiet noise (about -57 dBFS) with a 60 ms sine burst at -6 dBFS every 0.5-0.6 s
(pseudo-random spacing, so the bursts fall at every phase of MP3 frames, Ogg pages and the server's writes).
Burst k is a tone at 400 + 100 * (k % 16) Hz: its ID, so that no burst can be matched to the wrong one.

Alignment: a burst is found by a threshold (|x| > 0.1 after 300 ms below it), identified by its frequency
(Goertzel), and located to a fraction of a sample by the phase of its tone (codec pre-echo moves a threshold
crossing, not the phase of a steady tone). In the MP3 decoded by libmpg123 (as radio-relay decodes it), burst k
starts at source sample + 1105 (lame's 576 encoder delay + mpg123's 529), which the phase fit confirms to 0.01
sample when the signal is made; so the MP3 frame holding it is floor((s + 1105) / 1152). Output position p
(48 kHz, granule domain) holds the decoded-MP3 sample (p - O) * 44.1/48, where O is the median over bursts of
(output start - source start * 48/44.1). The spread of the bursts around O is the sample-matching error; a burst
far from it (a dropout, inserted silence, a wrong match) is counted as misaligned and left out.

Reported per configuration:
  * markers: the latency at each burst start (page holding that output sample vs frame holding that source
    sample), about 110 a minute; bursts whose audio the upstream sent before the listener connected (the
    relay's burst, ffmpeg's backlog) are excluded;
  * every sample: the same quantity for every decoded sample sent after the listener connected (weighted by
    samples): the distribution a listener hears, with far more data behind its p99 than the bursts give;
  * breakdown: (1) what an ideal, zero-delay transcoder with the same pages would give: waiting for the rest of
    the page plus libopus's 6.5 ms lookahead (pre-skip), at MP3-frame granularity; (2) the server's own delay
    per page: arrival - send time of the last MP3 frame the page needs, also counted in MP3 frames sent
    meanwhile, and the time from the newest frame sent before the page to the page (CPU and I/O); and how the
    server wrote to the listener (interval between writes, pages per write);
  * method error per value: alignment residual + duration of the send() call (the send stamp is taken after it)
    + the kernel receive stamp (~0.1 ms). The latency of a given sample depends on where it sits in its MP3
    frame and Ogg page (up to one frame + one page); that spread is real and is sampled, not an error.

Subcommands:
  gen   [--out DIR]                      make (or reuse) the test MP3 and its marker table; print the MP3 path
  run   --name N --label L [--send P] [--json F] [--log F] [--dump F] [--connect-delay S] [--duration S] -- CMD
        run one configuration: CMD is started with {upstream} and {port} filled in, stopped by PID at the end
  table A.json B.json ...                side-by-side summary with the targets

Python 3.9+, standard library only, plus ctypes to libopus.so.0; needs lame and mpg123 to make the signal. The marker
bursts' constants and IDs (Goertzel), MP3 framing, the libopus binding and Ogg page parsing are bench/benchlib.py's.
"""
import argparse
import array
import bisect
import json
import math
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

from benchlib import (FRAME_S, FREQS, LAME_DELAY, MARKER_AMP, MARKER_LEN, OUT_RATE, REARM_S, SPF, SRC_RATE,
                      OpusDecoder, cached_table, encode_mp3, free_port, load_binary, logger, marker_id,
                      marker_positions, mp3_frames, ogg_packets, ogg_pages, pct, read_request_head, stop_process, wpct,
                      write_json)

# ---------------------------------------------------------------- test signal (the marker bursts: benchlib)
GEN_VERSION = "v3"
LENGTH_S = 120
NOISE_LSB = 64                  # uniform +-64/32768 background noise (about -57 dBFS RMS), not digital silence
THRESH = 0.1                    # onset: first sample with |x| > 0.1 (-20 dBFS; the burst peaks at 0.5)

log = logger()


def detect_onsets(pcm, channels, rate, block=None):
    """Marker onsets in interleaved float audio: the first sample above THRESH after REARM_S of nothing above it.
    Returns frame (sample-per-channel) indices."""
    block = block or rate // 100
    rearm = int(REARM_S * rate)
    n = len(pcm) // channels
    last_hot_end = -(10 ** 12)
    onsets = []
    for start in range(0, n, block):
        end = min(n, start + block)
        seg = pcm[start * channels:end * channels]
        if max(seg) > THRESH or min(seg) < -THRESH:
            if start - last_hot_end >= rearm:
                for i, v in enumerate(seg):
                    if v > THRESH or v < -THRESH:
                        onsets.append(start + i // channels)
                        break
            last_hot_end = end
    return onsets


def phase_onset(pcm, channels, rate, onset, freq):
    """Where the marker's sine starts (phase 0), to a fraction of a sample: the phase of the tone over the steady
    part of the burst (10-50 ms after the threshold onset), unwrapped to the period nearest the threshold onset.
    Codec pre-echo moves a threshold crossing; it does not move the phase of a steady tone."""
    w = 2 * math.pi * freq / rate
    a = onset + int(0.010 * rate)
    n = int(0.040 * rate)
    if (a + n) * channels > len(pcm):
        return None             # a burst cut off at the end of the recording
    re = im = 0.0
    for j in range(n):
        v = pcm[(a + j) * channels]
        re += v * math.cos(w * j)
        im -= v * math.sin(w * j)
    n0 = a - (math.atan2(im, re) + math.pi / 2) / w
    period = rate / freq
    expected = onset - math.asin(THRESH / MARKER_AMP) / w
    return n0 + round((expected - n0) / period) * period


def generate(out_dir):
    """Makes the test MP3 (cached) and its marker table; returns (mp3 path, table dict)."""
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, f"latency-{GEN_VERSION}-{LENGTH_S}s-44k1-stereo-128k")
    mp3, meta = base + ".mp3", base + ".json"
    table = cached_table(base, GEN_VERSION)
    if table is not None:
        return mp3, table
    n = LENGTH_S * SRC_RATE
    rng = random.Random(20240601)
    noise = rng.randbytes(n * 2)
    pcm = array.array("h", (v - 256 if v > 127 else v for v in noise))  # -128..127
    for i in range(len(pcm)):
        pcm[i] >>= 1                                                     # -64..63
    sources = []
    for s, k in marker_positions(n):
        f = FREQS[k % len(FREQS)]
        w = 2 * math.pi * f / SRC_RATE
        for j in range(MARKER_LEN):
            v = int(round(MARKER_AMP * 32767 * math.sin(w * j)))
            pcm[2 * (s + j)] = v
            pcm[2 * (s + j) + 1] = v
        sources.append(s)
    # No Xing/LAME tag (a live stream has none; the first frame is audio). CBR 128 kb/s, joint stereo.
    encode_mp3(pcm, base, SRC_RATE)
    with open(mp3, "rb") as f:
        frames = mp3_frames(f.read())
    # Decode with the mpg123 CLI (libmpg123, as radio-relay; no gapless trimming) and find the onsets with the same
    # detector the listener uses: the reference positions of the markers in the decoded MP3 stream.
    raw = subprocess.run(["mpg123", "-q", "--no-gapless", "-e", "s16", "-s", mp3], check=True,
                         stdout=subprocess.PIPE).stdout
    dec16 = array.array("h")
    dec16.frombytes(raw[:len(raw) // 4 * 4])
    if sys.byteorder != "little":
        dec16.byteswap()
    dec = array.array("f", (v / 32768.0 for v in dec16))
    decoded_frames = len(dec) // 2
    onsets = detect_onsets(dec, 2, SRC_RATE)
    markers = []
    for d in onsets:
        mid, conf = marker_id(dec, 2, SRC_RATE, d)
        markers.append({"d": d, "id": mid, "conf": round(conf, 1),
                        "d0": phase_onset(dec, 2, SRC_RATE, d, FREQS[mid]) if mid is not None else None})
    if len(markers) != len(sources):
        raise SystemExit(f"error: found {len(markers)} markers in the decoded MP3, expected {len(sources)}")
    shifts, phase = [], []
    for k, (m, s) in enumerate(zip(markers, sources)):
        if m["id"] != k % len(FREQS):
            raise SystemExit(f"error: marker {k} decodes as id {m['id']}, expected {k % len(FREQS)}")
        m["s"] = s
        shifts.append(m["d"] - s)
        phase.append(m["d0"] - s - LAME_DELAY)
    # The phase fit must find the sine where lame's encoder delay and mpg123's decoder delay put it.
    if max(abs(x) for x in phase) > 0.5:
        raise SystemExit(f"error: decoded markers start {min(phase):+.2f}..{max(phase):+.2f} samples from "
                         f"source + {LAME_DELAY}; the mapping of source samples to MP3 frames would be wrong")
    for m in markers:
        m["d0"] = m["s"] + LAME_DELAY   # exact; the fit agrees to within phase_min..phase_max
    table = {
        "version": GEN_VERSION, "mp3_size": os.path.getsize(mp3), "frames": len(frames),
        "decoded_frames": decoded_frames, "markers": markers,
        "shift_min": min(shifts), "shift_max": max(shifts),
        "phase_min": min(phase), "phase_max": max(phase),
    }
    with open(meta, "w") as f:
        json.dump(table, f)
    return mp3, table


# ---------------------------------------------------------------- upstream and listener
class Upstream:
    """HTTP/1.0 MP3 source at real time. One schedule for all clients: frame g (global, looping over the file) is
    due at t0 + g * FRAME_S, t0 = when the first client's request was read."""

    # How the upstream writes (--send): a real server's write loop sends whatever became due every so often, and
    # many send a buffer at connect. name -> (seconds between writes, or 0: each frame at its due time; burst s).
    PATTERNS = {
        "frame": (0, 0),        # one frame per send() at its due time
        "chunk50": (0.05, 0),   # whatever became due, every 20-50 ms (jittered): one or two frames a send()
        "chunk250": (0.25, 0),  # whatever became due, every 250 ms
        "burst2": (0, 2.0),     # 2 s of frames at once on connect (the server's buffer), then one frame per send()
    }

    def __init__(self, frames, pattern="frame"):
        self.frames = frames
        self.interval, self.burst = self.PATTERNS[pattern]
        self.random = random.Random(7)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.t0 = None
        self.sent = {}            # global frame index -> monotonic ns when the frame went to the kernel
        self.late = []            # ns between due time and send time, first client
        self.call = []            # ns that each sendall() took
        self.blocked = []         # global frame indexes whose sendall() blocked (the peer was not reading)
        self.clients = 0
        self.first_client = threading.Event()
        self.stopping = False
        self.lock = threading.Lock()
        self.threads = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(c,), daemon=True)
            self.threads.append(t)
            t.start()

    def _serve(self, c):
        try:
            c.settimeout(10)
            if not read_request_head(c)[1]:
                return
            c.settimeout(None)
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.clients += 1
                index = self.clients
                now = time.monotonic_ns()
                if self.t0 is None:
                    self.t0 = now
                g = (now - self.t0) // int(FRAME_S * 1e9)
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: audio/mpeg\r\nCache-Control: no-cache\r\n"
                      b"icy-name: radio-relay latency bench\r\n\r\n")
            self.first_client.set()
            nf = len(self.frames)
            # A burst: the frames of the last `burst` seconds (due in the past) go out at once, in one send().
            g -= int(self.burst / FRAME_S)
            next_write = time.monotonic_ns()
            while not self.stopping:
                if self.interval > 0:
                    # A write loop: wake, send everything that became due since the last write, sleep again.
                    wait = next_write - time.monotonic_ns()
                    if wait > 0:
                        time.sleep(wait / 1e9)
                    low = self.interval * 0.4 if self.interval < 0.1 else self.interval
                    next_write += int(self.random.uniform(low, self.interval) * 1e9)
                    last = (time.monotonic_ns() - self.t0) // int(FRAME_S * 1e9)
                    if last < g:
                        continue
                    chunk = list(range(g, last + 1))
                else:
                    due = self.t0 + int(g * FRAME_S * 1e9)
                    wait = due - time.monotonic_ns()
                    if wait > 0:
                        time.sleep(wait / 1e9)
                    last = max(g, (time.monotonic_ns() - self.t0) // int(FRAME_S * 1e9)) if g < 0 else g
                    chunk = list(range(g, last + 1))
                # The stamp is taken just before the call: the GIL is released around the send() syscall, so a
                # stamp taken after it may include a wait for the GIL, while the one before precedes the syscall by
                # microseconds. A loopback send() delivers to the peer's receive queue within the syscall. If the
                # call blocked (the peer's buffer was full), the bytes went out during it: use the later stamp.
                t_before = time.monotonic_ns()
                c.sendall(b"".join(self.frames[f % nf] for f in chunk))
                t_after = time.monotonic_ns()
                t = t_before
                if t_after - t_before > 5_000_000:
                    t = t_after
                    if index == 1:
                        self.blocked.extend(chunk)
                for f in chunk:
                    due = self.t0 + int(f * FRAME_S * 1e9)
                    if index == 1:
                        self.sent[f] = t
                        self.late.append(t - due)
                        self.call.append(t_after - t_before)
                    else:
                        self.sent.setdefault(f, t)
                g = chunk[-1] + 1
        except OSError:
            pass
        finally:
            c.close()

    def stop(self):
        self.stopping = True
        try:
            self.sock.close()
        except OSError:
            pass
        for t in self.threads:
            t.join(1)
        # Snapshots for the analysis (a sender still stuck in sendall cannot change them under it).
        self.sent = dict(self.sent)
        self.late = list(self.late)
        self.call = list(self.call)
        self.blocked = list(self.blocked)


class Listener:
    def __init__(self, port):
        self.port = port
        self.chunks = []          # (monotonic ns when the bytes arrived, bytes)
        self.wakeup = []          # ns between the kernel's receive timestamp and recvmsg() returning
        self.unstamped = []       # (chunk index, bytes, why) for chunks without a usable kernel stamp
        self.t_conn = None
        self.error = None
        self.stopping = False
        self.sock = None

    SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)   # Linux; Python does not export it

    def connect(self, deadline_ns):
        while time.monotonic_ns() < deadline_ns:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            # Before connecting: the server writes the headers and the burst at once. The kernel stamps arriving data
            # (CLOCK_REALTIME; for TCP, the newest segment a read returns).
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            try:
                s.setsockopt(socket.SOL_SOCKET, self.SO_TIMESTAMPNS, 1)
            except OSError:
                pass
            try:
                s.connect(("127.0.0.1", self.port))
            except OSError:
                s.close()
                time.sleep(0.002)
                continue
            self.t_conn = time.monotonic_ns()
            self.sock = s
            threading.Thread(target=self._read, daemon=True).start()
            return True
        return False

    def _read(self):
        # The kernel's receive stamp is moved to the monotonic clock with a (realtime, monotonic) pair read right
        # after recvmsg returns, so the time Python took to wake up does not count as latency.
        so_ts = self.SO_TIMESTAMPNS
        try:
            while not self.stopping:
                b, anc, _, _ = self.sock.recvmsg(1 << 18, 64)
                mono = time.monotonic_ns()
                real = time.time_ns()
                if not b:
                    if not self.stopping:
                        self.error = "server closed the connection"
                    return
                t = mono
                why = "no stamp"
                for level, kind, data in anc:
                    if level == socket.SOL_SOCKET and kind == so_ts and len(data) >= 16:
                        sec, nsec = struct.unpack_from("@qq", data)
                        delay = real - (sec * 1_000_000_000 + nsec)
                        if 0 <= delay < 1_000_000_000:
                            t = mono - delay
                            self.wakeup.append(delay)
                            why = None
                        else:
                            why = f"stamp {delay / 1e6:.3f} ms before the read"
                if why:
                    self.unstamped.append((len(self.chunks), len(b), why))
                self.chunks.append((t, b))
        except OSError as e:
            if not self.stopping:
                self.error = str(e)

    def stop(self):
        self.stopping = True
        if self.sock:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()


# ---------------------------------------------------------------- analysis
def parse_ogg(chunks):
    """Pages with their receive time (the chunk holding their last byte) and completed packets."""
    data = b"".join(b for _, b in chunks)
    ends = []
    total = 0
    for _, b in chunks:
        total += len(b)
        ends.append(total)
    pages = []
    partial = b""
    resyncs = 0
    skip_continued = True   # a page that continues a packet we never saw: drop that fragment
    for page in ogg_pages(data):
        if page is None:
            resyncs += 1
            continue
        continued = bool(page.htype & 1)
        drop = continued and skip_continued and not partial
        packets, partial = ogg_packets(data, page, partial if continued else b"")
        if drop and packets:
            del packets[0]
        skip_continued = False
        ci = bisect.bisect_left(ends, page.end)
        t = chunks[ci][0]
        pages.append({"t": t, "chunk": ci, "granule": page.granule, "seq": page.seq, "serial": page.serial,
                      "htype": page.htype, "packets": packets, "size": page.end - page.offset, "offset": page.offset})
    return pages, resyncs


def analyse(args, table, up, lis, proc_log):
    res = {"name": args.name, "label": args.label, "send": args.send, "join": args.connect_delay}
    ms = lambda ns: ns / 1e6
    nfile = table["frames"]
    t_conn = lis.t_conn
    res["connect_after_upstream_ms"] = ms(t_conn - up.t0)
    res["upstream_clients"] = up.clients
    pages, resyncs = parse_ogg(lis.chunks)
    res["bytes"] = sum(len(b) for _, b in lis.chunks)
    res["pages"] = len(pages)
    res["ogg_resyncs"] = resyncs
    if len(pages) < 3:
        res["error"] = f"only {len(pages)} Ogg pages received"
        return res
    head = pages[0]["packets"][0] if pages[0]["packets"] else b""
    if not head.startswith(b"OpusHead"):
        res["error"] = "the first page is not OpusHead"
        return res
    preskip = struct.unpack_from("<H", head, 10)[0]
    res["preskip"] = preskip
    audio = [p for p in pages[1:] if not (p["packets"] and p["packets"][0].startswith(b"OpusTags"))]
    # Decode. A packet belongs to the page where it completes; sample positions are in the granule domain
    # (pre-skip included), anchored at the first page that ends a packet.
    dec = OpusDecoder()
    pcm = array.array("f")
    spans = []                  # per audio page: (first decoded index, end decoded index)
    bad_packets = 0
    for p in audio:
        a = len(pcm) // 2
        for pk in p["packets"]:
            if dec.decode(pk, pcm) < 0:
                bad_packets += 1
        spans.append((a, len(pcm) // 2))
    dec.close()
    base = None
    gran_jumps = 0
    for p, (a, b) in zip(audio, spans):
        if p["granule"] < 0 or b == a:
            continue
        if base is None:
            base = p["granule"] - b
        elif p["granule"] != base + b:
            gran_jumps += 1
            base = p["granule"] - b
    if base is None:
        res["error"] = "no audio page with a granule position"
        return res
    res["bad_packets"] = bad_packets
    res["granule_discontinuities"] = gran_jumps
    page_start = [base + a for a, _ in spans]   # absolute granule-domain position of each page's first sample
    page_end = [base + b for _, b in spans]
    res["audio_pages"] = len(audio)
    res["page_ms_median"] = pct([(e - s) / 48 for s, e in zip(page_start, page_end) if e > s], 50)

    # First pages after connecting (how the burst / the first page behave).
    first = []
    for p, s, e in zip(audio[:400], page_start, page_end):
        first.append((ms(p["t"] - t_conn), (e - s) / 48))
    burst = [f for f in first if f[0] < 50]
    res["burst_pages"] = len(burst)
    res["burst_audio_ms"] = sum(d for _, d in burst)
    live = [f for f in first if f[0] >= 50][:3]
    res["first_live_pages"] = [f"+{t:.0f} ms ({d:.0f} ms audio)" for t, d in live]

    # Marker onsets in the output (threshold), their IDs (tone frequency) and where their sine starts (phase).
    onsets = detect_onsets(pcm, 2, OUT_RATE, block=480)
    starts = [a for a, _ in spans]
    found = []
    for o in onsets:
        mid, conf = marker_id(pcm, 2, OUT_RATE, o)
        if mid is None:
            continue
        n0 = phase_onset(pcm, 2, OUT_RATE, o, FREQS[mid])
        if n0 is None:
            continue
        n0 += base
        found.append({"pos": base + o, "n0": n0, "id": mid, "conf": conf})

    def page_of(pos):
        """Index of the audio page whose decoded samples include absolute position pos."""
        i = bisect.bisect_right(starts, pos - base) - 1
        while 0 <= i < len(spans) and spans[i][1] <= pos - base:
            i += 1
        return i if 0 <= i < len(spans) else None

    for o in found:
        o["page"] = page_of(o["pos"])
        o["t"] = audio[o["page"]]["t"] if o["page"] is not None else None

    # Source markers on the global frame schedule (the file loops). d0: where the marker's sine starts in the
    # decoded MP3 stream (source sample + 1105, checked by the same phase fit when the signal was made).
    src = table["markers"]
    sent = up.sent
    sent_max = max(sent) if sent else -1
    loops = sent_max // nfile + 1
    gmarkers = []
    for L in range(loops):
        for k, m in enumerate(src):
            d0 = L * nfile * SPF + m["d0"]
            f = int(d0 // SPF)
            if f in sent:
                gmarkers.append({"d0": d0, "id": m["id"], "frame": f, "t": sent[f], "k": L * len(src) + k})
    # Match each detected onset to the latest source marker with the same ID whose frame was already sent when the
    # page arrived. IDs repeat every 16 markers (8 s or more), so this is unambiguous for latencies under 8 s, and the
    # alignment check below catches anything else.
    matched = []
    unmatched = 0
    for o in found:
        cands = [g for g in gmarkers if o["t"] is not None and g["id"] == o["id"] and g["t"] <= o["t"]]
        if not cands or o["conf"] < 3:
            unmatched += 1
            continue
        matched.append((o, max(cands, key=lambda g: g["d0"])))
    if not matched:
        res["error"] = f"no marker matched ({len(found)} onsets found)"
        return res
    # Alignment: output position p (48 kHz, granule domain) holds the decoded-MP3 sample (p - O) * 44.1/48. O is the
    # median over markers of (output sine start - source sine start); the spread around it is the method's
    # sample-matching error, and a marker far from it (a dropout, inserted silence, a mismatch) is reported.
    offs = [o["n0"] - g["d0"] * OUT_RATE / SRC_RATE for o, g in matched]
    O = pct(offs, 50)
    resid = [x - O for x in offs]
    res["offset_samples"] = O
    aligned = [(o, g, r) for (o, g), r in zip(matched, resid) if abs(r) < 0.002 * OUT_RATE]
    res["misaligned"] = len(matched) - len(aligned)
    seq = [g["k"] for _, g, _ in aligned]
    res["marker_sequence_gaps"] = sum(1 for a, b in zip(seq, seq[1:]) if b != a + 1)

    def src_frame(p):
        return int(math.floor((p - O) * SRC_RATE / OUT_RATE / SPF))

    # Per-marker latency: the page holding the output sample where the marker's sine starts, against the MP3
    # frame holding that same sample of the source.
    lat, excluded, resid_used = [], 0, []
    for o, g, r in aligned:
        p = page_of(int(math.floor(o["n0"])))
        f = g["frame"]
        if p is None or f not in sent or sent[f] < t_conn:
            excluded += 1
            continue
        lat.append(ms(audio[p]["t"] - sent[f]))
        resid_used.append(r)
    res["markers_found"] = len(found)
    res["markers_unmatched"] = unmatched
    res["markers_excluded_before_connect"] = excluded
    res["n"] = len(lat)
    if not lat:
        res["error"] = "no marker was sent after the listener connected"
        return res
    for q in (50, 90, 99):
        res[f"p{q}"] = pct(lat, q)
    res["max"] = max(lat)
    res["min"] = min(lat)
    res["resid_max_ms"] = max(abs(r) for r in resid_used) / 48

    # Every decoded sample, not only the markers: sample p arrived with its page and left the upstream with frame
    # src_frame(p). Weighted by samples; only audio sent after the listener connected.
    unstamped = {i for i, _, _ in lis.unstamped}
    counted_unstamped = 0       # counted pages that came in a read without a kernel stamp
    pairs = []                  # (latency ms, samples)
    fill = []                   # (ms from the sample's frame to the page's last needed frame, samples)
    server = []                 # per page: ms from the send of the last frame it needs to its arrival
    waited = []                 # per page: MP3 frames the upstream sent in that interval
    after_last = []             # per page: ms from the newest frame sent before it arrived to its arrival
    acausal = 0
    sent_keys = sorted(sent)
    sent_vals = [sent[k] for k in sent_keys]
    frame_p = lambda f: O + f * SPF * OUT_RATE / SRC_RATE  # first output position of source frame f
    for p, s, e in zip(audio, page_start, page_end):
        if e <= s:
            continue
        need = src_frame(e - 1 + preskip)   # Opus lookahead: the page's last packet needs pre-skip samples more
        due = sent.get(need)
        f0, f1 = src_frame(s), src_frame(e - 1)
        for f in range(f0, f1 + 1):
            if f not in sent or sent[f] < t_conn:
                continue
            lo = max(s, math.ceil(frame_p(f)))
            hi = min(e, math.ceil(frame_p(f + 1)))
            if hi > lo:
                pairs.append((ms(p["t"] - sent[f]), hi - lo))
                if p["chunk"] in unstamped:
                    counted_unstamped += 1
                if due is not None:
                    fill.append((ms(due - sent[f]), hi - lo))
        if f0 in sent and sent[f0] >= t_conn:
            if due is None or due > p["t"]:
                acausal += 1
                continue
            server.append(ms(p["t"] - due))
            last = bisect.bisect_right(sent_vals, p["t"]) - 1
            waited.append(sent_keys[last] - need)
            after_last.append(ms(p["t"] - sent_vals[last]))
    pairs.sort()
    fill.sort()
    res["all_samples_s"] = sum(w for _, w in pairs) / OUT_RATE
    for q in (50, 90, 99):
        res[f"all_p{q}"] = wpct(pairs, q)
    res["all_max"] = pairs[-1][0] if pairs else float("nan")
    res["acausal_pages"] = acausal
    res["fill_p50"] = wpct(fill, 50)
    res["fill_max"] = fill[-1][0] if fill else float("nan")
    res["server_n"] = len(server)
    for q in (50, 99):
        res[f"server_p{q}"] = pct(server, q)
    res["server_min"] = min(server) if server else float("nan")
    res["server_max"] = max(server) if server else float("nan")
    hist = {}
    for w in waited:
        hist[w] = hist.get(w, 0) + 1
    res["frames_waited"] = {str(k): v for k, v in sorted(hist.items())}
    res["after_last_p50"] = pct(after_last, 50)
    res["after_last_p99"] = pct(after_last, 99)
    # How the server wrote to the listener: arrivals more than 2 ms apart are separate writes.
    live_t = [p["t"] for p in audio if p["t"] >= t_conn + 100_000_000]
    writes = []
    for t in live_t:
        if not writes or t - writes[-1][0] > 2_000_000:
            writes.append([t, 1])
        else:
            writes[-1][1] += 1
    gaps = [ms(b[0] - a[0]) for a, b in zip(writes, writes[1:])]
    res["write_gap_p50"] = pct(gaps, 50)
    res["write_gap_p99"] = pct(gaps, 99)
    res["write_gap_max"] = max(gaps) if gaps else float("nan")
    per = {}
    for _, c in writes:
        per[c] = per.get(c, 0) + 1
    res["pages_per_write"] = {str(k): v for k, v in sorted(per.items())}
    # Timestamp quality.
    late = sorted(up.late)
    res["send_late_p99_ms"] = ms(pct(late, 99))
    res["send_late_max_ms"] = ms(late[-1]) if late else float("nan")
    res["send_call_p99_ms"] = ms(pct(up.call, 99))
    res["send_call_max_ms"] = ms(max(up.call)) if up.call else float("nan")
    res["send_blocked_after_connect"] = sum(1 for g in up.blocked if sent.get(g, 0) >= t_conn)
    res["kernel_rx_stamps"] = bool(lis.wakeup) and counted_unstamped == 0
    res["rx_chunks"] = len(lis.chunks)
    res["rx_unstamped"] = lis.unstamped[:10]
    res["rx_wakeup_p99_ms"] = ms(pct(lis.wakeup, 99)) if lis.wakeup else float("nan")
    # Per value: the send stamp precedes the syscall by microseconds (0.1 ms allowed); the receive stamp is the
    # kernel's (0.1 ms allowed; 1 ms for user-space stamps); the sample matching is good to the alignment residual.
    res["error_ms"] = res["resid_max_ms"] + 0.1 + (0.1 if res["kernel_rx_stamps"] else 1.0)
    if getattr(args, "dump", None):
        with open(args.dump, "w") as f:
            for i, (p, s, e) in enumerate(zip(audio, page_start, page_end)):
                need = src_frame(e - 1 + preskip)
                f0 = src_frame(s)
                f.write(json.dumps({"page": i, "t": ms(p["t"] - t_conn), "s": s, "e": e, "f0": f0, "need": need,
                                    "sent_f0": ms(sent[f0] - t_conn) if f0 in sent else None,
                                    "sent_need": ms(sent[need] - t_conn) if need in sent else None}) + "\n")
            for o, g, r in aligned:
                f.write(json.dumps({"marker": g["k"], "n0": o["n0"], "pos": o["pos"], "page": page_of(int(o["n0"])),
                                    "frame": g["frame"], "sent": ms(g["t"] - t_conn), "r": r}) + "\n")
    res["log_tail"] = proc_log[-6:]
    return res


def report(res):
    n = res.get("name")
    print(f"== {n}: {res.get('label')}")
    if "error" in res:
        print(f"   FAILED: {res['error']}")
        if res.get("log_tail"):
            print("   log: " + "\n        ".join(res["log_tail"]))
        return
    print(f"   listener connected {res['connect_after_upstream_ms'] / 1000:.2f} s after the upstream's first frame; "
          f"{res['bytes'] / 1024:.0f} KiB, {res['audio_pages']} audio pages of {res['page_ms_median']:.0f} ms, "
          f"pre-skip {res['preskip']}")
    print(f"   on connect: {res['burst_pages']} pages ({res['burst_audio_ms'] / 1000:.2f} s of audio) within 50 ms; "
          f"then {', '.join(res['first_live_pages'])}")
    print(f"   markers: {res['markers_found']} found, {res['n']} counted, "
          f"{res['markers_excluded_before_connect']} excluded (audio sent before the listener connected), "
          f"{res['markers_unmatched']} unmatched, {res['misaligned']} misaligned, "
          f"{res['marker_sequence_gaps']} sequence gaps")
    print(f"   LATENCY, markers (n={res['n']}):       p50 {res['p50']:6.1f}   p90 {res['p90']:6.1f}   "
          f"p99 {res['p99']:6.1f}   max {res['max']:6.1f}   min {res['min']:6.1f} ms")
    print(f"   latency, every sample ({res['all_samples_s']:.0f} s):   p50 {res['all_p50']:6.1f}   "
          f"p90 {res['all_p90']:6.1f}   p99 {res['all_p99']:6.1f}   max {res['all_max']:6.1f} ms")
    print(f"   breakdown: (1) an ideal transcoder with these pages (wait for the rest of the page + Opus lookahead "
          f"{res['preskip'] / 48:.1f} ms, MP3-frame granularity): p50 {res['fill_p50']:.1f}, max "
          f"{res['fill_max']:.1f} ms")
    waited = ", ".join(f"{k}: {v}" for k, v in res["frames_waited"].items())
    print(f"              (2) server: page arrival - send of the last MP3 frame it needs, per page "
          f"(n={res['server_n']}): p50 {res['server_p50']:.1f}  p99 {res['server_p99']:.1f}  "
          f"min {res['server_min']:.1f}  max {res['server_max']:.1f} ms")
    print(f"                  MP3 frames the upstream sent meanwhile {{frames: pages}}: {{{waited}}}; "
          f"page arrival - newest frame sent before it: p50 {res['after_last_p50']:.1f}, "
          f"p99 {res['after_last_p99']:.1f} ms")
    ppw = ", ".join(f"{k}: {v}" for k, v in res["pages_per_write"].items())
    print(f"              writes to the listener: every {res['write_gap_p50']:.0f} ms (p50), p99 "
          f"{res['write_gap_p99']:.0f}, max {res['write_gap_max']:.0f} ms; {{pages per write: writes}}: {{{ppw}}}")
    if res["kernel_rx_stamps"]:
        rx = "kernel receive stamps, Python woke up p99 {:.2f} ms later".format(res["rx_wakeup_p99_ms"])
        if res.get("rx_unstamped"):
            rx += f"; {len(res['rx_unstamped'])} uncounted read(s) without one"
    else:
        missing = res.get("rx_unstamped", [])
        rx = (f"user-space stamps for {len(missing)}{'+' if len(missing) >= 10 else ''} of {res.get('rx_chunks')} "
              f"reads: " + "; ".join(f"read {i} ({n} B): {why}" for i, n, why in missing[:3]) + "; 1.0")
    print(f"   method error: +-{res['error_ms']:.1f} ms per value = sample matching (alignment residual max "
          f"{res['resid_max_ms']:.3f} ms) + send stamp (taken just before the syscall; 0.1) + receive stamp "
          f"({rx}); upstream pacing: frames left p99 {res['send_late_p99_ms']:.1f} ms after due, sendall() p99 "
          f"{res['send_call_p99_ms']:.2f} ms")
    odd = []
    if res["granule_discontinuities"]:
        odd.append(f"{res['granule_discontinuities']} granule discontinuities")
    if res["bad_packets"]:
        odd.append(f"{res['bad_packets']} undecodable packets")
    if res["ogg_resyncs"]:
        odd.append(f"{res['ogg_resyncs']} Ogg resyncs")
    if res["acausal_pages"]:
        odd.append(f"{res['acausal_pages']} pages arrived before the MP3 frame they need was sent (model off?)")
    if res["send_blocked_after_connect"]:
        odd.append(f"{res['send_blocked_after_connect']} upstream sends blocked > 5 ms (server not reading)")
    if res["upstream_clients"] != 1:
        odd.append(f"{res['upstream_clients']} upstream connections (reconnects?)")
    if res.get("listener_error"):
        odd.append(f"listener: {res['listener_error']}")
    if odd:
        print("   note: " + "; ".join(odd))
    sys.stdout.flush()


def cmd_run(args):
    mp3, table = generate(args.out)
    with open(mp3, "rb") as f:
        frames = mp3_frames(f.read())
    if len(frames) != table["frames"]:
        raise SystemExit("error: frame count differs from the marker table; delete bench/out/latency-* and rerun")
    sys.setswitchinterval(0.0005)
    up = Upstream(frames, args.send)
    port = free_port()
    cmd = [a.replace("{upstream}", f"http://127.0.0.1:{up.port}/stream.mp3").replace("{port}", str(port))
           for a in args.cmd]
    logf = open(args.log, "w") if args.log else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT)
    if args.pidfile:
        with open(args.pidfile, "w") as f:
            f.write(f"{proc.pid}\n")
    lis = Listener(port)

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    res = {"name": args.name, "label": args.label, "send": args.send, "join": args.connect_delay}
    load = None
    try:
        if not up.first_client.wait(15):
            res["error"] = "the server never connected to the upstream"
        else:
            if args.attach > 0:
                # Other listeners on the same station (the load tool, 2000 connects a second), all connected
                # before the measured listener joins, and staying for the whole run: the server then flushes as
                # it does for an audience of that size.
                ramp = args.attach / 2000
                load = subprocess.Popen(
                    [args.load_binary, "--port", str(port), "-n", str(args.attach), "--ramp", f"{ramp:.2f}",
                     "--duration", f"{ramp + args.connect_delay + args.duration + 10:.1f}"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                res["attached"] = args.attach
                time.sleep(ramp + 1)
            time.sleep(args.connect_delay)
            if proc.poll() is not None:
                res["error"] = f"the server exited with status {proc.returncode}"
            elif not lis.connect(time.monotonic_ns() + 15 * 10 ** 9):
                res["error"] = "could not connect to the server"
            else:
                end = lis.t_conn + int(args.duration * 1e9)
                while time.monotonic_ns() < end and proc.poll() is None and lis.error is None:
                    time.sleep(0.1)
                if proc.poll() is not None:
                    res["error"] = f"the server exited with status {proc.returncode} during the run"
    except KeyboardInterrupt:
        res["error"] = "interrupted"
    finally:
        lis.stop()
        for child in (load, proc):
            if child is not None:
                stop_process(child)
        up.stop()
        if args.log:
            logf.close()
    tail = []
    if args.log:
        with open(args.log, errors="replace") as f:
            tail = [line.rstrip() for line in f][-6:]
    if "error" not in res:
        res = analyse(args, table, up, lis, tail)
        if lis.error:
            res["listener_error"] = lis.error
    else:
        res["log_tail"] = tail
    report(res)
    if args.json:
        write_json(args.json, res, indent=1)
    return 0 if "error" not in res else 1


def cmd_table(args):
    rows = []
    for path in args.files:
        try:
            with open(path) as f:
                rows.append(json.load(f))
        except (OSError, ValueError) as e:
            rows.append({"name": os.path.basename(path), "error": str(e)})
    def target(r):
        """The p99 goal: low latency 80 ms (with 250 ms chunks, the chunk interval + 80: the last frame of a chunk
        waits in the MP3 decoder for the next chunk), defaults 400 ms (450 with 250 ms chunks); none for others."""
        config = r["name"].split("/")[0]
        chunked = r.get("send") == "chunk250"
        if config == "low-latency":
            return 330 if chunked else 80
        if config == "default":
            return 450 if chunked else 400
        return None

    print()
    print("End-to-end latency, ms: the upstream sends an MP3 frame -> the listener has the Ogg page with that audio")
    hdr = (f"{'configuration':<44}{'markers':>8}{'p50':>7}{'p99':>7}{'max':>7}  {'every sample p50/p99/max':>25}"
           f"{'±err':>6}  target (p99)")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        label = f"{r.get('name')}"[:43]
        if "error" in r:
            print(f"{label:<44}  FAILED: {r['error']}")
            continue
        t = target(r)
        worst = max(r["p99"], r["all_p99"])
        verdict = "" if t is None else f"<= {t}: {'PASS' if worst <= t else 'FAIL'} ({worst:.0f})"
        allv = f"{r['all_p50']:.0f} / {r['all_p99']:.0f} / {r['all_max']:.0f}"
        print(f"{label:<44}{r['n']:>8}{r['p50']:>7.0f}{r['p99']:>7.0f}{r['max']:>7.0f}  {allv:>25}"
              f"{r['error_ms']:>6.1f}  {verdict}")
    print("markers: measured directly at marker bursts (about 110 a minute); every sample: the same measurement for")
    print("every decoded sample, using the alignment the markers establish. A target is judged on the larger p99.")
    print("Earlier study: ffmpeg with 100 ms pages 210 ms p50 / 262 ms p99.")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="sub", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    g = sub.add_parser("gen")
    g.add_argument("--out", default=os.path.join(here, "out"))
    r = sub.add_parser("run")
    r.add_argument("--out", default=os.path.join(here, "out"))
    r.add_argument("--name", required=True)
    r.add_argument("--label", default="")
    r.add_argument("--duration", type=float, default=60)
    r.add_argument("--connect-delay", type=float, default=2.0,
                   help="seconds between the server's upstream connection and the listener's")
    r.add_argument("--send", choices=sorted(Upstream.PATTERNS), default="frame",
                   help="how the upstream writes: frame (one per send at its due time), chunk50, chunk250, burst2")
    r.add_argument("--json")
    r.add_argument("--log")
    r.add_argument("--pidfile")
    r.add_argument("--dump", help="write per-page and per-marker rows (JSON lines) here")
    r.add_argument("--attach", type=int, default=0,
                   help="connect this many other raw listeners (the load tool) before the measured one joins")
    r.add_argument("--load-binary", default=load_binary(),
                   help="the load tool (default $LOAD, else the static release build, else the release build)")
    r.add_argument("cmd", nargs="+")
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.sub == "gen":
        mp3, table = generate(args.out)
        log(f"test signal: {mp3}: {table['frames']} frames, {len(table['markers'])} markers; decoded onset = "
            f"source sample + {table['shift_min']}..{table['shift_max']} by threshold, + {LAME_DELAY}"
            f"{table['phase_min']:+.2f}..{table['phase_max']:+.2f} by phase (lame 576 + mpg123 529 = {LAME_DELAY})")
        print(mp3)
        return 0
    if args.sub == "run":
        return cmd_run(args)
    return cmd_table(args)


if __name__ == "__main__":
    sys.exit(main())
