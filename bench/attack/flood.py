"""The attackers' connections of bench/attack.py's rows (`Flood` on a thread, `ProcessFlood` in a process of its own)
and the /health polling that runs beside them."""
import collections
import errno
import random
import re
import selectors
import socket
import statistics
import threading
import time

from .harness import ATTACKER, HOST, http_request


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
