"""bench/attack.py's rows against a station's PROXY header and the status endpoint: forged-proxy, status-idle,
status-slowloris, dns-blackhole (/health while the upstream's name never resolves), status-idle-same."""
import os
import selectors
import socket
import threading
import time

from .flood import Flood, ProcessFlood, health_summary, poll_health
from .harness import ATTACKER, HEALTH_MS_MAX, HOST, Meter, Server, demo_station, finish_server
from .listener import Honest


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


# 12, 13: the same attacks from the health check's own address (every client of a status endpoint on 127.0.0.1 has
# one address: a per-address cap that refuses the newest is a global cap there)
def attack_status_idle_same(ctx, row, scene):
    status_attack(ctx, row, scene, dict(n=1000, source=HOST),
                  f"1000 silent conns to the status port from {HOST} (reopened when closed, <= 500/s), from a "
                  f"process of their own (a leaky agent); GET /health from {HOST} every 0.1 s for 10 s",
                  separate=True)
