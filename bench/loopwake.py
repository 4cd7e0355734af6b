#!/usr/bin/env python3
"""Work per wake-up of radio-relay's loops, with 0 and then IDLE idle connections attached.

Usage: loopwake.py PID STATION_PORT HTTP_PORT STATUS_PORT IDLE REQUESTS ROUNDS HOLD

The server (PID) serves its demo station with --http and --status. For the HTTP front end's loop (thread "http"):
REQUESTS requests it answers itself (GET of a missing path: a 404, one accept, one read, one answer, one close) are
made one after another, and the loop thread's CPU time (/proc/PID/task/TID/schedstat, nanoseconds) and its
wake-ups (radio_relay_loop_wakeups_total{loop="http"} from /metrics) are read before and after. Then IDLE title
event subscribers (GET /main/events, kept open and never read again: the loop keeps them and sends a keep-alive
every 15 s) are attached from 127.0.0.2 ... 127.0.0.255, and the same requests are made again; then the subscribers leave, ROUNDS times (medians). A loop whose
wake-ups look at every connection costs more per wake-up with the subscribers attached; one that looks only at
what is due costs the same.

For the station's network loop (thread "net", --network-threads 1, radio_relay_network_loop_wakeups_total): its wake-ups are the
pipeline's publications (a page every 100 ms) and whatever is due. Its CPU per wake-up is read over HOLD seconds with
no listener, then with IDLE raw listeners that stopped reading (a 1 KiB receive buffer, never read: their sockets back
up within seconds, and the server runs with --max-lag 600 so that none is moved or dropped while measured). A loop
that tries each backed-up listener at every publication costs more per wake-up with them; one that waits for their
socket to drain (EPOLLOUT) or their lag to cross a line costs the same.

Prints one line per phase, then the medians and the ratio idle/none.
"""
import re
import socket
import statistics
import sys
import time
import urllib.request

from benchlib import http_get, thread_cpu_ns

def thread_ns(pid, name):
    ns = thread_cpu_ns(pid, name)
    if ns is None:
        raise SystemExit(f"loopwake: no thread {name} in {pid}")
    return ns


def wakeups(status_port, loop):
    text = urllib.request.urlopen(f"http://127.0.0.1:{status_port}/metrics", timeout=5).read().decode()
    if loop == "net":
        pattern = r'^radio_relay_network_loop_wakeups_total\{station="main",rendition="[^"]*"\} (\d+)$'
    else:
        pattern = r'^radio_relay_loop_wakeups_total\{loop="%s"\} (\d+)$' % re.escape(loop)
    match = re.search(pattern, text, re.M)
    return int(match.group(1)) if match else None  # a build from before the count


def request(port):
    status, head, _ = http_get(port, "/loopwake-missing")
    if status != 404:
        raise SystemExit(f"loopwake: unexpected answer {head[:40]!r}")


def listeners(status_port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{status_port}/metrics", timeout=5).read().decode()
    match = re.search(r'^radio_relay_listeners\{station="main",rendition="[^"]*"\} (\d+)$', text, re.M)
    return int(match.group(1)) if match else -1


def phase(label, pid, http_port, status_port, count, thread="http", hold=None):
    before_ns, before_wakes = thread_ns(pid, thread), wakeups(status_port, thread)
    started = time.monotonic()
    if hold is not None:
        time.sleep(hold)
        count = 1
    else:
        for _ in range(count):
            request(http_port)
    elapsed = time.monotonic() - started
    after_ns, after_wakes = thread_ns(pid, thread), wakeups(status_port, thread)
    cpu_us = (after_ns - before_ns) / 1000
    if before_wakes is None or after_wakes is None:
        wakes, per_wake, shown = None, None, "      ? wake-ups  "
    else:
        wakes = max(1, after_wakes - before_wakes)
        per_wake = cpu_us / wakes
        shown = f"{wakes:>7} wake-ups  "
    what = f"{elapsed:5.1f} s held        " if hold is not None else f"{count:>6} requests in {elapsed:5.1f} s"
    print(f"{label:<32} {what}  {shown}{cpu_us / 1000:8.1f} ms CPU  "
          + (f"{per_wake:7.2f} µs per wake-up  " if per_wake is not None else "      ? µs per wake-up  ")
          + (f"{cpu_us / count:7.2f} µs per request" if hold is None else ""), flush=True)
    return per_wake, cpu_us / count


def attach(http_port, count):
    subscribers = []
    for i in range(count):
        source = f"127.0.0.{2 + i % 254}"
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((source, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", http_port))
        s.sendall(b"GET /main/events HTTP/1.1\r\nHost: bench\r\n\r\n")
        subscribers.append(s)
    # Each has its answer head and the current title: read them so that every subscriber is in place.
    for s in subscribers:
        head = s.recv(4096)
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            raise SystemExit(f"loopwake: subscriber refused: {head[:80]!r}")
    return subscribers


def stall(station_port, count):
    stalled = []
    for i in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        s.bind((f"127.0.0.{2 + i % 254}", 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", station_port))
        stalled.append(s)
    return stalled


def report(title, idle, nones, manys, units):
    print(f"{title}: medians of {len(nones)} rounds")
    for index, what in units:
        none = [p[index] for p in nones if p[index] is not None]
        many = [p[index] for p in manys if p[index] is not None]
        if not none or not many:
            print(f"  {what}: not counted by this build")
            continue
        print(f"  {what:<15} 0 idle {statistics.median(none):7.2f}   {idle} idle {statistics.median(many):7.2f}   "
              f"ratio {statistics.median(many) / statistics.median(none):.2f}", flush=True)


def main():
    pid, station_port, http_port, status_port, idle, count, rounds, hold = (int(a) for a in sys.argv[1:9])
    nones, manys = [], []
    for round in range(1, rounds + 1):
        nones.append(phase(f"http {round}: 0 idle", pid, http_port, status_port, count))
        started = time.monotonic()
        subscribers = attach(http_port, idle)
        print(f"http {round}: attached {len(subscribers)} idle title subscribers in "
              f"{time.monotonic() - started:.1f} s", flush=True)
        time.sleep(1)
        manys.append(phase(f"http {round}: {idle} idle", pid, http_port, status_port, count))
        for s in subscribers:
            s.close()
        time.sleep(2)  # the server closes them
    report("HTTP front end (thread http)", idle, nones, manys, ((0, "µs per wake-up"), (1, "µs per request")))

    nones, manys = [], []
    for round in range(1, rounds + 1):
        nones.append(phase(f"station {round}: 0 listeners", pid, 0, status_port, 0, "net", hold))
        started = time.monotonic()
        stalled = stall(station_port, idle)
        print(f"station {round}: connected {len(stalled)} listeners that never read in "
              f"{time.monotonic() - started:.1f} s; their sockets back up", flush=True)
        time.sleep(8)
        manys.append(phase(f"station {round}: {idle} stalled", pid, 0, status_port, 0, "net", hold))
        held = listeners(status_port)
        if held != idle:
            print(f"station {round}: warning: {held} of the {idle} stalled listeners still connected", flush=True)
        for s in stalled:
            s.close()
        time.sleep(3)
    report("station network loop (thread net)", idle, nones, manys, ((0, "µs per wake-up"),))


if __name__ == "__main__":
    main()
