#!/usr/bin/env python3
"""Holes in an edge's audio after its root restarts: the helper of bench/edge-restart.sh.

bench/edge-restart.sh runs, per build, Icecast 2 fed a looped tone MP3 by ffmpeg, a ROOT radio-relay transcoding
that mount, an EDGE radio-relay relaying the root's raw port (--upstream tcp://), and one listener on the edge (this
file's `listen`); then it SIGKILLs and restarts the root RESTARTS times. This file does the parts that are not
process management:

  * `gen`: the test MP3 (cached): 32 s of a steady tone, 440 Hz left / 1 kHz right, each a sine at -12 dBFS
    (peak 0.251), 44.1 kHz stereo, libmp3lame 128 kb/s CBR without the bit reservoir (every frame decodes by
    itself), no ID3 or Xing/LAME frame. The 1225 frames (exactly 32 s: 1225 x 1152 / 44100) are cut from the middle
    of a longer encode, so neither lame's encoder delay nor its padding is in the file: `ffmpeg -stream_loop -1 -c
    copy` loops it without a silent seam (32 s holds whole cycles of both tones, so the phase runs on too). `gen`
    checks that by decoding the file three times over: no 20 ms window of it is below -40 dBFS.
  * `probe`: connects to a raw port until an OpusHead and a few audio pages arrive (readiness, with a deadline).
  * `listen`: one raw-TCP listener. It writes every byte it receives to seg-N.ogg and, per recv(), the wall-clock
    arrival time (CLOCK_REALTIME ns, the clock of the shell's `date +%s%N` event stamps) and the byte count so far
    to seg-N.times. A closed or reset connection is logged as a disconnect and a new segment is opened (reconnect
    after 0.2 s); SIGTERM ends it.
  * `analyze`: per segment, parses every Ogg page (CRC-32, serials, page sequence, granules against the summed
    packet durations, Opus packet durations from the TOC byte), decodes the file with `ffmpeg -f f32le -ac 2 -ar
    48000`, and takes the RMS of both channels over 20 ms windows (960 samples, no overlap), relative to a
    full-scale sine (AES17: the tone reads -12 dBFS). Windows below -40 dBFS form silent runs. Each window is
    placed in wall-clock time by the arrival of the page holding its first sample (decoded sample + pre-skip ->
    packet -> page -> arrival). The first 200 ms of a segment are not judged (a decoder joining mid-stream).
    Run attribution, by the arrival of its first window: restart k owns [kill_k - 1 s, kill_k+1 - 1 s) (the last
    one up to the end); before kill_1 - 1 s is the baseline. In restart k's span the longest run is the outage
    (expected: one run of about the 3 s the root is down plus the edge's reconnect); every other run in a restart's
    span is a HOLE (its time is given from the root's restart, i.e. kill + the down time). Runs in the baseline are
    listed apart, not as holes (the listener's join burst can hold the edge's own start-up silence). The tone never
    falls below -12 dBFS, so the expected result is exactly one silent run per restart and no holes. `oggz-validate`
    runs on each segment (a missing EOS, the capture's cut end, is its one expected complaint). The edge's log
    gives the seconds of upstream audio it dropped beyond its lead.
  * `table`: the builds' JSON reports side by side.

Python 3.9+, standard library only (bench/benchlib.py: MP3 framing, Ogg pages and their CRC, Opus packet durations);
ffmpeg and oggz-validate as external tools.
"""
import argparse
import array
import bisect
import json
import math
import operator
import os
import select
import signal
import socket
import statistics
import struct
import subprocess
import sys
import time

from benchlib import logger, mp3_frame_spans, ogg_packets, ogg_page_at, ogg_page_crc, opus_samples, write_json

RATE = 48000
WIN = 960                    # 20 ms at 48 kHz
SILENT_DB = -40.0
SKIP_WINDOWS = 10            # the first 200 ms of a segment are not judged
TONE_PEAK = 10 ** (-12 / 20)
LOOP_FRAMES = 1225           # exactly 32 s of MPEG-1 Layer III frames at 44.1 kHz
GEN_VERSION = "v1"


log = logger("edge_restart")


# ---------------------------------------------------------------- levels

def window_levels(pcm):
    """dBFS (AES17) of every whole 20 ms window of interleaved stereo float samples."""
    out = []
    n = len(pcm) // (2 * WIN)
    mul = operator.mul
    for w in range(n):
        chunk = pcm[w * 2 * WIN:(w + 1) * 2 * WIN]
        ms = sum(map(mul, chunk, chunk)) / (2 * WIN)
        out.append(20 * math.log10(math.sqrt(ms) * math.sqrt(2)) if ms > 0 else -200.0)
    return out


def silent_runs(levels, skip=0):
    """[(first window, window count)] of consecutive windows below SILENT_DB, from window `skip` on."""
    runs, start = [], None
    for i in range(skip, len(levels)):
        if levels[i] < SILENT_DB:
            if start is None:
                start = i
        elif start is not None:
            runs.append((start, i - start))
            start = None
    if start is not None:
        runs.append((start, len(levels) - start))
    return runs


def decode_f32(path_or_bytes, fmt=None, timeout=120):
    cmd = ["ffmpeg", "-nostdin", "-v", "error"]
    if fmt:
        cmd += ["-f", fmt]
    cmd += ["-i", "pipe:0" if isinstance(path_or_bytes, bytes) else path_or_bytes,
            "-f", "f32le", "-ac", "2", "-ar", str(RATE), "pipe:1"]
    p = subprocess.run(cmd, input=path_or_bytes if isinstance(path_or_bytes, bytes) else None,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    pcm = array.array("f")
    pcm.frombytes(p.stdout[:len(p.stdout) // 4 * 4])
    if sys.byteorder != "little":
        pcm.byteswap()
    return pcm, p.returncode, p.stderr.decode("utf-8", "replace").strip()


# ---------------------------------------------------------------- gen

def cmd_gen(args):
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"edge-restart-tone-{GEN_VERSION}.mp3")
    if os.path.exists(path):
        print(path)
        return 0
    raw = path + ".full.mp3"
    a = f"{TONE_PEAK:.6f}"
    expr = f"aevalsrc={a}*sin(2*PI*440*t)|{a}*sin(2*PI*1000*t):s=44100:d=40"
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", expr, "-c:a", "libmp3lame",
                    "-b:a", "128k", "-reservoir", "0", "-write_xing", "0", "-id3v2_version", "0", "-f", "mp3", raw],
                   check=True, timeout=120)
    with open(raw, "rb") as f:
        data = f.read()
    os.unlink(raw)
    frames = mp3_frame_spans(data, strict=True)
    first = 100   # 2.6 s in: far from lame's start; the cut ends 2.6 s + 32 s in, far from its end
    if len(frames) < first + LOOP_FRAMES + 50:
        raise SystemExit("edge_restart: the encode is too short")
    cut = data[frames[first][0]:frames[first + LOOP_FRAMES - 1][1]]
    pcm, rc, err = decode_f32(cut * 3, fmt="mp3")
    levels = window_levels(pcm)
    runs = silent_runs(levels, skip=2)   # the decoder's start-up
    if rc != 0 or runs or not levels:
        raise SystemExit(f"edge_restart: the looped tone has silent windows {runs[:5]} (ffmpeg rc {rc}: {err})")
    lo, hi = min(levels[2:]), max(levels[2:])
    with open(path + ".tmp", "wb") as f:
        f.write(cut)
    os.replace(path + ".tmp", path)
    log(f"made {path}: {LOOP_FRAMES} frames, 32 s; looped x3 decodes to windows of {lo:.1f} to {hi:.1f} dBFS")
    print(path)
    return 0


# ---------------------------------------------------------------- probe, listen

def cmd_probe(args):
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        try:
            s = socket.create_connection(("127.0.0.1", args.port), timeout=1)
        except OSError:
            time.sleep(0.2)
            continue
        buf = b""
        try:
            s.settimeout(0.5)
            while time.monotonic() < deadline:
                try:
                    d = s.recv(65536)
                except socket.timeout:
                    continue
                if not d:
                    break
                buf += d
                if b"OpusHead" in buf and buf.count(b"OggS") >= 2 + args.pages:
                    return 0
        except OSError:
            pass
        finally:
            s.close()
        time.sleep(0.2)
    log(f"no audio on 127.0.0.1:{args.port} within {args.timeout} s")
    return 1


def cmd_listen(args):
    stop = [False]

    def on_term(*_):
        stop[0] = True
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    os.makedirs(args.dir, exist_ok=True)
    deadline = time.monotonic() + args.max_seconds
    segments, events = [], []
    seg = 0
    while not stop[0] and time.monotonic() < deadline:
        try:
            s = socket.create_connection(("127.0.0.1", args.port), timeout=2)
        except OSError as e:
            events.append({"t": time.time_ns(), "kind": "connect_failed", "why": str(e)})
            time.sleep(0.2)
            continue
        s.setblocking(False)
        name = f"seg-{seg}"
        rec = {"ogg": name + ".ogg", "times": name + ".times", "connected": time.time_ns(), "bytes": 0}
        segments.append(rec)
        events.append({"t": rec["connected"], "kind": "connected", "segment": seg})
        why = None
        with open(os.path.join(args.dir, rec["ogg"]), "wb") as fo, \
                open(os.path.join(args.dir, rec["times"]), "w") as ft:
            while not stop[0] and time.monotonic() < deadline:
                r, _, _ = select.select([s], [], [], 0.5)
                if not r:
                    continue
                try:
                    d = s.recv(1 << 18)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as e:
                    why = f"error: {e}"
                    break
                t = time.time_ns()
                if not d:
                    why = "closed by the server"
                    break
                fo.write(d)
                rec["bytes"] += len(d)
                ft.write(f"{t} {rec['bytes']}\n")
                if seg == 0 and rec["bytes"] == len(d):
                    fo.flush()
                    with open(os.path.join(args.dir, "ready"), "w") as fr:
                        fr.write(f"{t}\n")
        s.close()
        rec["ended"] = time.time_ns()
        rec["end"] = why or "stopped"
        if why:
            events.append({"t": rec["ended"], "kind": "disconnect", "why": why, "segment": seg})
            log(f"listener disconnected: {why}")
            seg += 1
            time.sleep(0.2)
    write_json(os.path.join(args.dir, "listen.json"), {
        "segments": segments, "events": events,
        "disconnects": sum(1 for e in events if e["kind"] == "disconnect")}, indent=1)
    return 0


# ---------------------------------------------------------------- analyze

def parse_ogg(data):
    """Pages and packets of an Ogg Opus capture, with every check the analysis reports."""
    st = {"pages": 0, "crc_errors": 0, "framing_errors": 0, "links": 0, "serials": 0, "seq_gaps": 0,
          "granule_jumps": 0, "bad_packets": 0, "truncated_tail_bytes": 0}
    pages, packets = [], []   # page: (end offset); packet: (page index, link, samples)
    links = []                # per link: {"serial", "preskip"}
    pos, partial, cur = 0, b"", None
    seen_serials = set()
    last_seq, seq_joins = None, 0
    link_pos, gran_off = 0, None
    hdr_left = 0
    while pos < len(data):
        if data[pos:pos + 4] != b"OggS":
            nxt = data.find(b"OggS", pos + 1)
            st["framing_errors"] += 1
            if nxt < 0:
                break
            pos = nxt
            continue
        pg = ogg_page_at(data, pos)
        if pg is None:
            st["truncated_tail_bytes"] = len(data) - pos
            break
        htype, granule, serial, seq, end = pg.htype, pg.granule, pg.serial, pg.seq, pg.end
        if ogg_page_crc(data[pos:end], pg.header_len) != pg.crc:
            st["crc_errors"] += 1
            pos += 4
            continue
        st["pages"] += 1
        pi = len(pages)
        pages.append(end)
        if htype & 2 or serial not in seen_serials and cur is None:
            seen_serials.add(serial)
            cur = serial
            links.append({"serial": serial, "preskip": 0})
            link_pos, gran_off, hdr_left, last_seq, partial = 0, None, 2, None, b""
        elif serial != cur:
            st["serials"] += 1   # a page of another stream without a BOS: not followed
            pos = end
            continue
        if last_seq is not None and seq != (last_seq + 1) & 0xFFFFFFFF:
            seq_joins += 1
        last_seq = seq
        complete, partial = ogg_packets(data, pg, partial if htype & 1 else b"")
        for pkt in complete:
            if hdr_left:
                if hdr_left == 2 and pkt[:8] == b"OpusHead" and len(pkt) >= 12:
                    links[-1]["preskip"] = struct.unpack("<H", pkt[10:12])[0]
                hdr_left -= 1
                continue
            n = opus_samples(pkt)
            if n == 0 or n > 5760:
                st["bad_packets"] += 1
                n = 0
            packets.append((pi, len(links) - 1, n))
            link_pos += n
        if granule != -1 and not hdr_left and link_pos > 0:
            off = granule - link_pos
            if gran_off is None:
                gran_off = off
            elif off != gran_off:
                st["granule_jumps"] += 1
                gran_off = off
        pos = end
    st["links"] = len(links)
    st["serials"] += len(seen_serials)
    st["seq_gaps"] = max(0, seq_joins - len(links))   # one join gap per link (headers, then the burst)
    return pages, packets, links, st


def analyze_segment(d, seg):
    with open(os.path.join(d, seg["ogg"]), "rb") as f:
        data = f.read()
    times = []
    with open(os.path.join(d, seg["times"])) as f:
        for line in f:
            t, b = line.split()
            times.append((int(b), int(t)))
    offs = [b for b, _ in times]
    pages, packets, links, st = parse_ogg(data)

    def arrival(page_index):
        i = bisect.bisect_left(offs, pages[page_index])
        return times[min(i, len(times) - 1)][1]

    # The decoder's output, packet by packet: each link's pre-skip is dropped at its start.
    starts, pkt_page = [], []
    out = 0
    link, in_link = -1, 0
    for pi, li, n in packets:
        if li != link:
            link, in_link = li, 0
        skip = max(0, min(n, links[li]["preskip"] - in_link))
        starts.append(out)
        pkt_page.append(pi)
        out += n - skip
        in_link += n
    pcm, rc, err = decode_f32(os.path.join(d, seg["ogg"]))
    decoded = len(pcm) // 2
    levels = window_levels(pcm)

    def window_time(w):
        if not starts:
            return seg["connected"]
        i = max(0, bisect.bisect_right(starts, w * WIN) - 1)
        return arrival(pkt_page[i])

    runs = [{"t": window_time(a), "t_end": window_time(a + n - 1), "windows": n, "ms": n * 20}
            for a, n in silent_runs(levels, SKIP_WINDOWS)]
    try:
        v = subprocess.run(["oggz-validate", os.path.join(d, seg["ogg"])], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        text = v.stdout.decode("utf-8", "replace").strip()
        errors = [ln for ln in text.splitlines()[1:] if ln.strip()]
        # A capture the listener ended has no EOS page: oggz-validate's one complaint about a cut stream.
        cut = v.returncode != 0 and errors and all(ln.rstrip().endswith("missing *** eos") for ln in errors)
        oggz = {"rc": 0 if cut else v.returncode, "out": text, "verdict": "ok (no EOS: capture cut)" if cut else
                "ok" if v.returncode == 0 else "; ".join(errors[:3]) or f"rc {v.returncode}"}
    except (OSError, subprocess.TimeoutExpired) as e:
        oggz = {"rc": -1, "out": f"not run: {e}", "verdict": f"not run: {e}"}
    return {"runs": runs, "windows": len(levels), "decoded_s": decoded / RATE, "expected_s": out / RATE,
            "ffmpeg_rc": rc, "ffmpeg_err": err[:500], "stream": st, "oggz": oggz,
            "first_t": window_time(0) if levels else None,
            "wall_s": (times[-1][1] - times[0][1]) / 1e9 if times else 0,
            "min_db": min(levels[SKIP_WINDOWS:], default=None), "median_db":
            statistics.median(levels[SKIP_WINDOWS:]) if len(levels) > SKIP_WINDOWS else None}


def edge_dropped(path):
    """Seconds of upstream audio the edge's log says it dropped (beyond its lead), summed over the run."""
    total = 0.0
    if path and os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                i = line.find(" dropped ")
                if i >= 0 and "of upstream audio" in line:
                    try:
                        total += float(line[i + 9:].split()[0])
                    except ValueError:
                        pass
    return round(total, 1)


def edge_connects(path):
    """Seconds of the day (the log's local time) of the edge's "upstream connected" lines."""
    out = []
    if path and os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                if " upstream connected: " in line:
                    try:
                        h, m, sec = line.split()[0].split(":")
                        out.append(int(h) * 3600 + int(m) * 60 + float(sec))
                    except ValueError:
                        pass
    return out


def day_seconds(ns):
    lt = time.localtime(ns // 1_000_000_000)   # the local time radio-relay logs in
    return lt.tm_hour * 3600 + lt.tm_min * 60 + lt.tm_sec + (ns % 1_000_000_000) / 1e9


def cmd_analyze(args):
    d = args.dir
    with open(os.path.join(d, "listen.json")) as f:
        lj = json.load(f)
    events = []
    with open(args.events) as f:
        for line in f:
            p = line.split()
            if p:
                events.append((p[0], int(p[1]), p[2:]))
    kills = [t for k, t, _ in events if k == "kill"]
    starts = {int(x[0]): t for k, t, x in events if k == "start" and x}   # restart k: the root started again
    end = max([t for k, t, _ in events if k == "end"] or [time.time_ns()])
    notes = [" ".join([k] + x) for k, _, x in events if k == "note"]
    segs = [analyze_segment(d, s) for s in lj["segments"] if s["bytes"] > 0]
    runs = sorted((r for s in segs for r in s["runs"]), key=lambda r: r["t"])
    bounds = [k - 1_000_000_000 for k in kills]

    def owner(t):
        return bisect.bisect_right(bounds, t) - 1   # -1: the baseline

    connects = edge_connects(args.edge_log)
    restarts = []
    for k, kill in enumerate(kills):
        mine = [r for r in runs if owner(r["t"]) == k]
        outage = max(mine, key=lambda r: r["windows"], default=None)
        if outage is not None and outage["ms"] < 500:
            outage = None   # a short run is not the outage: no outage was heard
        start = starts.get(k + 1, kill)
        holes = [{"at_s": round((r["t"] - start) / 1e9, 2), "ms": r["ms"]} for r in mine if r is not outage]
        # When the edge was back on the root: its first "upstream connected" after the root's restart, in its span.
        t0, t1 = day_seconds(start), day_seconds(kills[k + 1] if k + 1 < len(kills) else end)
        back = [(c - t0) % 86400 for c in connects if (c - t0) % 86400 <= (t1 - t0) % 86400]
        restarts.append({"k": k + 1, "outage_ms": outage["ms"] if outage else None,
                         "edge_back_s": round(min(back), 2) if back else None,
                         "outage_at_s": round((outage["t"] - kill) / 1e9, 2) if outage else None,
                         "holes": holes})
    baseline = [{"at_s": round((r["t"] - (kills[0] if kills else end)) / 1e9, 2), "ms": r["ms"]}
                for r in runs if owner(r["t"]) < 0]
    st_total = {}
    for s in segs:
        for key, v in s["stream"].items():
            st_total[key] = st_total.get(key, 0) + v
    oggz_fail = [s["oggz"] for s in segs if s["oggz"]["rc"] != 0]
    rep = {
        "label": args.label, "binary": args.binary, "version": args.version,
        "restarts": restarts, "baseline_holes": baseline, "notes": notes,
        "disconnects": lj["disconnects"], "segments": len(lj["segments"]),
        "listen_events": [e for e in lj["events"] if e["kind"] != "connected"][:20],
        "outage_median_s": statistics.median([r["outage_ms"] / 1000 for r in restarts if r["outage_ms"]])
        if any(r["outage_ms"] for r in restarts) else None,
        "holes": sum(len(r["holes"]) for r in restarts),
        "hole_ms": sum(h["ms"] for r in restarts for h in r["holes"]),
        "edge_dropped_s": edge_dropped(args.edge_log),
        "restarts_with_holes": sum(1 for r in restarts if r["holes"]),
        "no_outage": sum(1 for r in restarts if r["outage_ms"] is None),
        "stream": st_total,
        "oggz": ("; ".join(o["verdict"] for o in oggz_fail) if oggz_fail else
                 "; ".join(sorted({s["oggz"]["verdict"] for s in segs})) if segs else "no audio"),
        "oggz_detail": [s["oggz"] for s in segs],
        "decoded_s": round(sum(s["decoded_s"] for s in segs), 2),
        "expected_s": round(sum(s["expected_s"] for s in segs), 2),
        "wall_s": round(sum(s["wall_s"] for s in segs), 2),
        "ffmpeg": [s["ffmpeg_err"] for s in segs if s["ffmpeg_rc"] or s["ffmpeg_err"]],
        "median_db": segs[0]["median_db"] if segs else None,
        "kills": len(kills),
    }
    write_json(args.json, rep, indent=1)
    print_build(rep, args.play)
    return 0


def fmt_holes(holes):
    return ", ".join(f"{h['ms']} ms @{h['at_s']:+.1f}s" for h in holes) or "-"


def print_build(rep, play):
    print(f"== {rep['label']}: {rep['binary']} ({rep['version']})")
    print(f"   {'restart':>7}  {'outage':>8}  {'at':>6}  {'edge back':>9}  {'holes':>5}  hole lengths (time from the "
          f"root's restart)")
    for r in rep["restarts"]:
        o = f"{r['outage_ms'] / 1000:.2f} s" if r["outage_ms"] else "none"
        at = f"{r['outage_at_s']:+.1f}s" if r["outage_at_s"] is not None else "-"
        hl = fmt_holes(r["holes"])
        back = f"+{r['edge_back_s']:.1f}s" if r.get("edge_back_s") is not None else "not back"
        print(f"   {r['k']:>7}  {o:>8}  {at:>6}  {back:>9}  {len(r['holes']):>5}  {hl}")
    print(f"   before the first kill (the listener's join burst may hold the edge's start-up silence; not counted): "
          f"{len(rep['baseline_holes'])} silent runs {fmt_holes(rep['baseline_holes'])}")
    print(f"   totals: {rep['holes']} holes, {rep['hole_ms']} ms, in {rep['restarts_with_holes']} of "
          f"{len(rep['restarts'])} restarts; outage median {rep['outage_median_s']} s; the edge's log: "
          f"{rep['edge_dropped_s']} s of upstream audio dropped")
    s = rep["stream"]
    print(f"   stream: {s.get('pages', 0)} pages, CRC errors {s.get('crc_errors', 0)}, framing errors "
          f"{s.get('framing_errors', 0)}, links {s.get('links', 0)}, page sequence gaps {s.get('seq_gaps', 0)}, "
          f"granule jumps {s.get('granule_jumps', 0)}, bad packets {s.get('bad_packets', 0)}; decoded "
          f"{rep['decoded_s']} s (packets say {rep['expected_s']} s) in {rep['wall_s']} s of arrivals; tone median "
          f"{rep['median_db']:.1f} dBFS" if rep["median_db"] is not None else "   stream: no audio")
    print(f"   listener disconnects {rep['disconnects']}; oggz-validate: {rep['oggz']}")
    print("   (outage: the longest silent run in the restart's span, 'at' its start from the kill; edge back: the edge's "
          "log, its upstream reconnect from the root's restart)")
    for n in rep["notes"]:
        print(f"   note: {n}")
    for e in rep["ffmpeg"]:
        print(f"   ffmpeg decode: {e.splitlines()[0] if e else 'failed'}")


def cmd_table(args):
    reps = []
    for p in args.json:
        with open(p) as f:
            reps.append(json.load(f))

    def med(r):
        return f"{r['outage_median_s']:.2f} s" if r["outage_median_s"] is not None else "-"
    rows = [
        ("binary", lambda r: r["binary"]),
        ("restarts (root SIGKILLs)", lambda r: str(r["kills"])),
        ("outage median (longest run per restart)", med),
        ("restarts without an outage run", lambda r: str(r["no_outage"])),
        ("edge back on the root, median s after restart", lambda r: "-" if not any(
            x.get("edge_back_s") is not None for x in r["restarts"]) else "{:.1f} (max {})".format(
            statistics.median([x["edge_back_s"] for x in r["restarts"] if x.get("edge_back_s") is not None]),
            "not back" if any(x.get("edge_back_s") is None for x in r["restarts"]) else
            max(x["edge_back_s"] for x in r["restarts"]))),
        ("holes total (silent runs besides the outage)", lambda r: str(r["holes"])),
        ("hole windows total (20 ms) / ms", lambda r: f"{r['hole_ms'] // 20} / {r['hole_ms']}"),
        ("restarts with holes", lambda r: str(r["restarts_with_holes"])),
        ("silent runs before the first kill (not holes)", lambda r: str(len(r["baseline_holes"]))),
        ("edge log: upstream audio dropped, s", lambda r: str(r.get("edge_dropped_s", "-"))),
        ("listener disconnects", lambda r: str(r["disconnects"])),
        ("oggz-validate", lambda r: r["oggz"] if len(r["oggz"]) <= 30 else r["oggz"][:27] + "..."),
        ("stream errors (CRC, framing, seq, granule)", lambda r: "{} {} {} {}".format(
            r["stream"].get("crc_errors", 0), r["stream"].get("framing_errors", 0), r["stream"].get("seq_gaps", 0),
            r["stream"].get("granule_jumps", 0))),
        ("decoded s / arrival s", lambda r: f"{r['decoded_s']} / {r['wall_s']}"),
    ]
    w0 = max(len(n) for n, _ in rows)
    cols = [[f(r) for _, f in rows] for r in reps]
    ws = [max(len(r["label"]), *(len(c) for c in col[1:])) for r, col in zip(reps, cols)]
    print(f"{'':<{w0}}  " + "  ".join(f"{r['label']:<{w}}" for r, w in zip(reps, ws)))
    for i, (name, _) in enumerate(rows):
        if i == 0:
            continue
        print(f"{name:<{w0}}  " + "  ".join(f"{col[i]:<{w}}" for col, w in zip(cols, ws)).rstrip())
    for r in reps:
        print(f"{r['label']}: {r['binary']}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--out", required=True)
    p = sub.add_parser("probe")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--timeout", type=float, default=15)
    p.add_argument("--pages", type=int, default=3)
    li = sub.add_parser("listen")
    li.add_argument("--port", type=int, required=True)
    li.add_argument("--dir", required=True)
    li.add_argument("--max-seconds", type=float, required=True)
    an = sub.add_parser("analyze")
    an.add_argument("--dir", required=True)
    an.add_argument("--events", required=True)
    an.add_argument("--label", required=True)
    an.add_argument("--binary", default="")
    an.add_argument("--version", default="")
    an.add_argument("--play", type=float, default=12)
    an.add_argument("--json", required=True)
    an.add_argument("--edge-log", default="")
    t = sub.add_parser("table")
    t.add_argument("json", nargs="+")
    args = ap.parse_args()
    return {"gen": cmd_gen, "probe": cmd_probe, "listen": cmd_listen, "analyze": cmd_analyze,
            "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
