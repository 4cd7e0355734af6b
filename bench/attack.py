#!/usr/bin/env python3
"""Bounded attacks on radio-relay, one server per attack: the work of bench/attack.sh.

Each attack is a function with its own setup: it writes a config, starts one `radio-relay --config FILE` (stderr to a
log), runs what the attacker does for at most 20 s, and fills one row of the table:

  attack | what was sent | what the server did | server CPU | RSS growth | honest listener | PASS/FAIL

  * server CPU: utime + stime of the server's /proc/PID/stat over the attack window, as % of one core;
  * RSS growth: VmRSS sampled every 0.1 s during the window, the largest minus the value before it, in MB (10^6);
  * honest listener: one HTTP listener from 127.0.0.1 on the attacked station's mount (GET /NAME.opus), connected
    before the attack (after the flood is in place for http-pending) and reading until its end into a file; "valid"
    when it got 200, was never closed by the server, never waited more than 2 s for data, got audio pages, and
    `oggz-validate` finds nothing but the one missing EOS of a cut capture (multichannel: also decoded with ffmpeg
    and opusdec, which must report no error);
  * PASS needs CPU <= 25 % of one core, RSS growth <= 10 MB, a valid honest stream, and the attack's own expectation.

Attackers "from another host" bind their sockets to 127.0.0.2 before connecting; upstreams the attacker controls
listen on 127.0.0.1. Every process is started here and stopped by its PID (SIGTERM, 5 s, SIGKILL); every PID is
also written to WORK/pids for bench/attack.sh's own cleanup. The attacks (bench/README.md has the bounds and how
to read the table):

  forged-proxy       proxy_protocol = yes, max_per_ip = 1, proxy_from = 127.0.0.1: 20 connections from 127.0.0.2
                     each opening with PROXY TCP4 198.51.100.N; all must be closed within 1 s without Ogg data;
                     control from 127.0.0.1 (trusted) with the same header must get OggS
  status-idle        1000 silent connections to the status port from 127.0.0.2 (reopened when closed), /health from
                     127.0.0.1 every 0.1 s for 10 s: every answer 200 within 100 ms
  status-slowloris   200 connections from 127.0.0.2 sending one byte of a request head a second; same polling
  http-pending       2100 connections to the HTTP address from 127.0.0.2, each an incomplete head (reopened when
                     closed); the honest listener connects after the flood is in place: 200 and a valid stream
  http-head-lines    50 connections, each a head of up to ~8 KB sent as `A:b\\r\\n` lines, one per send, never the
                     blank line (quadratic re-parsing shows as CPU)
  oggs-flood         an edge (tcp:// upstream) gets 2 s of valid Ogg Opus, then 15 s of 1 MB/s of false OggS
                     capture patterns (b"OggS\\0" + 59 random bytes: version 0, random lengths)
  link-flood         an edge upstream sends a new chained link (new serial, OpusHead, OpusTags, one 20 ms packet,
                     EOS) 50 times a second for 10 s, alternating stereo and mono heads; log lines <= 50
  title-flood        an MP3 station (ICY 200 OK, icy-metaint 256, chain_titles = yes) with a new StreamTitle in
                     every metadata block for 10 s, at real time; log lines <= 50
  big-packets        an edge upstream sends pages of one 60 000-byte Opus packet whose TOC claims 2.5 ms (CELT,
                     code 0), 400 a second (real time by the TOC) for 8 s: RSS growth shows an unbounded page ring
  dns-blackhole      a station with upstream tcp://blackhole.test:9, the server under `unshare -m` with a bind-mounted
                     resolv.conf (nameserver 127.0.0.2, timeout:30 attempts:5) and a UDP socket on 127.0.0.2:53 that
                     never answers; /health every 0.5 s for 12 s: all 200
  multichannel       an edge upstream serving 6-channel Ogg Opus (mapping family 1) for 5 s, then closing and
                     refusing; refused with a clear error or relayed, and what the listener got decodes
  status-idle-same   status-idle with the silent connections from 127.0.0.1, the health check's own address (a
                     status endpoint on 127.0.0.1 sees one address for every client)
  http-idle-same     1000 silent connections to the HTTP address from 127.0.0.1; 20 GET /main.opus from 127.0.0.1,
                     0.3 s each: every one 200 with Ogg
  events-idle        the server under prlimit --nofile=600; 700 GET /main/events from 127.0.0.2 that never read; a raw
                     listener and the honest HTTP listener from 127.0.0.1 are served, at most 64 subscriptions held
                     after 60 s
  access-fifo        access_log on a FIFO: a reader that never reads and 1500 short visits, then SIGTERM (exit <= 3 s);
                     the reader gone, SIGHUP, /health (200), SIGTERM (exit <= 3 s); no reader at start-up (the
                     station serves, the error is logged)
  framing            a GET of the HLS playlist with a body (Content-Length, chunked) that is a request: one answer; two
                     Content-Length: 400; two Host on the status endpoint: 400; an absolute-form target: 200

Python 3.9+, standard library only (bench/benchlib.py: Ogg pages, their CRC through libogg's ctypes binding when it
loads, /proc, processes); ffmpeg, oggz-validate, opusdec and unshare as external tools.
"""
import argparse
import collections
import errno
import json
import os
import random
import re
import resource
import selectors
import signal
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
import traceback

from benchlib import (CLK_TCK, build_page, free_port, libogg, logger, ogg_packets, ogg_pages, proc_status_kb,
                      proc_ticks, stop_process, wait_until, write_json)

HOST = "127.0.0.1"
ATTACKER = "127.0.0.2"
CPU_MAX = 25.0           # % of one core over the attack window
RSS_MAX_MB = 10.0        # VmRSS growth during the window, MB (10^6 bytes)
LOG_LINES_MAX = 50       # server log lines during a 10 s link-flood or title-flood window
HEALTH_MS_MAX = 100.0    # status-idle, status-slowloris: every /health answer within this
STALL_MAX_S = 2.0        # the honest listener never waits longer than this for data
ROW_LIMIT_S = 45         # a row that runs longer is cut (alarm) and fails
ROW_LIMITS_S = {"access-fifo": 90, "events-idle": 100}   # rows that wait longer on purpose


log = logger("attack")


class RowTimeout(Exception):
    pass


# ---------------------------------------------------------------- Ogg

def parse_pages(data):
    """[(header type, granule, serial, seq, [(packet bytes, complete)], raw page)] of well-formed pages."""
    out = []
    for page in ogg_pages(data):
        if page is None:
            continue
        packets, rest = ogg_packets(data, page)
        segs = [(p, True) for p in packets] + ([(rest, False)] if rest else [])
        out.append((page.htype, page.granule, page.serial, page.seq, segs, data[page.offset:page.end]))
    return out


def ogg_links(data):
    """[(serial, channels, mapping family, streams)] of the links (BOS pages with OpusHead) of a capture."""
    links = []
    for htype, _g, serial, _s, segs, _raw in parse_pages(data):
        if htype & 2 and segs and segs[0][0][:8] == b"OpusHead":
            head = segs[0][0]
            family = head[18] if len(head) > 18 else 0
            streams = head[19] if family and len(head) > 19 else 1
            links.append((serial, head[9], family, streams))
    return links


class Fixture:
    """An Ogg Opus file made by ffmpeg's libopus from a 440 Hz sine: its pages, header packets and audio packets."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.raw = f.read()
        self.pages = parse_pages(self.raw)
        packets = []
        partial = b""
        for _h, _g, _serial, _s, segs, _raw in self.pages:
            for p, complete in segs:
                partial += p
                if complete:
                    packets.append(partial)
                    partial = b""
        self.head, self.tags, self.audio = packets[0], packets[1], packets[2:]
        self.serial = self.pages[0][2]
        self.channels = self.head[9]


def make_fixtures(work):
    specs = {
        "stereo": ["-ac", "2", "-c:a", "libopus", "-b:a", "64k"],
        "mono": ["-ac", "1", "-c:a", "libopus", "-b:a", "32k"],
        "six": ["-ac", "6", "-c:a", "libopus", "-b:a", "128k", "-mapping_family", "1"],
    }
    out = {}
    for name, args in specs.items():
        path = os.path.join(work, f"fixture-{name}.opus")
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:d=30"] + args +
                       ["-page_duration", "100000", "-f", "ogg", path], check=True, timeout=120)
        out[name] = Fixture(path)
    return out


# ---------------------------------------------------------------- the server and what measures it

class Meter:
    """CPU (% of one core) and RSS growth (MB) of one process over a window."""

    def __init__(self, pid):
        self.pid = pid
        self.stop_event = threading.Event()
        self.max_kb = 0
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def start(self):
        self.t0 = time.monotonic()
        self.ticks0 = proc_ticks(self.pid)
        self.kb0 = proc_status_kb(self.pid)
        self.max_kb = self.kb0
        self.thread.start()
        return self

    def _sample(self):
        while not self.stop_event.wait(0.1):
            try:
                self.max_kb = max(self.max_kb, proc_status_kb(self.pid))
            except OSError:
                return

    def stop(self):
        """(cpu %, RSS growth MB, RSS before MB); None for what could not be read (the process is gone)."""
        self.stop_event.set()
        self.thread.join(1)
        try:
            ticks = proc_ticks(self.pid)
            self.max_kb = max(self.max_kb, proc_status_kb(self.pid))
        except OSError:
            return None, None, self.kb0 * 1024 / 1e6
        wall = time.monotonic() - self.t0
        cpu = 100.0 * (ticks - self.ticks0) / CLK_TCK / max(wall, 1e-3)
        return cpu, (self.max_kb - self.kb0) * 1024 / 1e6, self.kb0 * 1024 / 1e6


def http_request(port, raw, timeout=2.0, src=None):
    """(status code or None, response bytes, seconds, error text) of one request on a fresh connection."""
    t0 = time.monotonic()
    data, err = b"", None
    try:
        with socket.create_connection((HOST, port), timeout=timeout,
                                      source_address=(src, 0) if src else None) as s:
            s.settimeout(max(0.05, timeout - (time.monotonic() - t0)))
            s.sendall(raw)
            while True:
                left = timeout - (time.monotonic() - t0)
                if left <= 0:
                    err = "timeout"
                    break
                s.settimeout(left)
                d = s.recv(65536)
                if not d:
                    break
                data += d
    except socket.timeout:
        err = "timeout"
    except OSError as e:
        err = e.strerror or str(e)
    dt = time.monotonic() - t0
    m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    return (int(m.group(1)) if m else None), data, dt, err


class Server:
    """One radio-relay process running a config file written here."""

    def __init__(self, ctx, tag, stations, optional_keys=(), resolv=None, server_keys=(), prefix=()):
        self.ctx, self.tag = ctx, tag
        self.server_keys = list(server_keys)  # more [server] keys, (key, value)
        self.prefix = list(prefix)            # run under this command (prlimit …)
        self.status_port = ctx.free_port()
        self.http_port = ctx.free_port()
        self.stations = stations
        self.optional_keys = optional_keys
        self.resolv = resolv
        self.notes = []
        self.proc = None
        self.killed = False
        self.conf = os.path.join(ctx.work, f"{tag}.conf")
        self.log = os.path.join(ctx.work, f"{tag}.log")

    def _write(self, drop=()):
        lines = ["[server]", f"status = {HOST}:{self.status_port}", f"http = {HOST}:{self.http_port}",
                 "log_level = info"] + [f"{k} = {v}" for k, v in self.server_keys] + [""]
        for name, keys in self.stations:
            lines.append(f"[station {name}]")
            lines += [f"{k} = {v}" for k, v in keys if k not in drop]
            lines.append("")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines))

    def _check(self):
        p = subprocess.run([self.ctx.rr, "check-config", self.conf], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        return p.returncode, p.stdout.decode("utf-8", "replace").strip()

    def start(self):
        self._write()
        rc, out = self._check()
        if rc != 0 and self.optional_keys:
            unknown = [k for k in self.optional_keys if k in out]
            if unknown:
                self._write(drop=unknown)
                rc2, out2 = self._check()
                if rc2 == 0:
                    self.notes.append(f"this binary refuses {', '.join(unknown)} (check-config: unknown key): "
                                      f"ran without it")
                    rc, out = rc2, out2
        if rc != 0:
            raise RuntimeError(f"check-config refused the config: {out[:300]}")
        cmd = self.prefix + [self.ctx.rr, "--config", self.conf]
        if self.resolv:
            # A mount namespace of its own: /etc/resolv.conf replaced for this process only. exec keeps the PID.
            cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                   'mount --bind "$1" /etc/resolv.conf && exec "$2" --config "$3"', "sh", self.resolv, self.ctx.rr,
                   self.conf]
        self.logf = open(self.log, "wb")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.logf, stderr=subprocess.STDOUT)
        self.ctx.record_pid(self.proc.pid)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}: {self.log_tail()}")
            code, _d, _t, _e = http_request(self.status_port, b"GET /health HTTP/1.0\r\n\r\n", timeout=0.5)
            if code is not None:
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"no status endpoint within 10 s: {self.log_tail()}")
        if self.resolv:
            exe = os.readlink(f"/proc/{self.proc.pid}/exe")
            if os.path.basename(exe) != os.path.basename(self.ctx.rr):
                raise RuntimeError(f"PID {self.proc.pid} is {exe}, not the server")
        return self

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def status(self):
        code, data, _t, _e = http_request(self.status_port, b"GET /status.json HTTP/1.0\r\n\r\n", timeout=2)
        if code != 200:
            return None
        try:
            return json.loads(data.split(b"\r\n\r\n", 1)[1])
        except (IndexError, ValueError):
            return None

    def station(self, name):
        st = self.status() or {}
        return next((s for s in st.get("stations", []) if s.get("name") == name), {})

    def log_size(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def log_text(self, start=0, end=None):
        with open(self.log, "rb") as f:
            f.seek(start)
            data = f.read() if end is None else f.read(max(0, end - start))
        return data.decode("utf-8", "replace")

    def log_tail(self, n=3):
        try:
            return " | ".join(self.log_text().strip().splitlines()[-n:])
        except OSError:
            return ""

    def stop_time(self, limit=20.0):
        """SIGTERM, then seconds until the process is gone (None: still there after `limit`)."""
        t0 = time.monotonic()
        self.proc.terminate()
        try:
            self.proc.wait(limit)
        except subprocess.TimeoutExpired:
            return None
        return time.monotonic() - t0

    def stop(self):
        if self.proc is None:
            return
        if stop_process(self.proc):
            self.killed = True
        self.logf.close()


def log_summary(text):
    """(line count, 'the most common kind of line ×N') of server log lines."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    kinds = collections.Counter(re.sub(r"[0-9a-f]{6,}|\d+(\.\d+)?", "#", ln.split(" ", 1)[-1])[:60] for ln in lines)
    top = kinds.most_common(1)
    return len(lines), (f"'{top[0][0].strip()}' x{top[0][1]}" if top else "-")


# ---------------------------------------------------------------- the honest listener

class Honest:
    """One listener from 127.0.0.1 reading a station's HTTP mount into a file until stopped."""

    def __init__(self, ctx, port, path, name):
        self.port, self.path = port, path
        self.out = os.path.join(ctx.work, f"{name}.honest.ogg")
        self.stop_event = threading.Event()
        self.code = None
        self.status_line = ""
        self.end = None
        self.bytes = 0
        self.max_gap = 0.0
        self.t_connect = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def _run(self):
        try:
            s = socket.create_connection((HOST, self.port), timeout=3, source_address=(HOST, 0))
        except OSError as e:
            self.end = f"connect failed: {e.strerror or e}"
            return
        self.t_connect = time.monotonic()
        try:
            s.sendall(f"GET {self.path} HTTP/1.1\r\nHost: {HOST}:{self.port}\r\nUser-Agent: attack-honest\r\n"
                      f"\r\n".encode())
            buf = b""
            s.settimeout(0.25)
            deadline = time.monotonic() + 5
            while b"\r\n\r\n" not in buf and len(buf) < 16384 and time.monotonic() < deadline:
                if self.stop_event.is_set():
                    break
                try:
                    d = s.recv(16384)
                except socket.timeout:
                    continue
                if not d:
                    break
                buf += d
            head, _, body = buf.partition(b"\r\n\r\n")
            self.status_line = head.split(b"\r\n", 1)[0].decode("latin-1")[:60]
            m = re.match(r"(HTTP/1\.[01]|ICY) (\d{3})", self.status_line)
            self.code = int(m.group(2)) if m else None
            if self.code != 200:
                self.end = f"answered {self.status_line or 'nothing'}"
                return
            last = time.monotonic()
            with open(self.out, "wb") as f:
                if body:
                    f.write(body)
                    self.bytes += len(body)
                while not self.stop_event.is_set():
                    try:
                        d = s.recv(1 << 18)
                    except socket.timeout:
                        self.max_gap = max(self.max_gap, time.monotonic() - last)
                        continue
                    now = time.monotonic()
                    self.max_gap = max(self.max_gap, now - last)
                    if not d:
                        self.end = f"closed by the server after {now - self.t_connect:.1f} s"
                        return
                    last = now
                    f.write(d)
                    self.bytes += len(d)
                self.max_gap = max(self.max_gap, time.monotonic() - last)
        except OSError as e:
            self.end = f"error after {time.monotonic() - self.t_connect:.1f} s: {e.strerror or e}"
        finally:
            s.close()

    def stop(self):
        self.stop_event.set()
        self.thread.join(5)
        self.t_stop = time.monotonic()

    def seconds(self):
        return (getattr(self, "t_stop", time.monotonic()) - self.t_connect) if self.t_connect else 0.0

    def verdict(self, decode=False):
        """(valid?, 'valid' or what was wrong)."""
        if self.end:
            return False, self.end
        if self.code != 200:
            return False, f"no answer ({self.status_line or 'nothing'})"
        if self.bytes == 0:
            return False, "no data"
        with open(self.out, "rb") as f:
            data = f.read()
        pages = data.count(b"OggS")
        if pages < 3:
            return False, f"no audio pages in {self.seconds():.0f} s ({pages} pages, {self.bytes} bytes)"
        if self.max_gap > STALL_MAX_S:
            return False, f"stalled {self.max_gap:.1f} s"
        v = subprocess.run(["oggz-validate", self.out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        text = v.stdout.decode("utf-8", "replace").strip()
        errors = [ln.strip() for ln in text.splitlines()[1:] if ln.strip()]
        eos = [ln for ln in errors if ln.endswith("missing *** eos")]
        # A capture the listener ended has no EOS page: one missing EOS (the last link's) is the cut, not an error.
        if v.returncode != 0 and not (len(eos) == 1 and len(errors) == 1):
            other = [ln for ln in errors if ln not in eos]
            what = other[0] if other else f"{len(eos)} links without EOS"
            return False, f"oggz-validate: {what[:80]}" + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else "")
        if decode:
            problems = decode_errors(self.out)
            if problems:
                return False, problems
        return True, "valid"


def decode_errors(path):
    """What ffmpeg and opusdec say about decoding `path`, or '' when neither reports an error."""
    out = []
    p = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode("utf-8", "replace").strip().splitlines()
    if p.returncode or err:
        first = re.sub(r" @ 0x[0-9a-f]+", "", err[0])[:70] if err else f"rc {p.returncode}"
        out.append(f"ffmpeg: {len(err)} error lines, first: {first}")
    if shutil_which("opusdec"):
        p = subprocess.run(["opusdec", "--quiet", path, "/dev/null"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        err = [ln for ln in p.stderr.decode("utf-8", "replace").strip().splitlines() if ln.strip()]
        if p.returncode or err:
            out.append(f"opusdec: {err[0][:70] if err else 'rc ' + str(p.returncode)}")
    return "; ".join(out)


def shutil_which(name):
    for d in os.environ.get("PATH", "").split(":"):
        if d and os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


# ---------------------------------------------------------------- attacker connections

class Conn:
    __slots__ = ("sock", "state", "t_open", "sent", "next_drip", "head")

    def __init__(self, sock, now):
        self.sock, self.state, self.t_open, self.sent, self.next_drip, self.head = sock, "connecting", now, 0, 0.0, None


TCP_ESTABLISHED = 1


def tcp_state(sock):
    """The kernel's TCP state of a socket (tcp_info's first byte: 1 ESTABLISHED, 8 CLOSE_WAIT …), or None."""
    try:
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
    except OSError:
        return None


class Flood:
    """n connections from 127.0.0.2 to 127.0.0.1:port, each sending `opening` once connected, then `drip` bytes
    (chunk by chunk, one chunk every `drip_every` s, up to `drip_limit` bytes in all). Connections the server closes
    are opened again (`reopen`), at most `reopen_per_s` a second and `max_opens` in all, so the flood stays in place.
    Runs on its own thread; counts what the server did."""

    def __init__(self, n, port, opening=b"", drip=None, drip_every=1.0, drip_limit=None, reopen=True,
                 reopen_per_s=500, max_opens=None, nodelay=False, source=None, reads=True, first_burst=None):
        self.n, self.port, self.opening = n, port, opening
        self.source = source or ATTACKER  # the address the connections come from
        self.reads = reads                # False: never read what the server sends (only its close is seen)
        self.first_burst = n if first_burst is None else first_burst  # opened at once; the rest at reopen_per_s
        self.drip, self.drip_every, self.drip_limit = drip, drip_every, drip_limit
        self.reopen, self.reopen_per_s = reopen, reopen_per_s
        self.max_opens = max_opens if max_opens is not None else n + 20 * reopen_per_s
        self.nodelay = nodelay
        self.stats = collections.Counter()
        self.codes = collections.Counter()
        self.conns = {}
        self.sel = selectors.DefaultSelector()
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error = None

    def start(self):
        self.thread.start()
        return self

    def in_place(self):
        connecting = sum(1 for c in list(self.conns.values()) if c.state == "connecting")
        return self.stats["opened"] >= self.n and connecting == 0

    def wait_in_place(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.in_place():
            time.sleep(0.05)
        return self.in_place()

    def held(self):
        """Connections open now. Without reading, a close by the server is seen in the socket's TCP state (CLOSE_WAIT
        once its FIN came), not as an event."""
        if self.reads:
            return sum(1 for c in list(self.conns.values()) if c.state == "open")
        return sum(1 for c in list(self.conns.values()) if c.state == "open" and tcp_state(c.sock) == TCP_ESTABLISHED)

    def _open(self, now):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind((self.source, 0))
        except OSError:
            self.stats["bind_failed"] += 1
            s.close()
            return
        if self.nodelay:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        err = s.connect_ex((HOST, self.port))
        self.stats["opened"] += 1
        if err not in (0, errno.EINPROGRESS):
            self.stats["connect_failed"] += 1
            s.close()
            return
        c = Conn(s, now)
        self.conns[s.fileno()] = c
        self.sel.register(s, selectors.EVENT_WRITE, c)

    def _drop(self, c, now, why):
        if c.state == "gone":
            return
        self.stats[why] += 1
        if c.state == "open" and why in ("closed", "reset"):
            self.stats["lifetime_sum"] += now - c.t_open
        try:
            self.sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass
        self.conns.pop(c.sock.fileno(), None)
        c.sock.close()
        c.state = "gone"

    def _send(self, c, data, now):
        try:
            n = c.sock.send(data)
            c.sent += n
            self.stats["bytes_sent"] += n
            return n
        except BlockingIOError:
            return 0
        except (BrokenPipeError, ConnectionResetError):
            self._drop(c, now, "reset")
        except OSError:
            self._drop(c, now, "error")
        return -1

    def _connected(self, c, now):
        err = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            return self._drop(c, now, "refused" if err == errno.ECONNREFUSED else "connect_error")
        c.state = "open"
        c.t_open = now
        self.stats["connected"] += 1
        if self.reads:
            self.sel.modify(c.sock, selectors.EVENT_READ, c)
        else:
            self.sel.unregister(c.sock)  # never read: what the server sends stays in the socket
        if self.opening and self._send(c, self.opening, now) < 0:
            return
        c.next_drip = now + random.uniform(0, self.drip_every)

    def _readable(self, c, now):
        try:
            d = c.sock.recv(4096)
        except BlockingIOError:
            return
        except ConnectionResetError:
            return self._drop(c, now, "reset")
        except OSError:
            return self._drop(c, now, "error")
        if not d:
            return self._drop(c, now, "closed")
        if c.head is None:
            c.head = d[:32]
            m = re.match(rb"HTTP/1\.[01] (\d{3})", d)
            self.codes[m.group(1).decode() if m else "other"] += 1

    def _run(self):
        try:
            self._loop()
        except Exception as e:  # reported in the row
            self.error = repr(e)
        finally:
            now = time.monotonic()
            for c in list(self.conns.values()):
                self.stats["held_at_end" if c.state == "open" else "connecting_at_end"] += 1
                self._drop(c, now, "ours")
            self.sel.close()

    def _loop(self):
        tokens = float(min(self.n, self.first_burst))   # the first ones at once
        last = time.monotonic()
        while not self.stop_event.is_set():
            now = time.monotonic()
            tokens = min(float(self.n), tokens + (now - last) * self.reopen_per_s)
            last = now
            live = len(self.conns)
            want = self.n - live if (self.reopen or self.stats["opened"] < self.n) else 0
            while want > 0 and tokens >= 1 and self.stats["opened"] < self.max_opens:
                self._open(now)
                want -= 1
                tokens -= 1
            timeout = min(self.drip_every, 0.01) if self.drip else 0.05
            for key, mask in self.sel.select(timeout):
                c = key.data
                now = time.monotonic()
                if c.state == "connecting" and mask & selectors.EVENT_WRITE:
                    self._connected(c, now)
                elif c.state == "open" and mask & selectors.EVENT_READ:
                    self._readable(c, now)
            if self.drip:
                now = time.monotonic()
                for c in list(self.conns.values()):
                    if c.state != "open" or now < c.next_drip:
                        continue
                    if self.drip_limit is not None and c.sent >= self.drip_limit:
                        continue
                    chunk = self.drip(c)
                    if chunk and self._send(c, chunk, now) > 0:
                        self.stats["drips"] += 1
                    c.next_drip = max(c.next_drip + self.drip_every, now - self.drip_every)

    def stop(self):
        self.stop_event.set()
        self.thread.join(10)

    def summary(self):
        st = self.stats
        closed = st["closed"] + st["reset"]
        codes = ", ".join(f"{k} to {v}" for k, v in sorted(self.codes.items()))
        return (f"opened {st['opened']}, closed {closed} by the server" + (f" ({codes})" if codes else "")
                + (f", refused {st['refused']}" if st["refused"] else "")
                + f", {st['held_at_end']} held at the end"
                + (f", {st['connecting_at_end']} still connecting" if st["connecting_at_end"] else ""))


class ProcessFlood:
    """A `Flood` run in a child process (fork), with the same start/wait_in_place/stop/summary; what it did comes
    back through a pipe when it stops."""

    def __init__(self, **kw):
        self.kw = kw
        self.pid = None
        self.stats = collections.Counter()
        self.error = None
        self._summary = "not run"

    def start(self):
        import multiprocessing
        context = multiprocessing.get_context("fork")
        self.parent, child = context.Pipe()
        self.stop_event = context.Event()
        self.ready = context.Event()

        def run(conn, kw, stop_event, ready):
            flood = Flood(**kw).start()
            flood.wait_in_place(5)
            ready.set()
            stop_event.wait(60)
            flood.stop()
            conn.send((flood.summary(), dict(flood.stats), flood.error))

        self.proc = context.Process(target=run, args=(child, self.kw, self.stop_event, self.ready), daemon=True)
        self.proc.start()
        return self

    def wait_in_place(self, timeout):
        return self.ready.wait(timeout)

    def stop(self):
        if self.proc is None:
            return
        self.stop_event.set()
        if self.parent.poll(15):
            self._summary, stats, self.error = self.parent.recv()
            self.stats.update(stats)
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
        self.proc = None

    def summary(self):
        return self._summary


def poll_health(port, every, duration):
    """[(code or error text, ms)] of GET /health from 127.0.0.1 every `every` s for `duration` s."""
    out = []
    t = time.monotonic()
    end = t + duration
    while t < end:
        now = time.monotonic()
        if now < t:
            time.sleep(t - now)
        code, _d, dt, err = http_request(port, b"GET /health HTTP/1.0\r\n\r\n", timeout=min(1.0, every * 5), src=HOST)
        out.append((code if code is not None else (err or "no answer"), dt * 1000))
        t += every
        if time.monotonic() > t + every:   # a slow answer: skip the missed slots rather than bunch up
            t = time.monotonic()
    return out


def health_summary(polls):
    codes = collections.Counter(str(c) for c, _ in polls)
    ms = [m for _, m in polls]
    text = (f"/health x{len(polls)}: " + ", ".join(f"{k} x{v}" for k, v in codes.most_common())
            + (f"; p50 {statistics.median(ms):.1f} ms, max {max(ms):.1f} ms" if ms else ""))
    return codes, ms, text


# ---------------------------------------------------------------- attacker upstreams

class Upstream:
    """A TCP server on 127.0.0.1 the attacker runs as a station's upstream: each connection gets `handler(conn,
    self)` on a thread of its own."""

    def __init__(self, ctx, handler):
        self.port = ctx.free_port()
        self.handler = handler
        self.stop_event = threading.Event()
        self.connections = 0
        self.lock = threading.Lock()
        self.socks = []
        self.counters = collections.Counter()
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind((HOST, self.port))
        self.ls.listen(16)
        self.ls.settimeout(0.2)
        self.threads = []
        self.accepting = True
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stop_event.is_set() and self.accepting:
            try:
                conn, _ = self.ls.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.connections += 1
                self.socks.append(conn)
                n = self.connections
            t = threading.Thread(target=self._serve, args=(conn, n), daemon=True)
            t.start()
            self.threads.append(t)

    def _serve(self, conn, n):
        try:
            conn.settimeout(1.0)
            self.handler(conn, self, n)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def close_listener(self):
        """Stops accepting: new connections are refused from now on."""
        self.accepting = False
        try:
            self.ls.close()
        except OSError:
            pass

    def stop(self):
        self.stop_event.set()
        self.close_listener()
        with self.lock:
            for s in self.socks:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self.thread.join(2)
        for t in self.threads:
            t.join(2)

    def sleep(self, seconds):
        return not self.stop_event.wait(seconds)


def send_realtime(conn, up, pages, until, lead=0.3, start=None):
    """Sends an Ogg file's pages at real time by their granules (headers at once) until `until` (monotonic)."""
    start = start or time.monotonic()
    first = None
    for htype, granule, _serial, _seq, _segs, raw in pages:
        if up.stop_event.is_set() or time.monotonic() >= until:
            return False
        if granule > 0:
            first = granule if first is None else first
            due = start + (granule - first) / 48000 - lead
            while time.monotonic() < due:
                if up.stop_event.is_set() or time.monotonic() >= until:
                    return False
                time.sleep(min(0.05, max(0.0, due - time.monotonic())))
        conn.sendall(raw)
    return True


def drain_request(conn, limit=16384, timeout=5):
    buf = b""
    deadline = time.monotonic() + timeout
    while b"\r\n\r\n" not in buf and len(buf) < limit and time.monotonic() < deadline:
        try:
            d = conn.recv(4096)
        except socket.timeout:
            continue
        if not d:
            break
        buf += d
    return buf


# ---------------------------------------------------------------- rows

class Row:
    def __init__(self, name):
        self.name = name
        self.sent = ""
        self.did = ""
        self.cpu = None
        self.rss = None
        self.rss_max = RSS_MAX_MB   # a row whose attack fills what the server holds by design sets its own
        self.honest = "not run"
        self.honest_ok = False
        self.expect_ok = True
        self.expect = ""
        self.failures = []
        self.notes = []
        self.seconds = 0.0

    def measure(self, meter):
        self.cpu, self.rss, _ = meter.stop()

    def verdict(self):
        why = list(self.failures)
        if self.cpu is None:
            why.append("no CPU figure")
        elif self.cpu > CPU_MAX:
            why.append(f"CPU {self.cpu:.0f} % > {CPU_MAX:.0f}")
        if self.rss is None:
            why.append("no RSS figure")
        elif self.rss > self.rss_max:
            why.append(f"RSS +{self.rss:.1f} MB > {self.rss_max:.1f}")
        if not self.honest_ok:
            why.append("honest stream not valid")
        if not self.expect_ok:
            why.append(self.expect or "expectation not met")
        return ("PASS", "") if not why else ("FAIL", "; ".join(why))


class Scene:
    """What a row started, stopped in reverse order whatever happens."""

    def __init__(self, row):
        self.row = row
        self.items = []

    def add(self, item):
        self.items.append(item)
        return item

    def close(self):
        for item in reversed(self.items):
            try:
                item.stop()
            except Exception as e:  # keep stopping the others
                log(f"cleanup: {item.__class__.__name__}: {e!r}")
            if getattr(item, "killed", False):
                self.row.notes.append("the server did not stop within 5 s of SIGTERM: SIGKILL")
        self.items = []


def demo_station(ctx, port, extra=()):
    return ("main", [("upstream", ctx.demo_mp3), ("port", port), ("bind", HOST)] + list(extra))


def edge_station(up, port, name="edge"):
    return (name, [("upstream", f"tcp://{HOST}:{up.port}"), ("port", port), ("bind", HOST)])


def finish_server(row, srv):
    if not srv.alive():
        row.failures.append(f"the server exited ({srv.proc.returncode}) during the attack: {srv.log_tail(1)[:80]}")
    row.notes += srv.notes


# 1
def attack_forged_proxy(ctx, row, scene):
    port = ctx.free_port()
    srv = scene.add(Server(ctx, "forged-proxy", [demo_station(
        ctx, port, [("proxy_protocol", "yes"), ("max_per_ip", "1"), ("proxy_from", HOST)])],
        optional_keys=("proxy_from",)).start())
    honest = scene.add(Honest(ctx, srv.http_port, "/main.opus", row.name).start())
    time.sleep(1.5)
    meter = Meter(srv.pid).start()
    t_start = time.monotonic()
    socks = []
    for n in range(1, 21):
        s = socket.socket()
        s.settimeout(1.0)
        s.bind((ATTACKER, 0))
        rec = {"s": s, "t": time.monotonic(), "data": b"", "end": None}
        socks.append(rec)
        try:
            s.connect((HOST, port))
        except OSError as e:   # refused at once: closed too
            rec["end"] = ("refused", time.monotonic() - rec["t"], str(e))
            continue
        try:
            s.sendall(f"PROXY TCP4 198.51.100.{n} {HOST} 5000 {port}\r\n".encode())
        except OSError as e:   # closed before the header went out
            rec["end"] = ("reset", time.monotonic() - rec["t"], str(e))
    deadline = time.monotonic() + 1.5
    sel = selectors.DefaultSelector()
    for rec in socks:
        if rec["end"] is None:
            rec["s"].setblocking(False)
            sel.register(rec["s"], selectors.EVENT_READ, rec)
    while time.monotonic() < deadline and sel.get_map():
        for key, _ in sel.select(0.05):
            rec = key.data
            try:
                d = rec["s"].recv(65536)
            except BlockingIOError:
                continue
            except OSError as e:
                rec["end"] = ("reset", time.monotonic() - rec["t"], str(e))
                sel.unregister(rec["s"])
                continue
            if not d:
                rec["end"] = ("closed", time.monotonic() - rec["t"], "")
                sel.unregister(rec["s"])
            else:
                rec["data"] += d
    sel.close()
    st = srv.station("main")   # while the forged connections are still open
    closed_fast = sum(1 for r in socks if r["end"] and r["end"][1] <= 1.0 and b"OggS" not in r["data"])
    got_ogg = sum(1 for r in socks if b"OggS" in r["data"])
    still_open = sum(1 for r in socks if r["end"] is None)
    for r in socks:
        r["s"].close()
    # The control: a trusted peer (127.0.0.1) with the same kind of header.
    control = b""
    try:
        with socket.create_connection((HOST, port), timeout=2, source_address=(HOST, 0)) as s:
            s.sendall(f"PROXY TCP4 198.51.100.200 {HOST} 5000 {port}\r\n".encode())
            end = time.monotonic() + 2
            while b"OggS" not in control and time.monotonic() < end:
                d = s.recv(65536)
                if not d:
                    break
                control += d
    except OSError as e:
        control = control or f"error {e}".encode()
    time.sleep(max(0.0, 3.0 - (time.monotonic() - t_start)))
    row.measure(meter)
    honest.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    control_ok = b"OggS" in control
    row.sent = (f"20 conns from {ATTACKER} opening with `PROXY TCP4 198.51.100.N {HOST} 5000 {port}`; "
                f"control from {HOST} (198.51.100.200)")
    row.did = (f"closed {closed_fast}/20 within 1 s, {got_ogg}/20 got Ogg data, {still_open} left open; control "
               f"{'got OggS' if control_ok else 'got no OggS'}; proxy_header_failures "
               f"{st.get('proxy_header_failures', '?')}, listeners {st.get('listeners', '?')}")
    row.expect_ok = closed_fast == 20 and got_ogg == 0 and control_ok
    row.expect = ("forged headers: " + (f"{got_ogg}/20 admitted" if got_ogg else f"{20 - closed_fast}/20 not closed")
                  if closed_fast != 20 or got_ogg else "") + ("" if control_ok else "; control got no OggS")


def status_attack(ctx, row, scene, flood_kw, sent, separate=False):
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name, [demo_station(ctx, port)]).start())
    honest = scene.add(Honest(ctx, srv.http_port, "/main.opus", row.name).start())
    time.sleep(1.0)
    meter = Meter(srv.pid).start()
    # In a process of its own when the health check shares its address: in this one, the flood's thread would
    # hold the interpreter between the check's connect and its request, a delay no separate client has.
    flood = scene.add((ProcessFlood if separate else Flood)(port=srv.status_port, **flood_kw).start())
    flood.wait_in_place(3)
    polls = poll_health(srv.status_port, 0.1, 10)
    flood.stop()
    row.measure(meter)
    honest.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    codes, ms, text = health_summary(polls)
    bad = sum(1 for c, m in polls if c != 200 or m > HEALTH_MS_MAX)
    row.sent = sent
    row.did = f"{text}; attackers: {flood.summary()}" + (f"; flood error {flood.error}" if flood.error else "")
    row.expect_ok = bad == 0 and bool(polls)
    row.expect = f"{bad}/{len(polls)} /health not 200 within {HEALTH_MS_MAX:.0f} ms"


# 2
def attack_status_idle(ctx, row, scene):
    status_attack(ctx, row, scene, dict(n=1000), f"1000 silent conns to the status port from {ATTACKER} (reopened "
                  f"when closed, <= 500/s); GET /health from {HOST} every 0.1 s for 10 s")


# 3
SLOW_HEAD = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 8000


def attack_status_slowloris(ctx, row, scene):
    status_attack(ctx, row, scene,
                  dict(n=200, drip=lambda c: SLOW_HEAD[c.sent:c.sent + 1], drip_every=1.0, nodelay=True),
                  f"200 conns from {ATTACKER}, one byte of a request head a second each (reopened when closed); "
                  f"/health from {HOST} every 0.1 s for 10 s")


# 4
def attack_http_pending(ctx, row, scene):
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name, [demo_station(ctx, port)]).start())
    time.sleep(1.0)
    meter = Meter(srv.pid).start()
    flood = scene.add(Flood(2100, srv.http_port, opening=b"GET /x HTTP/1.1\r\nX: ", reopen_per_s=500).start())
    placed = flood.wait_in_place(5)
    time.sleep(0.3)
    before = dict(flood.stats)
    honest = scene.add(Honest(ctx, srv.http_port, "/main.opus", row.name).start())
    time.sleep(9)
    st = srv.station("main")
    flood.stop()
    row.measure(meter)
    honest.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    row.sent = (f"2100 conns from {ATTACKER} to the HTTP address, each `GET /x HTTP/1.1\\r\\nX: ` (reopened when "
                f"closed, <= 500/s); honest GET /main.opus from {HOST} once the flood was "
                f"{'in place' if placed else 'partly in place'} ({before.get('connected', 0)} connected)")
    row.did = (f"attackers: {flood.summary()}; honest: {honest.status_line or honest.end or 'no answer'}; "
               f"listeners_http {st.get('listeners_http', '?')}")
    row.expect_ok = honest.code == 200
    row.expect = f"honest listener not served ({honest.status_line or honest.end or 'no answer'})"


# 5
def attack_http_head_lines(ctx, row, scene):
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name, [demo_station(ctx, port)]).start())
    honest = scene.add(Honest(ctx, srv.http_port, "/main.opus", row.name).start())
    time.sleep(1.0)
    opening = b"GET /main.opus HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    meter = Meter(srv.pid).start()
    t0 = time.monotonic()
    flood = scene.add(Flood(50, srv.http_port, opening=opening, drip=lambda c: b"A:b\r\n", drip_every=0.0025,
                            drip_limit=8100, nodelay=True, reopen_per_s=100).start())
    time.sleep(10)
    flood.stop()
    wall = time.monotonic() - t0
    row.measure(meter)
    honest.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    lines = flood.stats["drips"]
    row.sent = (f"50 conns from {ATTACKER}, a head of up to 8.1 KB as `A:b\\r\\n` lines, one per send (TCP_NODELAY, "
                f"every 2.5 ms), never the blank line; reopened when closed: {lines} lines ({lines / wall:.0f}/s)")
    row.did = f"attackers: {flood.summary()}"
    row.expect_ok = True


def play_valid_first(conn, up, timeline, pages, valid_s):
    """An edge upstream's start: the valid stream until `valid_s` after its first connection; returns when the
    attack begins."""
    if "t0" not in timeline:
        timeline["t0"] = time.monotonic()
    t_attack = timeline["t0"] + valid_s
    if time.monotonic() < t_attack:
        send_realtime(conn, up, pages, t_attack)
    return t_attack


def start_edge_attack(ctx, row, scene, handler, timeline, valid_s):
    """An edge whose upstream is `handler`, its honest listener, and the meter started once the upstream's valid
    part is over; returns the upstream, the server, the listener, the meter and where the log stood."""
    up, srv = edge_attack_setup(ctx, row, scene, handler)
    time.sleep(1.0)
    honest = scene.add(Honest(ctx, srv.http_port, "/edge.opus", row.name).start())
    wait_until(lambda: "t0" in timeline and time.monotonic() >= timeline["t0"] + valid_s, 5)
    return up, srv, honest, Meter(srv.pid).start(), srv.log_size()


def edge_attack_setup(ctx, row, scene, handler, wait_connect=5.0):
    up = scene.add(Upstream(ctx, handler))
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name, [edge_station(up, port)]).start())
    wait_until(lambda: up.connections >= 1, wait_connect)
    return up, srv


# 6
def attack_oggs_flood(ctx, row, scene):
    valid_s, garbage_s, rate = 2.0, 15.0, 1_000_000
    fx = ctx.fixtures["stereo"]
    # False capture patterns: "OggS", version 0, then 59 random bytes (type, granule, serial, seq, CRC, a random
    # segment count and lacing values): each looks like the start of a page of up to 64 KB.
    block = b"".join(b"OggS\x00" + os.urandom(59) for _ in range(4 * rate // 64))
    timeline = {}

    def handler(conn, up, n):
        t_end = play_valid_first(conn, up, timeline, fx.pages, valid_s) + garbage_s + 2
        pos, sent, t1 = 0, 0, time.monotonic()
        while not up.stop_event.is_set() and time.monotonic() < t_end:
            due = (time.monotonic() - t1) * rate
            if sent > due:
                time.sleep(0.01)
                continue
            chunk = block[pos:pos + 16384]
            pos = (pos + 16384) % (len(block) - 16384)
            conn.sendall(chunk)
            sent += len(chunk)
            with up.lock:
                up.counters["garbage"] += len(chunk)

    up, srv, honest, meter, log0 = start_edge_attack(ctx, row, scene, handler, timeline, valid_s)
    time.sleep(garbage_s)
    row.measure(meter)
    st = srv.station("edge")
    honest.stop()
    up.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    lines, top = log_summary(srv.log_text(log0))
    row.sent = (f"edge upstream tcp://: {valid_s} s of valid Ogg Opus, then {up.counters['garbage'] / 1e6:.1f} MB in "
                f"{garbage_s:.0f} s of `OggS\\0`+59 random bytes (false capture patterns)")
    row.did = (f"upstream connections {up.connections}, state {st.get('upstream_state', '?')}, reconnects "
               f"{st.get('reconnects', '?')}, silence {st.get('silence_seconds', '?')} s; {lines} log lines (most: "
               f"{top})")
    row.expect_ok = True


# 7
def attack_link_flood(ctx, row, scene):
    valid_s, flood_s, per_s = 2.0, 10.0, 50
    st_fx, mono_fx = ctx.fixtures["stereo"], ctx.fixtures["mono"]
    timeline = {}

    def handler(conn, up, n):
        t_end = play_valid_first(conn, up, timeline, st_fx.pages, valid_s) + flood_s + 1
        k = 0
        t1 = time.monotonic()
        while not up.stop_event.is_set() and time.monotonic() < t_end:
            due = t1 + k / per_s - 0.1
            if time.monotonic() < due:
                time.sleep(min(0.02, due - time.monotonic()))
                continue
            fx = st_fx if k % 2 == 0 else mono_fx
            serial = random.getrandbits(32)
            packet = fx.audio[(k // 2) % len(fx.audio)]
            pages = (build_page([fx.head], 0, serial, 0, htype=2) + build_page([fx.tags], 0, serial, 1)
                     + build_page([packet], 960, serial, 2, htype=4))
            conn.sendall(pages)
            k += 1
            with up.lock:
                up.counters["links"] += 1

    up, srv, honest, meter, log0 = start_edge_attack(ctx, row, scene, handler, timeline, valid_s)
    time.sleep(flood_s)
    lines, top, st, links = end_flood(row, meter, srv, log0, honest, up, "edge")
    row.sent = (f"edge upstream tcp://: {up.counters['links']} chained links in {flood_s:.0f} s ({per_s}/s: new "
                f"serial, OpusHead alternating 2/1 channels, OpusTags, one 20 ms packet, EOS)")
    row.did = (f"{lines} log lines in the window (most: {top}); the honest listener got {links} links; state "
               f"{st.get('upstream_state', '?')}, reconnects {st.get('reconnects', '?')}")
    row.expect_ok = lines <= LOG_LINES_MAX
    row.expect = f"{lines} log lines > {LOG_LINES_MAX}"


def end_flood(row, meter, srv, log0, honest, up, station):
    """Ends a flood row: CPU and RSS measured, the log lines of the window counted, the honest listener judged, the
    server stopped; returns the lines, the most common kind, the station's status and the links the listener got."""
    row.measure(meter)
    time.sleep(0.3)   # the log writer's queue
    lines, top = log_summary(srv.log_text(log0))
    st = srv.station(station)
    honest.stop()
    up.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    links = 0
    if os.path.exists(honest.out):
        with open(honest.out, "rb") as f:
            links = len(ogg_links(f.read()))
    return lines, top, st, links


# 8
def attack_title_flood(ctx, row, scene):
    metaint, rate, flood_s = 256, 16000, 10.0
    with open(ctx.demo_mp3, "rb") as f:
        mp3 = f.read()

    def handler(conn, up, n):
        drain_request(conn)
        conn.sendall(b"ICY 200 OK\r\nicy-name: attack\r\nicy-genre: test\r\ncontent-type: audio/mpeg\r\n"
                     b"icy-br: 128\r\nicy-metaint: 256\r\n\r\n")
        pos, sent, since, t0 = 0, 0, 0, time.monotonic()
        while not up.stop_event.is_set():
            if sent / rate - 0.5 > time.monotonic() - t0:
                time.sleep(0.02)
                continue
            size = min(metaint - since, 4096)
            chunk = mp3[pos:pos + size]
            if len(chunk) < size:
                chunk += mp3[:size - len(chunk)]
            pos = (pos + size) % len(mp3)
            since += size
            sent += size
            if since == metaint:
                with up.lock:
                    up.counters["titles"] += 1
                    k = up.counters["titles"]
                meta = f"StreamTitle='attack title {k} {random.getrandbits(32):08x}';".encode()
                meta += b"\0" * (-len(meta) % 16)
                chunk += bytes([len(meta) // 16]) + meta
                since = 0
            conn.sendall(chunk)

    up = scene.add(Upstream(ctx, handler))
    port = ctx.free_port()
    station = ("main", [("upstream", f"http://{HOST}:{up.port}/stream.mp3"), ("port", port), ("bind", HOST),
                        ("chain_titles", "yes")])
    srv = scene.add(Server(ctx, row.name, [station]).start())
    wait_until(lambda: up.connections >= 1, 5)
    time.sleep(1.5)
    honest = scene.add(Honest(ctx, srv.http_port, "/main.opus", row.name).start())
    time.sleep(0.5)
    meter = Meter(srv.pid).start()
    log0 = srv.log_size()
    titles0 = up.counters["titles"]
    time.sleep(flood_s)
    lines, top, st, links = end_flood(row, meter, srv, log0, honest, up, "main")
    row.sent = (f"MP3 upstream (ICY 200 OK, icy-metaint {metaint}, 128 kb/s real time), a new StreamTitle every block: "
                f"{up.counters['titles'] - titles0} titles in {flood_s:.0f} s; station chain_titles = yes")
    row.did = (f"{lines} log lines in the window (most: {top}); title now "
               f"'{str(st.get('title'))[:28]}'; honest listener got {links} links")
    row.expect_ok = lines <= LOG_LINES_MAX
    row.expect = f"{lines} log lines > {LOG_LINES_MAX}"


# 9
def attack_big_packets(ctx, row, scene):
    # The largest packets Opus allows, as fast as real time allows: 120 ms packets of 48 CELT frames of 2.5 ms at
    # 1275 bytes each (code 3, CBR), 61 202 bytes — 4 Mb/s that pass every size check, so that the page ring's
    # bound by bytes (not by pages) is what holds memory. (A packet larger than its duration allows is dropped
    # before the ring: that rule has its unit test.)
    valid_s, flood_s, per_s = 2.0, 15.0, 9
    fx = ctx.fixtures["stereo"]
    payload = bytes([0x83, 48]) + os.urandom(48 * 1275)
    size = len(payload)
    timeline = {}
    if libogg() is None:
        raise RuntimeError("libogg not found (ctypes): needed for the CRC of 24 MB/s of pages")

    def handler(conn, up, n):
        t_end = play_valid_first(conn, up, timeline, fx.pages, valid_s) + flood_s + 1
        serial = random.getrandbits(32)
        conn.sendall(build_page([fx.head], 0, serial, 0, htype=2) + build_page([fx.tags], 0, serial, 1))
        k, granule, t1 = 0, 0, time.monotonic()
        conn.settimeout(0.5)
        while not up.stop_event.is_set() and time.monotonic() < t_end:
            due = t1 + k / per_s - 0.2
            if time.monotonic() < due:
                time.sleep(min(0.01, due - time.monotonic()))
                continue
            granule += 5760
            page = build_page([payload], granule, serial, k + 2)
            try:
                conn.sendall(page)
            except socket.timeout:
                with up.lock:
                    up.counters["blocked"] += 1
                continue
            k += 1
            with up.lock:
                up.counters["pages"] += 1
                up.counters["bytes"] += len(page)

    # What the edge holds of 4 Mb/s by design, at the defaults (max_lag 10, burst 2, HLS on): its page ring, bounded
    # by bytes (Station.ringBytes: (2 x max_lag + burst + 2) s at Opus's 510 kb/s, + 1 MiB), and the HLS segments
    # it keeps fetchable (HLSSegmenter.Settings.maxBytes, 8 MiB), with 2 MB for the allocator and buffers. The
    # 10 MB of the other rows predates HLS, whose bound alone is 8 MiB: this row's growth stops at this figure.
    ring = (2 * 10 + 2 + 2) * 2 * 510_000 / 8 + (1 << 20)
    row.rss_max = (ring + (8 << 20)) / 1e6 + 2.0
    up, srv, honest, meter, log0 = start_edge_attack(ctx, row, scene, handler, timeline, valid_s)
    time.sleep(flood_s)
    row.measure(meter)
    time.sleep(0.3)
    lines, top = log_summary(srv.log_text(log0))
    st = srv.station("edge")
    honest.stop()
    up.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    row.sent = (f"edge upstream tcp://: {up.counters['pages']} pages in {flood_s:.0f} s, each one {size}-byte packet "
                f"of 48 × 2.5 ms CELT frames, 120 ms, the most Opus allows ({up.counters['bytes'] / 1e6 / flood_s:.1f} MB/s)")
    row.did = (f"the honest listener got {honest.bytes / 1e3:.0f} kB in {honest.seconds():.0f} s; bytes_out "
               f"{st.get('bytes_out', '?')}, state "
               f"{st.get('upstream_state', '?')}; log: {lines} lines (most: {top})")
    try:
        os.unlink(honest.out)   # up to a few hundred MB
    except OSError:
        pass
    row.expect_ok = True


# 10
def attack_dns_blackhole(ctx, row, scene):
    if os.geteuid() != 0:
        row.failures.append("not run: needs root (unshare -m, mount --bind, port 53 on 127.0.0.2)")
        row.sent = "-"
        row.did = "-"
        return
    resolv = os.path.join(ctx.work, "resolv.conf")
    with open(resolv, "w") as f:
        f.write("nameserver 127.0.0.2\noptions timeout:30 attempts:5\n")
    sink = scene.add(DNSSink())
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name, [("dns", [("upstream", "tcp://blackhole.test:9"), ("port", port),
                                                    ("bind", HOST)])], resolv=resolv).start())
    honest = scene.add(Honest(ctx, srv.http_port, "/dns.opus", row.name).start())
    meter = Meter(srv.pid).start()
    # 12 s: past the station's 10 s connect timeout, so the resolution's timing out is seen too.
    polls = poll_health(srv.status_port, 0.5, 12)
    row.measure(meter)
    st = srv.station("dns")
    honest.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    codes, ms, text = health_summary(polls)
    bad = sum(1 for c, _ in polls if c != 200)
    row.sent = ("station upstream tcp://blackhole.test:9; server under unshare -m, resolv.conf: nameserver "
                "127.0.0.2, timeout:30 attempts:5; a UDP sink on 127.0.0.2:53 never answers")
    row.did = (f"{text}; DNS queries seen {sink.queries}; state {st.get('upstream_state', '?')}, alive "
               f"{st.get('alive', '?')}, last error: {st.get('last_error', '-')}")
    row.expect_ok = bad == 0 and bool(polls)
    row.expect = f"{bad}/{len(polls)} /health not 200"


class DNSSink:
    """A UDP socket on 127.0.0.2:53 that reads queries and never answers."""

    def __init__(self):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.bind((ATTACKER, 53))
        self.s.settimeout(0.2)
        self.queries = 0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_event.is_set():
            try:
                self.s.recvfrom(4096)
                self.queries += 1
            except socket.timeout:
                continue
            except OSError:
                return

    def stop(self):
        self.stop_event.set()
        self.thread.join(2)
        self.s.close()


# 11
def attack_multichannel(ctx, row, scene):
    serve_s, total_s = 5.0, 12.0
    fx = ctx.fixtures["six"]
    timeline = {}

    def handler(conn, up, n):
        if "t0" not in timeline:
            timeline["t0"] = time.monotonic()
        t_end = timeline["t0"] + serve_s
        send_realtime(conn, up, fx.pages, t_end)
        if time.monotonic() >= t_end:
            up.close_listener()   # the outage: the connection closes and reconnects are refused
            timeline["outage"] = time.monotonic()

    up, srv = edge_attack_setup(ctx, row, scene, handler)
    time.sleep(1.0)
    honest = scene.add(Honest(ctx, srv.http_port, "/edge.opus", row.name).start())
    meter = Meter(srv.pid).start()
    time.sleep(max(0.0, total_s - 1.0))
    row.measure(meter)
    st = srv.station("edge")
    honest.stop()
    up.stop()
    row.honest_ok, row.honest = honest.verdict(decode=True)
    finish_server(row, srv)
    text = srv.log_text()
    relevant = [ln.split(" ", 1)[-1] for ln in text.splitlines()
                if re.search(r"channel|mapping|famil|multi|link|refus|OpusHead|upstream", ln, re.I)
                and "listener" not in ln]
    clear = [ln for ln in relevant if re.search(r"channel|mapping|famil|multi", ln, re.I)]
    links = []
    if os.path.exists(honest.out):
        with open(honest.out, "rb") as f:
            links = ogg_links(f.read())
    chans = "/".join(str(c) for _s, c, _f, _n in links) or "none"
    relayed = any(c == 6 for _s, c, _f, _n in links)
    row.sent = (f"edge upstream tcp://: 6-channel Ogg Opus (mapping family 1, 4 streams) at real time for "
                f"{serve_s:.0f} s, then closed and refusing for {total_s - serve_s - 1:.0f} s")
    row.did = (("relayed" if relayed else "not relayed") + f"; listener links' channels {chans}; state "
               f"{st.get('upstream_state', '?')}, last_error "
               f"{re.sub(r'^[a-z]+://[^ ]*: ', '', str(st.get('last_error')))[:40]}; log: "
               + (clear[0][:90] if clear else (relevant[0][:90] if relevant else "nothing about it")))
    refused_clearly = bool(clear) and not relayed
    row.expect_ok = (refused_clearly or relayed) and row.honest_ok
    row.expect = ("neither refused with a clear log line nor relayed" if not (refused_clearly or relayed)
                  else "what the listener got does not decode cleanly")


# 12, 13: the same attacks from the health check's own address (every client of a status endpoint on 127.0.0.1 has
# one address: a per-address cap that refuses the newest is a global cap there)
def attack_status_idle_same(ctx, row, scene):
    status_attack(ctx, row, scene, dict(n=1000, source=HOST),
                  f"1000 silent conns to the status port from {HOST} (reopened when closed, <= 500/s), from a "
                  f"process of their own (a leaky agent); GET /health from {HOST} every 0.1 s for 10 s",
                  separate=True)


def attack_http_idle_same(ctx, row, scene):
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name, [demo_station(ctx, port)]).start())
    time.sleep(1.0)
    meter = Meter(srv.pid).start()
    flood = scene.add(Flood(1000, srv.http_port, source=HOST, reopen_per_s=500).start())
    placed = flood.wait_in_place(5)
    time.sleep(0.3)
    answers = []
    for _ in range(20):
        code, data, dt, err = http_request(srv.http_port, b"GET /main.opus HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                                           timeout=0.3)
        ok = data.startswith(b"HTTP/1.1 200 OK") and b"OggS" in data
        first = data.find(b"\r\n")
        answers.append((ok, code, err))
        time.sleep(0.2)
    honest = scene.add(Honest(ctx, srv.http_port, "/main.opus", row.name).start())
    time.sleep(3)
    flood.stop()
    row.measure(meter)
    honest.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    served = sum(1 for ok, _c, _e in answers if ok)
    row.sent = (f"1000 silent conns to the HTTP address from {HOST} ({'in place' if placed else 'partly in place'}, "
                f"reopened when closed); 20 × GET /main.opus from {HOST}, 0.3 s each")
    row.did = f"{served}/20 stream requests got 200 and Ogg; attackers: {flood.summary()}"
    row.expect_ok = served == 20
    row.expect = f"{20 - served}/20 stream requests from the busy address not served"


# 14: idle title subscribers under a small descriptor limit
def attack_events_idle(ctx, row, scene):
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name, [demo_station(ctx, port, extra=[("max_per_ip", "0")])],
                           prefix=["prlimit", "--nofile=600"]).start())
    time.sleep(1.0)
    meter = Meter(srv.pid).start()
    opening = b"GET /main/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    # One after another (200 a second), as a client that keeps opening them would: each is a subscription before the
    # next arrives, so the front end's cap on unfinished requests plays no part.
    flood = scene.add(Flood(700, srv.http_port, opening=opening, reopen=False, reads=False, first_burst=1,
                            reopen_per_s=200).start())
    flood.wait_in_place(8)
    time.sleep(1.0)
    held_start = flood.held()
    code, data, _dt, err = http_request(port, b"", timeout=1.0)
    raw_ok = b"OggS" in data
    honest = scene.add(Honest(ctx, srv.http_port, "/main.opus", row.name).start())
    time.sleep(EVENTS_HOLD_S)
    held_end = flood.held()
    st = srv.station("main")
    flood.stop()
    row.measure(meter)
    honest.stop()
    row.honest_ok, row.honest = honest.verdict()
    finish_server(row, srv)
    row.sent = (f"700 GET /main/events from {ATTACKER} that never read, the server under prlimit --nofile=600; a raw "
                f"listener and GET /main.opus from {HOST}")
    row.did = (f"subscriptions held {held_start} at first, {held_end} after {EVENTS_HOLD_S:.0f} s; raw listener "
               f"{'got OggS' if raw_ok else 'got no audio (' + str(err) + ')'}; attackers: {flood.summary()}; "
               f"listeners {st.get('listeners', '?')}")
    row.expect_ok = raw_ok and held_end <= 64
    row.expect = ("" if raw_ok else "the raw listener was not served; ") + (
        f"{held_end} subscriptions from one address held" if held_end > 64 else "")


EVENTS_HOLD_S = 60.0


# 15: the access log on a FIFO (a log shipper): stalled, gone at a reload, absent at start-up
FIFO_STOP_LIMIT_S = 8.0   # how long a SIGTERM is waited for before the server counts as hung (then SIGKILL)
def fifo_bytes(fd):
    import fcntl
    import termios
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def attack_access_fifo(ctx, row, scene):
    results = []
    # a) a reader that never reads; 1500 short visits; SIGTERM
    fifo = os.path.join(ctx.work, f"{row.name}-a.fifo")
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name + "-a", [demo_station(ctx, port, extra=[("max_per_ip", "0")])],
                           server_keys=[("access_log", fifo)]).start())
    meter = Meter(srv.pid).start()
    for _ in range(15):
        socks = [socket.create_connection((HOST, port)) for _ in range(100)]
        time.sleep(0.02)
        for sk in socks:
            sk.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and fifo_bytes(reader) < 48000:
        time.sleep(0.1)
    filled = fifo_bytes(reader)
    row.measure(meter)
    took = srv.stop_time(limit=FIFO_STOP_LIMIT_S)
    stalled_log = srv.log_text()
    srv.stop()
    os.close(reader)
    results.append(("stalled reader, 1500 visits, SIGTERM", took, took is not None and took <= 3,
                    f"pipe {filled} B; " + ("'lines not written' logged" if "lines not written" in stalled_log
                                            else "no count of unwritten lines")))
    # b) the reader exits; SIGHUP; /health; SIGTERM
    fifo = os.path.join(ctx.work, f"{row.name}-b.fifo")
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name + "-b", [demo_station(ctx, port)], server_keys=[("access_log", fifo)]).start())
    for _ in range(3):
        socket.create_connection((HOST, port)).close()
    time.sleep(0.5)
    os.close(reader)
    srv.proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    code, _d, dt, err = http_request(srv.status_port, b"GET /health HTTP/1.0\r\n\r\n", timeout=3)
    took = srv.stop_time(limit=FIFO_STOP_LIMIT_S)
    srv.stop()
    results.append(("reader gone, SIGHUP, /health, SIGTERM", took,
                    code == 200 and took is not None and took <= 3,
                    f"/health {code or err} in {dt * 1000:.0f} ms"))
    # c) no reader at start-up
    fifo = os.path.join(ctx.work, f"{row.name}-c.fifo")
    os.mkfifo(fifo)
    port = ctx.free_port()
    started, served, logged, took = False, False, False, None
    srv = Server(ctx, row.name + "-c", [demo_station(ctx, port)], server_keys=[("access_log", fifo)])
    scene.add(srv)
    try:
        srv.start()
        started = True
        _c, data, _t, _e = http_request(port, b"", timeout=1.0)
        served = b"OggS" in data
        logged = "cannot open" in srv.log_text()
        took = srv.stop_time(limit=FIFO_STOP_LIMIT_S)
    except RuntimeError:
        took = srv.stop_time(limit=FIFO_STOP_LIMIT_S) if srv.proc else None
        logged = False
    srv.stop()
    results.append(("no reader at start-up", took, started and served and logged,
                    ("station served" if served else "station did not serve within 10 s") +
                    ("; error logged" if logged else "; nothing logged")))
    row.sent = "access_log on a FIFO: " + "; ".join(r[0] for r in results)
    row.did = "; ".join(f"{what}: {'exit ' + format(t, '.2f') + ' s' if t is not None else 'still running after '}"
                        f"{'' if t is not None else format(FIFO_STOP_LIMIT_S, '.0f') + ' s, SIGKILL'}"
                        f" ({note})" for what, t, _ok, note in results)
    row.honest_ok, row.honest = True, "-"
    row.expect_ok = all(ok for _w, _t, ok, _n in results)
    row.expect = "; ".join(w for w, _t, ok, _n in results if not ok)


# 16: HTTP framing (RFC 9112)
def attack_framing(ctx, row, scene):
    port = ctx.free_port()
    srv = scene.add(Server(ctx, row.name, [demo_station(ctx, port)]).start())
    time.sleep(0.5)
    meter = Meter(srv.pid).start()
    # The HLS playlist: an answer that keeps its connection (once the first segment is there).
    wait_until(lambda: http_request(srv.http_port, b"GET /main/live.m3u8 HTTP/1.0\r\n\r\n", timeout=1)[0] == 200, 10)
    playlist = b"GET /main/live.m3u8 HTTP/1.1\r\nHost: x\r\n"
    cases = []
    for label, framing, prefix in (("GET with a body", b"Content-Length: %d\r\n" % (len(playlist) + 2), b""),
                                   ("chunked GET", b"Transfer-Encoding: chunked\r\n", b"0\r\n\r\n")):
        # The head first, the body (itself a request) a moment later, as a client or a proxy may send them.
        data = b""
        with socket.create_connection((HOST, srv.http_port), timeout=1) as sk:
            sk.sendall(playlist + framing + b"\r\n")
            time.sleep(0.3)
            try:
                sk.sendall(prefix + playlist + b"\r\n")
                end = time.monotonic() + 1.5
                while time.monotonic() < end:
                    chunk = sk.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
        answers = data.count(b"HTTP/1.1 ")
        cases.append((label, f"{answers} answers", answers == 1))
    code, _d, _t, _e = http_request(srv.http_port, b"GET /status-json.xsl HTTP/1.1\r\nHost: x\r\n"
                                    b"Content-Length: 1\r\nContent-Length: 2\r\n\r\n", timeout=2)
    cases.append(("two Content-Length", str(code), code == 400))
    code, _d, _t, _e = http_request(srv.status_port, b"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    b"Host: evil.example\r\n\r\n", timeout=2)
    cases.append(("two Host (status)", str(code), code == 400))
    code, data, _t, _e = http_request(srv.http_port, f"GET http://127.0.0.1:{srv.http_port}/main.opus HTTP/1.1\r\n"
                                      "\r\n".encode(), timeout=1)
    cases.append(("absolute form", str(code), code == 200 and b"OggS" in data))
    row.measure(meter)
    finish_server(row, srv)
    row.sent = "; ".join(c[0] for c in cases)
    row.did = "; ".join(f"{w}: {r}" for w, r, _ok in cases)
    row.honest_ok, row.honest = True, "-"
    row.expect_ok = all(ok for _w, _r, ok in cases)
    row.expect = "; ".join(w for w, _r, ok in cases if not ok)


ATTACKS = [
    ("forged-proxy", attack_forged_proxy),
    ("status-idle", attack_status_idle),
    ("status-slowloris", attack_status_slowloris),
    ("http-pending", attack_http_pending),
    ("http-head-lines", attack_http_head_lines),
    ("oggs-flood", attack_oggs_flood),
    ("link-flood", attack_link_flood),
    ("title-flood", attack_title_flood),
    ("big-packets", attack_big_packets),
    ("dns-blackhole", attack_dns_blackhole),
    ("multichannel", attack_multichannel),
    ("status-idle-same", attack_status_idle_same),
    ("http-idle-same", attack_http_idle_same),
    ("events-idle", attack_events_idle),
    ("access-fifo", attack_access_fifo),
    ("framing", attack_framing),
]


# ---------------------------------------------------------------- the run

class Ctx:
    def __init__(self, rr, repo, work):
        self.rr, self.repo, self.work = rr, repo, work
        self.demo_mp3 = os.path.join(repo, "Sources/RadioRelay/Resources/demo.mp3")
        self.pid_file = os.path.join(work, "pids")
        self.ports = set()
        self._fixtures = None

    @property
    def fixtures(self):
        if self._fixtures is None:
            self._fixtures = make_fixtures(self.work)
        return self._fixtures

    def free_port(self):
        while True:
            p = free_port(HOST)
            if p not in self.ports:
                self.ports.add(p)
                return p

    def record_pid(self, pid):
        with open(self.pid_file, "a") as f:
            f.write(f"{pid}\n")


def listening_ports():
    """Local ports in LISTEN (TCP) or bound (UDP) right now, from /proc/net."""
    out = set()
    for name, state in (("tcp", "0A"), ("tcp6", "0A"), ("udp", None), ("udp6", None)):
        try:
            with open(f"/proc/net/{name}") as f:
                next(f)
                for line in f:
                    p = line.split()
                    if state is None or p[3] == state:
                        addr, port = p[1].rsplit(":", 1)
                        out.add((name, addr, int(port, 16)))
        except OSError:
            pass
    return out


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def print_tables(rows, md_path=None):
    def fmt(v, spec):
        return "-" if v is None else format(v, spec)
    hdr = ["attack", "sent", "server did", "CPU %", "RSS +MB", "honest listener", "result"]
    body = []
    for r in rows:
        verdict, why = r.verdict()
        body.append([r.name, r.sent, r.did + ("; " + "; ".join(r.notes) if r.notes else ""), fmt(r.cpu, ".1f"),
                     fmt(r.rss, ".1f"), r.honest, verdict + (f": {why}" if why else "")])
    print()
    print("== summary (bounds: CPU <= %.0f %% of one core, RSS growth <= %.0f MB, honest stream valid, and each "
          "attack's own expectation)" % (CPU_MAX, RSS_MAX_MB))
    w = [18, 7, 7]
    print(f"{'attack':<{w[0]}} {'CPU %':>{w[1]}} {'RSS +MB':>{w[2]}}  result / honest listener")
    for b in body:
        print(f"{b[0]:<{w[0]}} {b[3]:>{w[1]}} {b[4]:>{w[2]}}  {b[6]}")
        print(f"{'':<{w[0]}} {'':>{w[1]}} {'':>{w[2]}}  honest: {b[5]}")
        print(f"{'':<{w[0]}} {'':>{w[1]}} {'':>{w[2]}}  sent: {b[1]}")
        print(f"{'':<{w[0]}} {'':>{w[1]}} {'':>{w[2]}}  did: {b[2]}")
    md = ["| " + " | ".join(hdr) + " |", "|" + "|".join(["---"] * len(hdr)) + "|"]
    md += ["| " + " | ".join(cell(x) for x in b) + " |" for b in body]
    print()
    print("\n".join(md))
    if md_path:
        with open(md_path, "w") as f:
            f.write("\n".join(md) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("attacks", nargs="*", help="attacks to run (default: all)")
    ap.add_argument("--radio-relay", required=False)
    ap.add_argument("--repo", required=False)
    ap.add_argument("--work", required=False)
    ap.add_argument("--markdown", help="also write the markdown table here")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--list", action="store_true", help="list the attacks and exit")
    args = ap.parse_args()
    names = [n for n, _ in ATTACKS]
    if args.list:
        print("\n".join(names))
        return 0
    unknown = [a for a in args.attacks if a not in names]
    if unknown:
        print(f"attack: unknown attack {', '.join(unknown)}; known: {', '.join(names)}", file=sys.stderr)
        return 64
    if not (args.radio_relay and args.repo and args.work):
        print("attack: --radio-relay, --repo and --work are needed (bench/attack.sh gives them)", file=sys.stderr)
        return 64
    chosen = [(n, f) for n, f in ATTACKS if not args.attacks or n in args.attacks]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 20000 if hard == resource.RLIM_INFINITY else min(20000, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 5000:
        log(f"warning: open files limited to {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}: floods will be smaller")

    def on_term(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_term)

    def on_alarm(_s, _f):
        raise RowTimeout()
    signal.signal(signal.SIGALRM, on_alarm)

    ctx = Ctx(os.path.abspath(args.radio_relay), os.path.abspath(args.repo), os.path.abspath(args.work))
    before = listening_ports()
    rows = []
    interrupted = False
    for name, fn in chosen:
        row = Row(name)
        scene = Scene(row)
        log(f"{name}: start")
        t0 = time.monotonic()
        limit = ROW_LIMITS_S.get(name, ROW_LIMIT_S)
        signal.alarm(limit)
        try:
            fn(ctx, row, scene)
        except RowTimeout:
            row.failures.append(f"cut after {limit} s")
        except KeyboardInterrupt:
            row.failures.append("interrupted")
            interrupted = True
        except Exception as e:
            row.failures.append(f"script error: {e}"[:200])
            traceback.print_exc(file=sys.stderr)
        finally:
            signal.alarm(0)
            scene.close()
        row.seconds = time.monotonic() - t0
        rows.append(row)
        verdict, why = row.verdict()
        log(f"{name}: {verdict} in {row.seconds:.1f} s; cpu {row.cpu if row.cpu is None else round(row.cpu, 1)} %, "
            f"rss +{row.rss if row.rss is None else round(row.rss, 1)} MB; honest: {row.honest}; {why}")
        log(f"{name}: sent: {row.sent}")
        log(f"{name}: did: {row.did}")
        if interrupted:
            break
    time.sleep(0.2)
    left = {p for p in listening_ports() - before if p[2] in ctx.ports or (p[0] == "udp" and p[2] == 53)}
    if left:
        log(f"still listening after the run: {sorted(left)}")
    else:
        log("nothing of the run is left listening")
    print_tables(rows, args.markdown)
    if args.json:
        write_json(args.json, [dict(r.__dict__, verdict=r.verdict()) for r in rows], indent=1)
    if interrupted:
        return 130
    failed = [r.name for r in rows if r.verdict()[0] != "PASS"]
    print(f"\nresult: {len(rows) - len(failed)} of {len(rows)} passed" + (f"; failed: {', '.join(failed)}" if failed
                                                                          else ""))
    return 1 if failed or left else 0


if __name__ == "__main__":
    sys.exit(main())
