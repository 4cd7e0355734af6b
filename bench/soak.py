#!/usr/bin/env python3
"""Soak test of `radio-relay serve`: a faulty live upstream, N raw-TCP listeners, minutes of checks.

Three processes on one clock (CLOCK_MONOTONIC is system-wide, so monotonic_ns stamps from different processes
compare directly); bench/soak.sh starts them and the relay, and stops them by PID:
  * `upstream`: an HTTP/1.0 + ICY server on 127.0.0.1 (icy-metaint 8000 and a StreamTitle that changes every 30 s
    when the client sends `Icy-MetaData: 1`) sending the test MP3 at real time, one frame per send(), like a live
    station: a new connection starts at the live position (what was due while nobody was connected is skipped).
    Fault schedule, seconds after the first connection (t0): every 60 s a DROP (the socket is closed; the relay
    reconnects), every 90 s a STALL (nothing sent for 5 s, then the station resumes where it stopped and catches
    up: the backlog goes out as fast as the socket takes it, as a server's queue does after a network stall), every
    120 s GARBAGE (for 2 s random bytes replace the MP3 frames, same byte rate, ICY framing kept). Faults due at the
    same time run one after another (garbage, then stall, then drop) and form one episode. Faults start only
    before duration - 12 s, so every episode is followed by a measurement window. Every fault and connection is
    logged with its time; every audio frame's send time is kept for the latency analysis.
  * `listen`: N raw-TCP listeners in one process (selectors). Each one checks every Ogg page as it arrives
    (capture pattern, version, CRC-32 via libogg, one serial, page sequence contiguous but for the join gap,
    granule positions continuous with the decoded sample count, OpusHead then OpusTags first), decodes every Opus
    packet with libopus (ctypes, int16), and computes the RMS of every 20 ms window (10 ms hop) with audioop.
    Listener 0 also finds the marker bursts (below). The process samples the relay's VmRSS and CPU time every second.
  * `report`: joins both logs, prints the table, exits 1 if a criterion fails.

Test signal (made once, cached in bench/out/; `gen`): duration + 90 s, 44.1 kHz stereo, lame 128 kb/s CBR, no
Xing/LAME tag, so it never loops during a run (a loop join would carry lame's padding, ~50 ms of silence). A steady
250 Hz sine at -12 dBFS (peak 0.25), replaced every 0.5-0.6 s (pseudo-random) by a 60 ms marker burst at -6 dBFS
whose frequency (400 + 100 * (k % 16) Hz) identifies it, as in latency.py (the scheme, its marker IDs and the libopus
binding are bench/benchlib.py's). The signal never falls below -12 dBFS, so any 20 ms window below -40 dBFS is a dropout.

Measures:
  * level: 20 ms windows, 10 ms hop, RMS relative to a full-scale sine (AES17; the tone reads -12 dBFS). A window
    below -40 dBFS is a dropout; its upstream time is its page's arrival minus the listener's starting latency; it
    counts against the criterion unless that time falls within [episode start - 2 s, episode end + 2 s]. A drop
    is an instant (the close): the relay's reconnect delay is part of what is judged. The first 200 ms each
    listener decodes are not judged (a fresh decoder joining mid-stream).
  * latency: listener 0 finds marker onsets (10 ms RMS steps, then the first sample above 0.375) and their IDs
    (Goertzel, benchlib.marker_id); the marker's granule position P is in the same Ogg stream every listener gets,
    so listener i's latency for it = arrival at listener i of the page holding P - the send() of the MP3 frame
    holding the marker's first sample (source sample + 1105, lame + mpg123 delay; see latency.py). Resolution
    about 1 ms (onset) + the listener's wake-up (user-space stamps, a few ms under load); the criterion is 0.5 s.
    Starting value: median over markers sent from listener connect + 5 s to the first fault; before/after an
    episode: median over [start - 10.5 s, start - 0.5 s] and [end + 3 s, min(end + 13 s, next start - 0.5 s)].
  * RSS: the relay's VmRSS at t0 + 60 s and at the end (last sample before the listeners stop); CPU from
    /proc/PID/stat over the listening window.

Python 3.9+, standard library (audioop: present up to 3.12) plus ctypes to libopus.so.0 and libogg.so.0 (through
bench/benchlib.py).
"""
import argparse
import array
import bisect
import json
import math
import os
import random
import selectors
import signal
import socket
import sys
import time
import warnings

import benchlib as B  # the marker bursts' constants and IDs, MP3 framing and encoding, Ogg pages, libopus, /proc

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import audioop  # removed in Python 3.13; C-speed RMS over 50 decoded streams

GEN_VERSION = "soak-v1"
TONE_HZ = 250                    # 882 samples = exactly 5 periods at 44.1 kHz: the tone is tiled without a seam
TONE_AMP = 0.25                  # -12 dBFS peak
MARKER_AMP = B.MARKER_AMP        # -6 dBFS
METAINT = 8000
FLOOR_DBFS = -40.0
HALF = 480                       # 10 ms at 48 kHz: the hop; a window is two halves
FS_SINE_RMS = 32767 / math.sqrt(2)
FLOOR_RMS = FS_SINE_RMS * 10 ** (FLOOR_DBFS / 20)
MARK_RMS = 8192                  # between the tone's RMS (5793) and a marker's (11585)
MARK_PEAK = 12288                # 0.375: between the tone's peak (0.25) and a marker's (0.5)
SKIP_START = 9600                # 200 ms of each listener's first decoded audio not judged
PERIODS = (("garbage", 120), ("stall", 90), ("drop", 60))
STALL_S = 5.0
GARBAGE_S = 2.0
FRAME_NS = int(B.FRAME_S * 1e9)


log = B.logger("soak")


# ---------------------------------------------------------------- test signal
def generate(out_dir, length_s):
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, f"{GEN_VERSION}-{length_s}s-44k1-stereo-128k")
    table = B.cached_table(base)
    if table is not None:
        return base + ".mp3", table
    n = length_s * B.SRC_RATE
    cycle = array.array("h")
    for j in range(882):
        v = int(round(TONE_AMP * 32767 * math.sin(2 * math.pi * TONE_HZ * j / B.SRC_RATE)))
        cycle.extend((v, v))
    pcm = cycle * (n // 882 + 1)
    del pcm[2 * n:]
    bursts = []
    for f in B.FREQS:
        b = array.array("h")
        for j in range(B.MARKER_LEN):
            v = int(round(MARKER_AMP * 32767 * math.sin(2 * math.pi * f * j / B.SRC_RATE)))
            b.extend((v, v))
        bursts.append(b)
    markers = []
    for s, k in B.marker_positions(n):
        pcm[2 * s:2 * (s + B.MARKER_LEN)] = bursts[k % len(B.FREQS)]
        markers.append([s, k % len(B.FREQS)])
    mp3 = B.encode_mp3(pcm, base, B.SRC_RATE)
    with open(mp3, "rb") as f:
        frames = len(B.mp3_frames(f.read()))
    table = {"version": GEN_VERSION, "mp3_size": os.path.getsize(mp3), "frames": frames, "markers": markers}
    B.write_json(base + ".json", table)
    return mp3, table


# ---------------------------------------------------------------- upstream
def fault_plan(duration):
    """[(scheduled t, [kinds])]: every multiple of 30 s that is a multiple of a fault's period, before duration-12."""
    plan = []
    t = 30
    while t < duration - 12:
        kinds = [k for k, p in PERIODS if t % p == 0]
        if kinds:
            plan.append((t, kinds))
        t += 30
    return plan


class IcyWriter:
    def __init__(self, metaint, title):
        self.metaint = metaint
        self.left = metaint
        self.title = title
        self.sent_title = None

    def wrap(self, data):
        if not self.metaint:
            return data
        out = []
        while data:
            n = min(self.left, len(data))
            out.append(data[:n])
            data = data[n:]
            self.left -= n
            if self.left == 0:
                if self.title() != self.sent_title:
                    self.sent_title = self.title()
                    meta = f"StreamTitle='{self.sent_title}';".encode()
                    meta += b"\0" * (-len(meta) % 16)
                    out.append(bytes([len(meta) // 16]) + meta)
                else:
                    out.append(b"\0")
                self.left = self.metaint
        return b"".join(out)


def cmd_upstream(args):
    mp3, table = generate(args.out, args.length)
    with open(mp3, "rb") as f:
        frames = B.mp3_frames(f.read())
    nf = len(frames)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    B.write_atomic(args.port_file, f"{srv.getsockname()[1]}\n")
    events = []                 # {"t": ns, "kind": ..., ...}
    sent = array.array("q")     # pairs: global frame index, monotonic ns just before its send()
    state = {"t0": None}
    stop = {"now": False}

    def on_term(signum, frame):
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    def ev(kind, **kw):
        e = {"t": time.monotonic_ns(), "kind": kind}
        e.update(kw)
        events.append(e)
        if state["t0"] is not None:
            log(f"upstream +{(e['t'] - state['t0']) / 1e9:7.2f} s {kind} {kw if kw else ''}")

    def write_out():
        B.write_json(args.json, {"t0": state["t0"], "frames": nf, "events": events, "sent": sent.tolist(),
                                 "plan": fault_plan(args.duration)}, atomic=True)

    started = time.monotonic()
    actions = []                # (ns, seq, action, episode)
    g = 0                       # next global frame index (content position)
    due = None                  # ns when frame g is due
    garbage_until = 0
    rnd = random.Random(1)
    try:
        while not stop["now"]:
            if state["t0"] is None and time.monotonic() - started > 60:
                log("upstream: no client within 60 s")
                break
            if state["t0"] is not None and time.monotonic_ns() > state["t0"] + int(args.duration * 1e9):
                break
            srv.settimeout(0.2)
            try:
                c, _ = srv.accept()
            except socket.timeout:
                if actions and actions[0][0] <= time.monotonic_ns():
                    _, _, act, ep = actions.pop(0)
                    ev(act + "_skipped", episode=ep, why="no client connected")
                continue
            c.settimeout(10)
            try:
                req, _ = B.read_request_head(c)
            except OSError:
                c.close()
                continue
            now = time.monotonic_ns()
            if state["t0"] is None:
                state["t0"] = now
                due = now
                B.write_atomic(args.t0_file, f"{now}\n")
                seq = 0
                for t, kinds in fault_plan(args.duration):
                    at = now + int(t * 1e9)
                    for k in kinds:
                        actions.append((at, seq, k, t))
                        seq += 1
                        if k == "garbage":
                            at += int(GARBAGE_S * 1e9)
                        elif k == "stall":
                            at += int(STALL_S * 1e9)
                actions.sort()
            elif now > due:         # a live station: what was due while nobody listened is skipped
                skip = (now - due) // FRAME_NS
                g += skip
                due += skip * FRAME_NS
            wants_meta = b"icy-metadata: 1" in req.lower()
            ev("connect", frame=g, icy=wants_meta, request=req.split(b"\r\n")[0].decode("latin-1")[:100])
            t0 = state["t0"]
            icy = IcyWriter(METAINT if wants_meta else 0,
                            lambda: f"radio-relay soak - tone part {(time.monotonic_ns() - t0) // 30_000_000_000}")
            head = (b"HTTP/1.0 200 OK\r\nContent-Type: audio/mpeg\r\nCache-Control: no-cache\r\n"
                    b"icy-name: radio-relay soak\r\nicy-br: 128\r\n")
            if wants_meta:
                head += f"icy-metaint: {METAINT}\r\n".encode()
            try:
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                c.sendall(head + b"\r\n")
                while not stop["now"]:
                    now = time.monotonic_ns()
                    if now > t0 + int(args.duration * 1e9):
                        break
                    dropped = False
                    while actions and actions[0][0] <= now:
                        _, _, act, ep = actions.pop(0)
                        if act == "garbage":
                            garbage_until = now + int(GARBAGE_S * 1e9)
                            ev("garbage", episode=ep, until=garbage_until, frame=g)
                        elif act == "stall":
                            ev("stall", episode=ep, frame=g)
                            end = now + int(STALL_S * 1e9)
                            while time.monotonic_ns() < end and not stop["now"]:
                                time.sleep(0.05)
                            ev("stall_end", episode=ep, frame=g, backlog_frames=(time.monotonic_ns() - due) // FRAME_NS)
                        elif act == "drop":
                            ev("drop", episode=ep, frame=g)
                            dropped = True
                            break
                        now = time.monotonic_ns()
                    if dropped:
                        break
                    wait = due - time.monotonic_ns()
                    if wait > 0:
                        time.sleep(wait / 1e9)
                    frame = frames[g % nf]
                    if time.monotonic_ns() < garbage_until:
                        c.sendall(icy.wrap(rnd.randbytes(len(frame))))
                    else:
                        t_send = time.monotonic_ns()
                        c.sendall(icy.wrap(frame))
                        sent.append(g)
                        sent.append(t_send)
                    if g == nf:
                        ev("looped")
                    g += 1
                    due += FRAME_NS
            except OSError as e:
                ev("client_error", error=str(e))
            finally:
                c.close()
    finally:
        srv.close()
        write_out()
    return 0


# ---------------------------------------------------------------- listeners
class Conn:
    def __init__(self, idx, sock, markers):
        self.idx = idx
        self.sock = sock
        self.buf = bytearray()
        self.t_conn = time.monotonic_ns()
        self.t_closed = None
        self.close_reason = None
        self.bytes = 0
        self.errors = []            # (t, text)
        self.serial = None
        self.seq = None
        self.join_gap_used = False
        self.npages = 0
        self.partial = b""
        self.skip_continued = True
        self.packets = 0
        self.dec = B.OpusDecoder()
        self.decoded = 0            # samples (per channel) decoded so far
        self.base = None            # granule position of decoded sample 0
        self.pages_g = array.array("q")
        self.pages_t = array.array("q")
        self.pcm = bytearray()      # decoded int16 stereo not yet cut into 10 ms halves
        self.half = 0               # halves done
        self.prev_sq = None
        self.low = []               # (decoded index of window start, arrival ns of its page, level dB)
        self.min_rms = FS_SINE_RMS
        self.markers = markers      # listener 0 only: list to append (decoded index, id, conf)
        self.mono = array.array("h")
        self.mono_at = 0            # decoded index of mono[0]
        self.quiet = 0
        self.pending = []           # onsets waiting for 50 ms of audio

    def error(self, t, text):
        if len(self.errors) < 50:
            self.errors.append((t, text))
        else:
            self.errors[-1] = (t, f"... and more (last: {text})")

    def feed(self, data, t):
        self.bytes += len(data)
        self.buf += data
        pos = 0
        buf = self.buf
        while len(buf) - pos >= 27:
            if buf[pos:pos + 4] != b"OggS":
                nxt = buf.find(b"OggS", pos + 1)
                self.error(t, f"lost Ogg capture at byte {self.bytes - len(buf) + pos}")
                if nxt < 0:
                    pos = len(buf) - 3
                    break
                pos = nxt
                continue
            pg = B.ogg_page_at(buf, pos)
            if pg is None:
                break
            self.page(buf, pg, t)
            pos = pg.end
        del buf[:pos]

    def page(self, buf, pg, t):
        self.npages += 1
        if pg.version != 0:
            self.error(t, f"page version {pg.version}")
        if B.ogg_page_crc(memoryview(buf)[pg.offset:pg.end], pg.header_len) != pg.crc:
            self.error(t, f"CRC mismatch on page {self.npages}")
            return
        htype, granule, serial, seq = pg.htype, pg.granule, pg.serial, pg.seq
        if self.serial is None:
            self.serial = serial
        elif serial != self.serial:
            self.error(t, f"serial changed {self.serial:#x} -> {serial:#x}")
            self.serial = serial
        if self.seq is not None and seq != self.seq + 1:
            if self.npages == 3 and not self.join_gap_used:
                self.join_gap_used = True       # headers, then the live pages: the one gap a joiner sees
            else:
                self.error(t, f"page sequence {self.seq} -> {seq}")
        self.seq = seq
        continued = bool(htype & 1)
        drop = continued and self.skip_continued and not self.partial
        packets, self.partial = B.ogg_packets(buf, pg, self.partial if continued else b"")
        if drop and packets:
            del packets[0]
        self.skip_continued = False
        if self.npages == 1:
            if not (packets and packets[0].startswith(b"OpusHead")):
                self.error(t, "first page is not OpusHead")
            return
        if self.npages == 2 or (packets and packets[0].startswith(b"OpusTags")):
            if self.npages == 2 and not (packets and packets[0].startswith(b"OpusTags")) and not self.partial:
                self.error(t, "second page is not OpusTags")
            return
        for pk in packets:
            self.packets += 1
            n, pcm = self.dec.decode16(pk)
            if n < 0:
                self.error(t, f"opus_decode error {n} on packet {self.packets}")
                continue
            self.decoded += n
            self.pcm += pcm
        if granule >= 0 and packets:
            if self.base is None:
                self.base = granule - self.decoded
            elif granule != self.base + self.decoded:
                self.error(t, f"granule {granule} where {self.base + self.decoded} was expected")
                self.base = granule - self.decoded
            self.pages_g.append(granule)
            self.pages_t.append(t)
        self.levels(t)

    def levels(self, t):
        pcm = self.pcm
        step = HALF * 4
        off = 0
        while len(pcm) - off >= step:
            chunk = bytes(pcm[off:off + step])
            off += step
            r = audioop.rms(chunk, 2)
            sq = r * r
            start = self.half * HALF
            if self.prev_sq is not None and start - HALF >= SKIP_START:
                w = math.sqrt((self.prev_sq + sq) / 2)
                if w < self.min_rms:
                    self.min_rms = w
                if w < FLOOR_RMS:
                    db = 20 * math.log10(max(w, 1e-3) / FS_SINE_RMS)
                    self.low.append((start - HALF, t, round(db, 1)))
            self.prev_sq = sq
            if self.markers is not None:
                self.find_markers(chunk, r, start)
            self.half += 1
        del pcm[:off]

    def find_markers(self, chunk, r, start):
        h = array.array("h")
        h.frombytes(chunk)
        self.mono.extend(h[::2])
        if r > MARK_RMS:
            if self.quiet >= int(B.REARM_S * 100):
                self.pending.append(start)
            self.quiet = 0
        else:
            self.quiet += 1
        end = self.mono_at + len(self.mono)
        while self.pending and end >= self.pending[0] + 2 * HALF + int(0.05 * B.OUT_RATE):
            h0 = self.pending.pop(0)
            a = max(self.mono_at, h0 - HALF)
            onset = None
            for i in range(a, h0 + HALF):
                v = self.mono[i - self.mono_at]
                if v > MARK_PEAK or v < -MARK_PEAK:
                    onset = i
                    break
            if onset is None:
                continue
            x = array.array("f", (v / 32768 for v in self.mono[onset - self.mono_at:onset - self.mono_at + 2400]))
            mid, conf = B.marker_id(x, 1, B.OUT_RATE, 0)
            self.markers.append((onset, mid, round(min(conf, 1e6), 1)))
        keep = B.OUT_RATE * 2
        if len(self.mono) > 2 * keep:
            del self.mono[:len(self.mono) - keep]
            self.mono_at = end - keep


def read_proc(pid):
    """(VmRSS kB, CPU ticks) of the relay; (None, None) once it is gone."""
    try:
        rss = B.proc_status_kb(pid, "VmRSS", None)
        if rss is None:
            return None, None
        return rss, B.proc_ticks(pid)
    except (OSError, ValueError, IndexError):
        return None, None


def cmd_listen(args):
    sel = selectors.DefaultSelector()
    markers = []
    conns = []
    for i in range(args.n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 19)
        s.connect(("127.0.0.1", args.port))
        s.setblocking(False)
        c = Conn(i, s, markers if i == 0 else None)
        conns.append(c)
        sel.register(s, selectors.EVENT_READ, c)
    log(f"{args.n} listeners connected")
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *a: stop.update(now=True))
    signal.signal(signal.SIGINT, lambda *a: stop.update(now=True))
    until = args.until_ns
    samples = []                # (t, rss kB, cpu ticks)
    next_sample = 0
    cpu0 = os.times()
    open_n = len(conns)
    while not stop["now"] and time.monotonic_ns() < until:
        now = time.monotonic_ns()
        if now >= next_sample:
            rss, ticks = read_proc(args.relay_pid)
            if rss is None:
                log("the relay is gone")
                samples.append((now, None, None))
                break
            samples.append((now, rss, ticks))
            next_sample = now + 1_000_000_000
        if open_n == 0:
            time.sleep(0.1)
            continue
        ready = sel.select(0.2)
        got = []
        for key, _ in ready:
            c = key.data
            try:
                data = c.sock.recv(1 << 18)
            except BlockingIOError:
                continue
            except OSError as e:
                data, why = b"", str(e)
            else:
                why = "server closed the connection"
            t = time.monotonic_ns()
            if not data:
                c.t_closed, c.close_reason = t, why
                sel.unregister(c.sock)
                c.sock.close()
                open_n -= 1
                log(f"listener {c.idx} disconnected: {why}")
                continue
            got.append((c, data, t))
        for c, data, t in got:
            c.feed(data, t)
    cpu1 = os.times()
    for c in conns:
        if c.t_closed is None:
            c.sock.close()
    out = {
        "relay_pid": args.relay_pid, "hz": os.sysconf("SC_CLK_TCK"), "samples": samples,
        "listener_cpu_s": (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system), "markers": markers,
        "conns": [{"idx": c.idx, "t_conn": c.t_conn, "t_closed": c.t_closed, "close_reason": c.close_reason,
                   "bytes": c.bytes, "pages": c.npages, "packets": c.packets, "decoded": c.decoded, "base": c.base,
                   "errors": c.errors, "low": c.low, "min_db": round(20 * math.log10(max(c.min_rms, 1e-3) / FS_SINE_RMS), 1),
                   "pages_g": c.pages_g.tolist(), "pages_t": c.pages_t.tolist()} for c in conns],
    }
    B.write_json(args.json, out, atomic=True)
    return 0


# ---------------------------------------------------------------- report
median = B.median


def episodes_of(up):
    eps = {}
    for e in up["events"]:
        if "episode" not in e or e["kind"].endswith("_skipped"):
            continue
        ep = eps.setdefault(e["episode"], {"sched": e["episode"], "kinds": [], "start": e["t"], "end": e["t"]})
        if e["kind"] in ("garbage", "stall", "drop"):
            ep["kinds"].append(e["kind"])
        ep["start"] = min(ep["start"], e["t"])
        ep["end"] = max(ep["end"], e.get("until", e["t"]))
        if e["kind"] == "drop":
            back = [c["t"] for c in up["events"] if c["kind"] == "connect" and c["t"] > e["t"]]
            ep["back_s"] = (back[0] - e["t"]) / 1e9 if back else None
        if e["kind"] == "stall_end":
            ep["backlog"] = e.get("backlog_frames")
    return [eps[k] for k in sorted(eps)]


def cmd_report(args):
    with open(args.upstream) as f:
        up = json.load(f)
    with open(args.listen) as f:
        li = json.load(f)
    with open(args.table) as f:
        table = json.load(f)
    t0 = up["t0"]
    rel = lambda ns: (ns - t0) / 1e9
    nf = up["frames"]
    sent = dict(zip(up["sent"][0::2], up["sent"][1::2]))
    eps = episodes_of(up)
    skipped = [e for e in up["events"] if e["kind"].endswith("_skipped")]
    conns = li["conns"]
    n = len(conns)
    fails = []

    # Source markers by ID, in send order (the MP3 frame holding the marker's first decoded sample).
    by_id = {}
    loops = (max(sent) // nf + 1) if sent else 1
    for lp in range(loops):
        for s, mid in table["markers"]:
            g = lp * nf + (s + B.LAME_DELAY) // B.SPF
            if g in sent:
                by_id.setdefault(mid, []).append((sent[g], g))
    for v in by_id.values():
        v.sort()
    # Listener 0's markers -> granule positions -> the matched source marker (latest with that ID sent before the
    # page holding it reached listener 0).
    c0 = conns[0]
    found = []
    unmatched = 0
    if c0["base"] is not None:
        for j, mid, conf in li["markers"]:
            if mid is None or conf < 3:
                unmatched += 1
                continue
            P = c0["base"] + j
            k = bisect.bisect_right(c0["pages_g"], P)
            if k >= len(c0["pages_t"]):
                continue
            cands = by_id.get(mid, [])
            m = bisect.bisect_right(cands, (c0["pages_t"][k], float("inf"))) - 1
            if m < 0:
                unmatched += 1
                continue
            found.append((P, cands[m][0]))
    first_fault = eps[0]["start"] if eps else t0 + 10 ** 15
    lat = []                    # per listener: [(sent ns, latency s)]
    start_lat = []
    for c in conns:
        series = []
        for P, ts in found:
            if ts < c["t_conn"]:
                continue
            k = bisect.bisect_right(c["pages_g"], P)
            if k < len(c["pages_t"]):
                series.append((ts, (c["pages_t"][k] - ts) / 1e9))
        lat.append(series)
        start_lat.append(median([x for ts, x in series if c["t_conn"] + 5e9 <= ts <= first_fault - 5e8]))

    def window(series, a, b):
        return median([x for ts, x in series if a <= ts <= b])

    # Per episode: latency before/after, silence inside fault +-2 s, worst deviation from the starting value.
    lat_fail = []
    rows = []
    for i, ep in enumerate(eps):
        nxt = eps[i + 1]["start"] if i + 1 < len(eps) else li["samples"][-1][0]
        prev_end = eps[i - 1]["end"] if i else t0
        a_lo, a_hi = ep["end"] + 3e9, min(ep["end"] + 13e9, nxt - 5e8)
        befores, afters, devs, inside = [], [], [], []
        for c, series, s0 in zip(conns, lat, start_lat):
            b = window(series, max(ep["start"] - 10.5e9, prev_end + 3e9), ep["start"] - 5e8)
            a = window(series, a_lo, a_hi)
            befores.append(b)
            afters.append(a)
            d = abs(a - s0)
            devs.append(d)
            if not d <= 0.5:        # NaN (no marker after the fault) fails too
                lat_fail.append((c["idx"], ep["sched"], a, s0))
            if not math.isnan(s0):
                inside.append(sum(1 for _, t, _ in c["low"]
                                  if ep["start"] - 2e9 <= t - s0 * 1e9 <= ep["end"] + 2e9))
        rows.append((ep, median(befores), median(afters), max(devs) if devs else float("nan"), median(inside),
                     sum(1 for a in afters if math.isnan(a))))

    # Dropout windows outside every episode +-2 s.
    outside = []                # (upstream time ns, listener, dB)
    for c, s0 in zip(conns, start_lat):
        shift = (s0 if not math.isnan(s0) else median([x for x in start_lat if not math.isnan(x)])) * 1e9
        for j, t, db in c["low"]:
            u = t - shift
            if not any(ep["start"] - 2e9 <= u <= ep["end"] + 2e9 for ep in eps):
                outside.append((u, c["idx"], db))
    outside.sort()
    spans = []
    for u, idx, db in outside:
        if spans and u - spans[-1]["b"] < 5e8:
            sp = spans[-1]
            sp["b"] = u
            sp["n"] += 1
            sp["who"].add(idx)
            sp["db"] = min(sp["db"], db)
        else:
            spans.append({"a": u, "b": u, "n": 1, "who": {idx}, "db": db})

    # ---- print
    print()
    print(f"soak: {rel(li['samples'][-1][0]):.0f} s after the relay's first upstream connection (t0), {n} listeners "
          f"connected at t0+{rel(min(c['t_conn'] for c in conns)):.1f} s")
    print(f"faults (upstream time after t0; garbage {GARBAGE_S:.0f} s, stall {STALL_S:.0f} s then catch-up, drop = "
          f"close; 'back' = the relay's next connection):")
    hdr = (f"{'#':>2} {'t (s)':>7} {'faults':<21} {'end (s)':>7} {'back':>7}  {'latency s: before':>17} "
           f"{'after':>6} {'max|after-start|':>16}  {'low windows in fault+-2 s (10 ms hop)':>37}")
    print(hdr)
    print("-" * len(hdr))
    for k, (ep, b, a, dev, ins, nodata) in enumerate(rows, 1):
        back = f"+{ep['back_s']:.2f}" if ep.get("back_s") is not None else ("-" if "drop" not in ep["kinds"] else "never")
        note = f"  ({nodata} listeners without markers after)" if nodata else ""
        print(f"{k:>2} {rel(ep['start']):>7.2f} {'+'.join(ep['kinds']):<21} {rel(ep['end']):>7.2f} {back:>7}  "
              f"{b:>17.3f} {a:>6.3f} {dev:>16.3f}  {ins:>13.0f} per listener (~{ins / 100:.2f} s){note}")
    for e in skipped:
        print(f"   {e['kind']} at t0+{rel(e['t']):.2f} s: {e.get('why')}")
    good_start = [x for x in start_lat if not math.isnan(x)]
    print(f"starting latency (connect+5 s .. first fault): median {median(good_start):.3f} s, listeners "
          f"{min(good_start, default=float('nan')):.3f}..{max(good_start, default=float('nan')):.3f} s; "
          f"markers identified by listener 0: {len(found)} ({unmatched} unidentified)")
    if spans:
        print("dropouts outside fault +-2 s (upstream time = arrival - listener's starting latency):")
        for sp in spans[:20]:
            print(f"   t0+{rel(sp['a']):.2f} .. {rel(sp['b']) + 0.02:.2f} s: {sp['n']} windows in {len(sp['who'])} "
                  f"listeners, lowest {sp['db']:.1f} dBFS")
    # RSS and CPU
    smp = [s for s in li["samples"] if s[1] is not None]
    m1 = [s for s in smp if s[0] <= t0 + 60e9]
    rss1 = m1[-1] if m1 and rel(m1[-1][0]) >= 55 else None
    rss_end = smp[-1] if smp else None
    cpu = ((smp[-1][2] - smp[0][2]) / li["hz"]) / ((smp[-1][0] - smp[0][0]) / 1e9) if len(smp) > 1 else float("nan")
    print(f"relay: CPU {100 * cpu:.1f} % of a core over the listening window; listeners' process "
          f"{li['listener_cpu_s']:.0f} CPU s; peak RSS sample {max(s[1] for s in smp) / 1024:.1f} MiB")

    # ---- criteria
    print()
    verdicts = []

    def crit(name, ok, detail):
        verdicts.append(ok)
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")

    closed = [c for c in conns if c["t_closed"] is not None]
    crit("every listener stays connected", not closed,
         f"{n - len(closed)}/{n} connected to the end" +
         "".join(f"; #{c['idx']} at t0+{rel(c['t_closed']):.1f} s ({c['close_reason']})" for c in closed[:5]))
    errs = [(c["idx"], e) for c in conns for e in c["errors"]]
    pk = sum(c["packets"] for c in conns)
    crit("decodes without error", not errs and all(c["decoded"] for c in conns),
         f"{len(errs)} Ogg/Opus errors over {sum(c['pages'] for c in conns)} pages and {pk} packets "
         f"({sum(c['decoded'] for c in conns) / 48000 / n:.0f} s decoded per listener)" +
         "".join(f"; #{i} at t0+{rel(t):.1f} s: {msg}" for i, (t, msg) in errs[:5]))
    crit(f"no 20 ms window below {FLOOR_DBFS:.0f} dBFS outside each fault +-2 s", not outside,
         f"{len(outside)} windows in {len({i for _, i, _ in outside})} listeners (all {n} decoded and judged; "
         f"lowest {min((c['min_db'] for c in conns), default=0):.1f} dBFS anywhere)")
    crit("latency after each fault within 0.5 s of its starting value",
         bool(eps) and not lat_fail and len(good_start) == n,
         f"{len(eps)} episodes x {n} listeners, {len(lat_fail)} failing" +
         (f" (no starting value for {n - len(good_start)})" if len(good_start) < n else "") +
         "".join(f"; #{i} after t0+{t}: {a:.3f} vs {s:.3f} s" for i, t, a, s in lat_fail[:4]))
    if rss1 and rss_end:
        ch = rss_end[1] / rss1[1] - 1
        crit("relay RSS at the end within 5 % of RSS after the first minute", abs(ch) <= 0.05,
             f"{rss1[1] / 1024:.1f} MiB at t0+{rel(rss1[0]):.0f} s, {rss_end[1] / 1024:.1f} MiB at "
             f"t0+{rel(rss_end[0]):.0f} s ({100 * ch:+.1f} %)")
    else:
        crit("relay RSS at the end within 5 % of RSS after the first minute", False,
             "no RSS sample at t0+60 s (run shorter than a minute, or the relay died)")
    ok = all(verdicts)
    print(f"\nsoak: {'PASS' if ok else 'FAIL'} ({sum(verdicts)}/{len(verdicts)} criteria)")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="sub", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    g = sub.add_parser("gen", help="make (or reuse) the test MP3; print its path")
    g.add_argument("--out", default=os.path.join(here, "out"))
    g.add_argument("--length", type=int, required=True, help="seconds of signal")
    u = sub.add_parser("upstream", help="the faulty upstream")
    u.add_argument("--out", default=os.path.join(here, "out"))
    u.add_argument("--length", type=int, required=True)
    u.add_argument("--duration", type=float, required=True, help="seconds after the first connection to stop")
    u.add_argument("--port-file", required=True)
    u.add_argument("--t0-file", required=True)
    u.add_argument("--json", required=True)
    lp = sub.add_parser("listen", help="N raw-TCP listeners")
    lp.add_argument("--port", type=int, required=True)
    lp.add_argument("--n", type=int, required=True)
    lp.add_argument("--until-ns", type=int, required=True, help="CLOCK_MONOTONIC ns to stop at")
    lp.add_argument("--relay-pid", type=int, required=True)
    lp.add_argument("--json", required=True)
    r = sub.add_parser("report", help="the table and the verdicts")
    r.add_argument("--upstream", required=True)
    r.add_argument("--listen", required=True)
    r.add_argument("--table", required=True)
    args = ap.parse_args()
    if args.sub == "gen":
        mp3, table = generate(args.out, args.length)
        print(mp3)
        return 0
    return {"upstream": cmd_upstream, "listen": cmd_listen, "report": cmd_report}[args.sub](args)


if __name__ == "__main__":
    sys.exit(main())
