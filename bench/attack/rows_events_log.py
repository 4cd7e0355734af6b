"""bench/attack.py's rows on what a server holds and writes for others: idle title subscribers (events-idle) and the
access log on a FIFO (access-fifo)."""
import os
import signal
import socket
import struct
import time

from .flood import Flood
from .harness import ATTACKER, HOST, Meter, Server, demo_station, finish_server, http_request
from .listener import Honest


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
