"""What every row of bench/attack.py shares: the bounds, the server under attack (`Server`) and what measures it
(`Meter`), one request on a fresh connection, a row and what it started (`Row`, `Scene`), the run's context (`Ctx`)
and the tables. The honest listener, the attackers' connections and their upstreams are in listener.py, flood.py and
upstream.py."""
import collections
import json
import os
import re
import socket
import subprocess
import threading
import time

from benchlib import CLK_TCK, free_port, logger, proc_status_kb, proc_ticks, stop_process

from .ogg import make_fixtures


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
