"""bench/attack.py's rows against the HTTP front end: http-pending, http-head-lines, http-idle-same, framing."""
import socket
import time

from benchlib import wait_until

from .flood import Flood
from .harness import ATTACKER, HOST, Meter, Server, demo_station, finish_server, http_request
from .listener import Honest


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


# 13: status-idle-same's idle connections on the HTTP address, from the address of the stream requests
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
