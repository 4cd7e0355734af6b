"""Upstreams the attacker runs for bench/attack.py's edge and MP3 rows: a TCP server on 127.0.0.1 with a handler per
connection, and what the handlers send and read with."""
import collections
import socket
import threading
import time

from .harness import HOST


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
