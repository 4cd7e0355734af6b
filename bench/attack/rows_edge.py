"""bench/attack.py's rows from an upstream the attacker runs: an edge's Ogg Opus upstream (oggs-flood, link-flood,
big-packets, multichannel) and an MP3 station's ICY upstream (title-flood)."""
import os
import random
import re
import socket
import time

from benchlib import build_page, libogg, wait_until

from .harness import HOST, LOG_LINES_MAX, Meter, Server, edge_station, finish_server, log_summary
from .listener import Honest
from .ogg import ogg_links
from .upstream import Upstream, drain_request, send_realtime


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
