#!/usr/bin/env python3
"""HTTP listeners of one mount, live or time-shifted, in one process on loopback, and the server's cost while they
listen: the client of bench/timeshift.sh.

    python3 bench/timeshift.py listen --port P --mount /NAME.opus -n 200 [--offsets LO:HI] [--ramp 10]
                               [--settle 5] [--hold 60] [--sources 40] [--first-source 2] [--server-pid PID]
                               [--status-port S] [--label TEXT] [--json FILE]
    python3 bench/timeshift.py summary FILE.json...

listen: N listeners connect over --ramp s (evenly), listener i from 127.0.0.(first-source + i mod sources) (the
server caps time-shifted listeners per address), each one `GET MOUNT` (live), or with --offsets `GET
MOUNT?offset=K`, K spread evenly over LO…HI whole seconds; all are closed --hold s after the ramp's end. Per
listener: the status (200 or not), the time from its connect() to the first byte after the HTTP head ("first byte")
and to its first whole audio page (after OpusHead and OpusTags), the gaps between two receives that brought bytes
(a stall: > 500 ms), whether it ended before we closed it (an early close), its Ogg stream checked page by page
(capture pattern, CRC, one serial per link, page numbers contiguous but for one join gap after the headers,
granules never going back), and in the steady window (from ramp + settle to ramp + hold): the bytes it received per
second and the audio seconds (granules) it received per wall second. Over the same steady window, and over the ramp
(0 to ramp + settle) apart: the server's CPU (/proc/PID/stat, and per thread), its RSS, its reads
(/proc/PID/io read_bytes: from the disk; rchar: every read() and pread(), page cache included) and the status's
time_shift_read_bytes and time_shifted. With --json, everything as JSON.

summary: the side-by-side table of bench/timeshift.sh from the JSON files of its rounds: medians over the rounds of
each kind, and the ratio shifted/live.

Python 3.9+ standard library only (ctypes to libogg for the CRC when it loads). Loopback only.
"""

import argparse
import errno
import json
import selectors
import socket
import statistics
import sys
import time
import urllib.request

from benchlib import CLK_TCK, ogg_page_at, ogg_page_crc, pct, proc_status_kb, self_cpu_seconds, write_json

STALL = 0.5


def server_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def server_threads(pid):
    """{thread name: ticks} (threads of one name summed)."""
    import os
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                s = f.read()
        except OSError:
            continue
        name = s[s.index("(") + 1:s.rindex(")")]
        fields = s[s.rindex(")") + 2:].split()
        out[name] = out.get(name, 0) + int(fields[11]) + int(fields[12])
    return out


def server_io(pid):
    out = {}
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            key, value = line.split(":")
            out[key.strip()] = int(value)
    return out


def archive_status(port):
    """The first station's archive object of /status.json (None without a status port or on a failure)."""
    if not port:
        return None
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status.json", timeout=3) as r:
            status = json.load(r)
        return status["stations"][0].get("archive") or {}
    except (OSError, ValueError, KeyError, IndexError):
        return None


class Snapshot:
    """The server's counters at one moment."""

    def __init__(self, pid, status_port):
        self.t = time.monotonic()
        self.ticks = server_ticks(pid) if pid else 0
        self.threads = server_threads(pid) if pid else {}
        self.io = server_io(pid) if pid else {}
        self.rss_kb = proc_status_kb(pid, "VmRSS") if pid else 0
        self.archive = archive_status(status_port)
        self.client_cpu = self_cpu_seconds()


def window(a, b):
    """The server's figures between two snapshots."""
    seconds = b.t - a.t
    threads = {name: (ticks - a.threads.get(name, 0)) / CLK_TCK / seconds for name, ticks in b.threads.items()}
    shift = lambda key: ((b.archive or {}).get(key, 0) or 0) - ((a.archive or {}).get(key, 0) or 0)
    return {
        "seconds": seconds,
        "cpu_cores": (b.ticks - a.ticks) / CLK_TCK / seconds,
        "threads_cores": dict(sorted(threads.items(), key=lambda kv: -kv[1])),
        "rss_kb_end": b.rss_kb,
        "read_bytes_per_s": (b.io.get("read_bytes", 0) - a.io.get("read_bytes", 0)) / seconds,
        "rchar_per_s": (b.io.get("rchar", 0) - a.io.get("rchar", 0)) / seconds,
        "syscr_per_s": (b.io.get("syscr", 0) - a.io.get("syscr", 0)) / seconds,
        "time_shift_read_bytes_per_s": shift("time_shift_read_bytes") / seconds,
        "time_shift_refused": shift("time_shift_refused"),
        "time_shifted_end": (b.archive or {}).get("time_shifted"),
        "client_cores": (b.client_cpu - a.client_cpu) / seconds,
    }


class Listener:
    def __init__(self, index, source, path):
        self.index = index
        self.source = source
        self.path = path
        self.sock = None
        self.state = "waiting"   # waiting, connecting, head, body, done
        self.head = b""
        self.status = None
        self.error = None        # why it ended before we closed it (an early close), or could not connect
        self.t_connect = None
        self.t_first_byte = None
        self.t_first_audio = None
        self.last_rx = None
        self.gaps = []           # gaps > STALL between receives (s)
        self.gap_at = []         # when each one started (s after the first connect)
        self.longest_gap = 0.0
        self.bytes_body = 0
        self.buf = bytearray()
        self.pages = 0
        self.ogg_errors = {}
        self.serial = None
        self.seq = None
        self.granule = None
        self.headers_left = 0    # header pages still to come in this link
        self.join_gaps = 0
        self.links = 0
        self.audio_granule = None  # the latest audio page's granule, in the current link
        self.steady = {}         # "start"/"end": (bytes_body, granule or None, link count)

    def error_count(self, kind):
        self.ogg_errors[kind] = self.ogg_errors.get(kind, 0) + 1

    def feed(self, data, now):
        """Bytes of the body: pages checked as they complete."""
        self.buf += data
        pos = 0
        while True:
            if len(self.buf) - pos < 27:
                break
            if self.buf[pos:pos + 4] != b"OggS":
                self.error_count("capture")
                found = self.buf.find(b"OggS", pos + 1)
                if found < 0:
                    pos = max(pos, len(self.buf) - 3)
                    break
                pos = found
                continue
            page = ogg_page_at(self.buf, pos)
            if page is None:
                break
            self.page(page, now)
            pos = page.end
        del self.buf[:pos]

    def page(self, page, now):
        raw = bytes(self.buf[page.offset:page.end])
        if ogg_page_crc(raw, page.header_len) != page.crc:
            self.error_count("crc")
        self.pages += 1
        bos = page.htype & 2
        if bos:
            if self.serial is not None and self.headers_left == 0 and not self.eos_seen:
                self.error_count("link_without_eos")
            self.serial, self.seq, self.granule = page.serial, page.seq, None
            self.headers_left = 1   # OpusTags after OpusHead (one page each as radio-relay writes them)
            self.links += 1
            self.eos_seen = False
            self.joined = False
            self.audio_granule = None
            return
        if self.serial is None:
            self.error_count("no_headers")
            self.serial, self.seq = page.serial, page.seq
        if page.serial != self.serial:
            self.error_count("serial")
        expected = (self.seq + 1) & 0xFFFFFFFF
        if page.seq != expected:
            if self.headers_left == 0 and not self.joined:
                self.join_gaps += 1   # the live join: the burst's pages after the headers
            else:
                self.error_count("sequence")
        self.seq = page.seq
        if self.headers_left > 0:
            self.headers_left -= 1
            return
        self.joined = True
        if page.granule != -1 and page.granule != 0xFFFFFFFFFFFFFFFF:
            if self.granule is not None and page.granule < self.granule:
                self.error_count("granule")
            self.granule = page.granule
            self.audio_granule = page.granule
            if self.t_first_audio is None:
                self.t_first_audio = now
                self.first_granule = page.granule
        if page.htype & 4:
            self.eos_seen = True

    eos_seen = False
    joined = False
    first_granule = None

    def mark(self, key):
        self.steady[key] = (self.bytes_body, self.audio_granule, self.links)


def run_listen(args):
    sources = [f"127.0.0.{args.first_source + k}" for k in range(args.sources)]
    if args.first_source < 1 or args.first_source + args.sources - 1 > 254:
        sys.exit("timeshift.py: the sources must lie within 127.0.0.1 … 127.0.0.254")
    offsets = None
    if args.offsets:
        lo, hi = (int(v) for v in args.offsets.split(":"))
        offsets = [lo + round(i * (hi - lo) / max(1, args.n - 1)) for i in range(args.n)]
    listeners = []
    for i in range(args.n):
        path = args.mount if offsets is None else f"{args.mount}?offset={offsets[i]}"
        listeners.append(Listener(i, sources[i % len(sources)], path))
    sel = selectors.DefaultSelector()
    t0 = time.monotonic()
    wall_start = time.time()
    start_at = [t0 + args.ramp * i / args.n for i in range(args.n)]
    end = t0 + args.ramp + args.hold
    steady_start = t0 + args.ramp + args.settle
    snaps = {"start": Snapshot(args.server_pid, args.status_port)}
    next_i = 0
    request = "GET {} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nUser-Agent: radio-relay-bench-timeshift\r\n" \
              "Connection: close\r\n\r\n"

    def close(listener, error=None):
        if listener.state == "done":
            return
        if error is not None and listener.error is None:
            listener.error = error
        try:
            sel.unregister(listener.sock)
        except (KeyError, ValueError):
            pass
        listener.sock.close()
        listener.state = "done"

    while True:
        now = time.monotonic()
        while next_i < args.n and start_at[next_i] <= now:
            listener = listeners[next_i]
            next_i += 1
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.bind((listener.source, 0))
            listener.sock = s
            listener.t_connect = time.monotonic()
            code = s.connect_ex(("127.0.0.1", args.port))
            if code not in (0, errno.EINPROGRESS):
                listener.state = "done"
                listener.error = f"connect: {errno.errorcode.get(code, code)}"
                s.close()
                continue
            listener.state = "connecting"
            sel.register(s, selectors.EVENT_WRITE, listener)
        if "steady_start" not in snaps and now >= steady_start:
            snaps["steady_start"] = Snapshot(args.server_pid, args.status_port)
            for listener in listeners:
                listener.mark("start")
        if now >= end:
            break
        wake = min(end, start_at[next_i] if next_i < args.n else end,
                   steady_start if "steady_start" not in snaps else end)
        for key, events in sel.select(max(0.0, min(0.05, wake - now))):
            listener = key.data
            now = time.monotonic()
            if listener.state == "connecting":
                code = listener.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    close(listener, f"connect: {errno.errorcode.get(code, code)}")
                    continue
                try:
                    listener.sock.send(request.format(listener.path, args.port).encode())
                except OSError as e:
                    close(listener, f"send: {e}")
                    continue
                listener.state = "head"
                sel.modify(listener.sock, selectors.EVENT_READ, listener)
                continue
            try:
                data = listener.sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError as e:
                close(listener, f"recv: {e.strerror}")
                continue
            if not data:
                close(listener, "closed by the server")
                continue
            if listener.state == "head":
                listener.head += data
                cut = listener.head.find(b"\r\n\r\n")
                if cut < 0:
                    if len(listener.head) > 16384:
                        close(listener, "head too long")
                    continue
                line = listener.head[:listener.head.find(b"\r\n")].decode("latin-1")
                parts = line.split()
                listener.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1
                data = listener.head[cut + 4:]
                listener.head = listener.head[:cut + 4]
                if listener.status != 200:
                    close(listener, f"status {listener.status}")
                    continue
                listener.state = "body"
                if not data:
                    continue
            if listener.t_first_byte is None:
                listener.t_first_byte = now
            elif now - listener.last_rx > STALL:
                listener.gaps.append(now - listener.last_rx)
                listener.gap_at.append(round(listener.last_rx - t0, 3))
            if listener.last_rx is not None:
                listener.longest_gap = max(listener.longest_gap, now - listener.last_rx)
            listener.last_rx = now
            listener.bytes_body += len(data)
            listener.feed(data, now)
    snaps["end"] = Snapshot(args.server_pid, args.status_port)
    for listener in listeners:
        listener.mark("end")
        if listener.state in ("body", "head", "connecting"):
            # the time since its last receive counts as a gap too (a listener that stopped getting bytes)
            if listener.last_rx is not None and snaps["end"].t - listener.last_rx > STALL:
                listener.gaps.append(snaps["end"].t - listener.last_rx)
                listener.gap_at.append(round(listener.last_rx - t0, 3))
                listener.longest_gap = max(listener.longest_gap, snaps["end"].t - listener.last_rx)
            close(listener)
    sel.close()
    return report(args, listeners, snaps, wall_start)


def report(args, listeners, snaps, wall_start):
    steady_s = snaps["end"].t - snaps["steady_start"].t
    served = [x for x in listeners if x.status == 200]
    statuses = {}
    for x in listeners:
        key = str(x.status) if x.status is not None else "none"
        statuses[key] = statuses.get(key, 0) + 1
    early = [x for x in served if x.error is not None]
    connect_failures = [x for x in listeners if x.status is None]
    ogg = {}
    for x in served:
        for kind, count in x.ogg_errors.items():
            ogg[kind] = ogg.get(kind, 0) + count
    first_byte = [1000 * (x.t_first_byte - x.t_connect) for x in served if x.t_first_byte is not None]
    first_audio = [1000 * (x.t_first_audio - x.t_connect) for x in served if x.t_first_audio is not None]
    # steady window: the listeners held through it
    held = [x for x in served if x.error is None and "start" in x.steady]
    rates, paces = [], []
    for x in held:
        b0, g0, l0 = x.steady["start"]
        b1, g1, l1 = x.steady["end"]
        rates.append((b1 - b0) / steady_s)
        if g0 is not None and g1 is not None and l0 == l1:
            paces.append((g1 - g0) / 48000 / steady_s)
    gaps = [g for x in served for g in x.gaps]
    longest = [1000 * x.longest_gap for x in served]
    errors = sorted({x.error for x in listeners if x.error is not None})
    stalled = [{"listener": x.index, "source": x.source, "path": x.path,
                "connected_at": round(x.t_connect - listeners[0].t_connect, 3),
                "first_audio_granule_s": None if x.first_granule is None else round(x.first_granule / 48000, 3),
                "gaps": [[at, round(g, 3)] for at, g in zip(x.gap_at, x.gaps)]} for x in served if x.gaps]
    out = {
        "label": args.label,
        "kind": "shifted" if args.offsets else "live",
        "n": args.n, "ramp_seconds": args.ramp, "settle_seconds": args.settle, "hold_seconds": args.hold,
        "offsets": args.offsets, "sources": args.sources, "first_source": args.first_source,
        "statuses": statuses,
        "served": len(served),
        "connect_failures": len(connect_failures),
        "early_closes": len(early),
        "error_kinds": errors[:20],
        "ogg_errors": ogg,
        "join_gaps": sum(x.join_gaps for x in served),
        "links": sum(x.links for x in served),
        "first_byte_ms": {"p50": pct(first_byte, 50), "p99": pct(first_byte, 99), "max": max(first_byte, default=0),
                          "count": len(first_byte)},
        "first_audio_ms": {"p50": pct(first_audio, 50), "p99": pct(first_audio, 99),
                           "max": max(first_audio, default=0), "count": len(first_audio)},
        "stalls": len(gaps),
        "listeners_stalled": sum(1 for x in served if x.gaps),
        "stalled": stalled[:50],
        "wall_start": wall_start,
        "longest_gap_ms": {"p50": pct(longest, 50), "p99": pct(longest, 99), "max": max(longest, default=0)},
        "steady_bytes_per_s": {"p50": pct(rates, 50), "min": min(rates, default=0), "max": max(rates, default=0),
                               "held": len(rates)},
        "steady_audio_s_per_s": {"p50": pct(paces, 50), "min": min(paces, default=0), "max": max(paces, default=0),
                                 "count": len(paces)},
        "steady": window(snaps["steady_start"], snaps["end"]),
        "ramp": window(snaps["start"], snaps["steady_start"]),
        "rss_kb_hwm": proc_status_kb(args.server_pid, "VmHWM") if args.server_pid else 0,
        "loadavg_end": open("/proc/loadavg").read().split()[:3],
    }
    if args.json:
        write_json(args.json, out, indent=1)
    s = out["steady"]
    print(f"{args.label or out['kind']}: {len(served)}/{args.n} served {statuses}, early closes {len(early)}, "
          f"ogg errors {sum(ogg.values())}, first byte p50 {out['first_byte_ms']['p50']:.1f} "
          f"p99 {out['first_byte_ms']['p99']:.1f} ms, stalls {len(gaps)}, "
          f"B/s p50 {out['steady_bytes_per_s']['p50']:.0f}, audio s/s p50 {out['steady_audio_s_per_s']['p50']:.4f}, "
          f"server {s['cpu_cores']:.4f} cores, RSS {s['rss_kb_end'] / 1024:.1f} MiB, "
          f"time_shifted {s['time_shifted_end']}, client {s['client_cores']:.3f} cores", flush=True)
    for x in stalled[:5]:
        print(f"   stalled: listener {x['listener']} {x['path']} from {x['source']}, connected at "
              f"{x['connected_at']:.2f} s, first audio page's granule {x['first_audio_granule_s']} s, gaps (start s, "
              f"length s) {x['gaps']}", flush=True)
    return 0 if len(served) == args.n and not early and not ogg else 1


# ---------------------------------------------------------------- summary

ROWS = [
    ("listeners served (of N)", lambda r: r["served"], "{:.0f}"),
    ("non-200 answers", lambda r: r["n"] - r["served"] - r["connect_failures"], "{:.0f}"),
    ("connect failures", lambda r: r["connect_failures"], "{:.0f}"),
    ("early closes", lambda r: r["early_closes"], "{:.0f}"),
    ("Ogg errors", lambda r: sum(r["ogg_errors"].values()), "{:.0f}"),
    ("server CPU, steady (cores)", lambda r: r["steady"]["cpu_cores"], "{:.4f}"),
    ("  per listener (µs/s)", lambda r: 1e6 * r["steady"]["cpu_cores"] / max(1, r["served"]), "{:.1f}"),
    ("  shift-* thread (cores)", lambda r: sum(v for k, v in r["steady"]["threads_cores"].items()
                                               if k.startswith("shift-")), "{:.4f}"),
    ("  net-* loops (cores)", lambda r: sum(v for k, v in r["steady"]["threads_cores"].items()
                                            if k.startswith("net")), "{:.4f}"),
    ("server CPU, ramp (cores)", lambda r: r["ramp"]["cpu_cores"], "{:.4f}"),
    ("RSS at the end (MiB)", lambda r: r["steady"]["rss_kb_end"] / 1024, "{:.1f}"),
    ("disk reads, read_bytes (B/s)", lambda r: r["steady"]["read_bytes_per_s"], "{:.0f}"),
    ("read()/pread(), rchar (B/s)", lambda r: r["steady"]["rchar_per_s"], "{:.0f}"),
    ("read calls, syscr (/s)", lambda r: r["steady"]["syscr_per_s"], "{:.0f}"),
    ("status time_shift_read_bytes (B/s)", lambda r: r["steady"]["time_shift_read_bytes_per_s"], "{:.0f}"),
    ("status time_shifted", lambda r: r["steady"]["time_shifted_end"] or 0, "{:.0f}"),
    ("first byte p50 (ms)", lambda r: r["first_byte_ms"]["p50"], "{:.1f}"),
    ("first byte p99 (ms)", lambda r: r["first_byte_ms"]["p99"], "{:.1f}"),
    ("first audio page p99 (ms)", lambda r: r["first_audio_ms"]["p99"], "{:.1f}"),
    ("stalls > 500 ms", lambda r: r["stalls"], "{:.0f}"),
    ("listeners with a stall", lambda r: r["listeners_stalled"], "{:.0f}"),
    ("longest gap p50 (ms)", lambda r: r["longest_gap_ms"]["p50"], "{:.0f}"),
    ("longest gap p99 (ms)", lambda r: r["longest_gap_ms"]["p99"], "{:.0f}"),
    ("B/s per listener, steady p50", lambda r: r["steady_bytes_per_s"]["p50"], "{:.0f}"),
    ("B/s per listener, steady min", lambda r: r["steady_bytes_per_s"]["min"], "{:.0f}"),
    ("B/s per listener, steady max", lambda r: r["steady_bytes_per_s"]["max"], "{:.0f}"),
    ("audio s per wall s, p50", lambda r: r["steady_audio_s_per_s"]["p50"], "{:.4f}"),
    ("client CPU (cores)", lambda r: r["steady"]["client_cores"], "{:.3f}"),
]


def run_summary(args):
    rounds = [json.load(open(path)) for path in args.files]
    by = {"live": [r for r in rounds if r["kind"] == "live"], "shifted": [r for r in rounds if r["kind"] == "shifted"]}
    n = max((len(v) for v in by.values()), default=0)
    print(f"{'medians over rounds (each round: its value)':<38} {'live':>10} {'shifted':>10} {'shift/live':>10}"
          f"   rounds live | shifted")
    for label, get, fmt in ROWS:
        values = {k: [get(r) for r in v] for k, v in by.items()}
        med = {k: statistics.median(v) if v else float("nan") for k, v in values.items()}
        ratio = f"{med['shifted'] / med['live']:.2f}" if med["live"] else "-"
        shown = " | ".join(" ".join(fmt.format(x) for x in values[k]) for k in ("live", "shifted"))
        print(f"{label:<38} {fmt.format(med['live']):>10} {fmt.format(med['shifted']):>10} {ratio:>10}   {shown}")
    print(f"({n} rounds of each kind; the steady window: ramp + settle to ramp + hold; load average at each round's "
          f"end: {', '.join(r['loadavg_end'][0] for r in rounds)})")
    hot = {}
    for kind, rs in by.items():
        for r in rs:
            for name, cores in r["steady"]["threads_cores"].items():
                hot.setdefault((kind, name), []).append(cores)
    print("server threads, steady (median cores):", end="")
    for kind in ("live", "shifted"):
        top = sorted(((statistics.median(v), name) for (k, name), v in hot.items() if k == kind), reverse=True)[:5]
        print(f"\n  {kind:<8} " + ", ".join(f"{name} {c:.4f}" for c, name in top), end="")
    print()
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    listen = sub.add_parser("listen")
    listen.add_argument("--port", type=int, required=True)
    listen.add_argument("--mount", required=True)
    listen.add_argument("-n", type=int, default=200)
    listen.add_argument("--offsets", help="LO:HI: time-shifted listeners, offsets spread over LO…HI s")
    listen.add_argument("--ramp", type=float, default=10)
    listen.add_argument("--settle", type=float, default=5)
    listen.add_argument("--hold", type=float, default=60)
    listen.add_argument("--sources", type=int, default=40)
    listen.add_argument("--first-source", type=int, default=2)
    listen.add_argument("--server-pid", type=int, default=0)
    listen.add_argument("--status-port", type=int, default=0)
    listen.add_argument("--label", default="")
    listen.add_argument("--json")
    summary = sub.add_parser("summary")
    summary.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.command == "listen":
        if args.settle >= args.hold:
            parser.error("--settle must be below --hold")
        return run_listen(args)
    return run_summary(args)


if __name__ == "__main__":
    sys.exit(main())
