#!/usr/bin/env python3
"""N live-HLS players in one asyncio process, on loopback, each one behaving as hls.js and ffmpeg do.

    python3 bench/hls.py --port P [--path /main/live.m3u8] -n 1000 --ramp 10 --duration 120 [--settle 2]
                         [--tail 0] [--json FILE]

Each client:
- keeps one HTTP/1.1 connection (keep-alive). When the server closes it (`Connection: close`, or EOF/reset on a kept
  connection before any byte of the next answer), the client opens a new one, retries that request once and counts a
  reconnect;
- GETs the media playlist, then the init segment (`EXT-X-MAP`) once, and again only when the map of the next
  segment differs from the last one it loaded;
- starts 3 segments from the live edge (hls.js `liveSyncDurationCount`, ffmpeg `live_start_index -3`) and then GETs
  every new segment once, in order; if it fell out of the window it jumps to the oldest listed segment (counted);
- reloads the playlist one target duration after the previous reload was sent when that one had changed (a new
  media sequence or a new last segment), and after half of it when it had not (RFC 8216 6.3.4, hls.js);
- parses every answer: the status line, the headers, a Content-Length body (or chunked, or to EOF with
  `Connection: close`); checks that each segment body starts with a `moof` box and each init segment with `ftyp`;
- models playback: the clock starts when the first media segment arrives; a segment that arrives after everything
  before it has played out is a stall (counted with its length).

Counted per client: requests (by kind), bytes (bodies, and everything received: status lines, headers, bodies),
segments and init segments fetched, 404s, 503s, other statuses, bad bodies, timeouts (10 s per request),
connection errors, reconnects, stalls. The clients open over --ramp seconds (evenly), run until ramp + duration,
go on for --tail s, then stop. The steady window runs from ramp + settle to ramp + duration: its counters are
reported apart (totals, per second, medians over the clients), with this process's own CPU time over it.

Prints a short summary and, with --json, writes everything as JSON. Exit status 0 when no client saw an error
(404, 503, other status, bad body, timeout, connection error), 1 otherwise, 2 for bad usage. Loopback only.
Python 3.11+ standard library only.
"""

import argparse
import asyncio
import ipaddress
import resource
import statistics
import sys
import time
import urllib.parse

from benchlib import self_cpu_seconds, write_json

FIELDS = (
    "requests",
    "playlist_requests",
    "init_requests",
    "segment_requests",
    "bytes_total",
    "bytes_body",
    "segments",
    "inits",
    "status_404",
    "segment_404",
    "status_503",
    "status_other",
    "bad_body",
    "timeouts",
    "conn_errors",
    "reconnects",
    "server_closes",
    "behind_jumps",
    "stalls",
    "stall_ms",
    "playlist_changed",
    "playlist_unchanged",
)
IDX = {name: i for i, name in enumerate(FIELDS)}
ERROR_FIELDS = ("status_404", "status_503", "status_other", "bad_body", "timeouts", "conn_errors")
REQUEST_TIMEOUT = 10.0


class ServerClosed(Exception):
    """The server closed a kept connection before any byte of the answer (a reconnect, not an error)."""


class Connection:
    """One kept HTTP/1.1 connection: GET, parse the answer, reopen when needed."""

    def __init__(self, host, port, counts):
        self.host = host
        self.port = port
        self.counts = counts
        self.reader = None
        self.writer = None
        self.used = False  # an answer was read on this connection already (so it is a kept one)
        self.opened = 0

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
        self.used = False
        self.opened += 1
        if self.opened > 1:
            self.counts[IDX["reconnects"]] += 1

    def close(self):
        if self.writer is not None:
            self.writer.transport.abort()
        self.reader = self.writer = None

    async def get(self, path):
        """(status, headers, body) for GET path; retries once on a new connection when a kept one was closed."""
        for attempt in (0, 1):
            if self.writer is None:
                await self.open()
            try:
                return await self._exchange(path)
            except ServerClosed:
                self.close()
                if attempt == 1:
                    raise ConnectionError("closed before any byte of the answer, on a new connection")
                continue
        raise AssertionError("unreachable")

    async def _exchange(self, path):
        counts = self.counts
        self.writer.write(
            b"GET %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: radio-relay-bench-hls\r\nAccept: */*\r\n\r\n"
            % (path.encode(), self.host.encode(), self.port)
        )
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            if not error.partial and self.used:
                raise ServerClosed() from None
            raise ConnectionError(f"EOF in the answer's head after {len(error.partial)} bytes") from None
        except ConnectionResetError:
            if self.used:
                raise ServerClosed() from None
            raise
        lines = head[:-4].split(b"\r\n")
        status_line = lines[0].split(b" ", 2)
        if len(status_line) < 2 or not status_line[0].startswith(b"HTTP/1."):
            raise ConnectionError(f"bad status line {lines[0][:80]!r}")
        status = int(status_line[1])
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep:
                raise ConnectionError(f"bad header line {line[:80]!r}")
            headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
        received = len(head)
        connection = headers.get("connection", "").lower()
        closes = "close" in connection or status_line[0] == b"HTTP/1.0" and "keep-alive" not in connection
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
            received += len(body)
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            parts = []
            while True:
                size_line = await self.reader.readuntil(b"\r\n")
                received += len(size_line)
                size = int(size_line.split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                received += len(chunk)
                if size == 0:
                    # trailers (none expected) end with an empty line; the two bytes read were that line
                    break
                parts.append(chunk[:-2])
            body = b"".join(parts)
        elif status in (204, 304) or 100 <= status < 200:
            body = b""
        else:
            body = await self.reader.read()  # to EOF
            received += len(body)
            closes = True
        counts[IDX["requests"]] += 1
        counts[IDX["bytes_total"]] += received
        counts[IDX["bytes_body"]] += len(body)
        self.used = True
        if closes:
            counts[IDX["server_closes"]] += 1
            self.close()
        return status, headers, body


class Playlist:
    __slots__ = ("target", "media_sequence", "segments", "key")

    def __init__(self, text, base):
        self.target = 2.0
        self.media_sequence = 0
        self.segments = []  # (sequence, path, duration, map path)
        duration = None
        map_path = None
        sequence = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                if line.startswith("#EXT-X-TARGETDURATION:"):
                    self.target = float(line.split(":", 1)[1])
                elif line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
                    self.media_sequence = int(line.split(":", 1)[1])
                elif line.startswith("#EXTINF:"):
                    duration = float(line[8:].split(",", 1)[0])
                elif line.startswith("#EXT-X-MAP:"):
                    for attribute in line[11:].split(","):
                        name, _, value = attribute.partition("=")
                        if name.strip() == "URI":
                            map_path = urllib.parse.urljoin(base, value.strip().strip('"'))
                continue
            if sequence is None:
                sequence = self.media_sequence
            self.segments.append((sequence, urllib.parse.urljoin(base, line), duration or self.target, map_path))
            sequence += 1
            duration = None
        last = self.segments[-1][0] if self.segments else None
        self.key = (self.media_sequence, last)


class Bench:
    def __init__(self, options):
        self.options = options
        self.counts = [[0] * len(FIELDS) for _ in range(options.n)]
        self.distinct_segments = set()
        self.distinct_inits = set()
        # path -> [first fetched in the steady window, fetches (all clients, whole run)]
        self.segment_fetches = {}
        self.times = {"playlist": [], "segment": [], "init": []}  # response times in the steady window, ms
        self.in_window = False
        self.examples = []
        self.connected = 0

    def note(self, client, text):
        if len(self.examples) < 20:
            self.examples.append(f"client {client}: {text}")

    async def client(self, i, start, end):
        options = self.options
        loop = asyncio.get_running_loop()
        await asyncio.sleep(max(0.0, start - loop.time()))
        counts = self.counts[i]
        connection = Connection(options.host, options.port, counts)
        playlist_path = options.path
        next_sequence = None
        last_key = None
        loaded_map = None
        play_until = None  # when the segments received so far have played out

        async def fetch(path, kind):
            counts[IDX[kind + "_requests"]] += 1
            sent = loop.time()
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT):
                    answer = await connection.get(path)
            except TimeoutError:
                counts[IDX["timeouts"]] += 1
                self.note(i, f"timeout on {path}")
                connection.close()
                return None, None, None, sent
            except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError) as error:
                counts[IDX["conn_errors"]] += 1
                self.note(i, f"{type(error).__name__} on {path}: {error}")
                connection.close()
                return None, None, None, sent
            if self.in_window:
                self.times[kind].append((loop.time() - sent) * 1000)
            status = answer[0]
            if status == 404:
                counts[IDX["status_404"]] += 1
                if kind == "segment":
                    counts[IDX["segment_404"]] += 1
                self.note(i, f"404 on {path}")
            elif status == 503:
                counts[IDX["status_503"]] += 1
                self.note(i, f"503 on {path}")
            elif status != 200:
                counts[IDX["status_other"]] += 1
                self.note(i, f"{status} on {path}")
            return answer[0], answer[1], answer[2], sent

        try:
            while loop.time() < end:
                status, headers, body, sent = await fetch(playlist_path, "playlist")
                if status != 200:
                    wait = 1.0
                    if status == 503:
                        try:
                            wait = float(headers.get("retry-after", "1"))
                        except ValueError:
                            pass
                    await asyncio.sleep(wait)
                    continue
                playlist = Playlist(body.decode("utf-8", "replace"), playlist_path)
                if not playlist.segments:
                    counts[IDX["status_other"]] += 1
                    self.note(i, "a playlist without segments")
                    await asyncio.sleep(playlist.target / 2)
                    continue
                changed = playlist.key != last_key
                last_key = playlist.key
                counts[IDX["playlist_changed" if changed else "playlist_unchanged"]] += 1
                first, last = playlist.segments[0][0], playlist.segments[-1][0]
                if next_sequence is None:
                    next_sequence = max(first, last - 2)
                elif next_sequence < first:
                    counts[IDX["behind_jumps"]] += 1
                    self.note(i, f"fell out of the window: wanted {next_sequence}, oldest listed {first}")
                    next_sequence = first
                for sequence, path, duration, map_path in playlist.segments:
                    if sequence < next_sequence:
                        continue
                    if loop.time() >= end:
                        break
                    if map_path is not None and map_path != loaded_map:
                        status, _, init, _ = await fetch(map_path, "init")
                        if status != 200:
                            break
                        if init[4:8] != b"ftyp":
                            counts[IDX["bad_body"]] += 1
                            self.note(i, f"init {map_path} does not start with ftyp: {init[:8]!r}")
                        counts[IDX["inits"]] += 1
                        self.distinct_inits.add(map_path)
                        loaded_map = map_path
                    status, _, segment, _ = await fetch(path, "segment")
                    if status is None:
                        break  # the connection failed: reload the playlist first
                    next_sequence = sequence + 1  # a 404 is skipped, as players do
                    if status != 200:
                        continue
                    if segment[4:8] != b"moof":
                        counts[IDX["bad_body"]] += 1
                        self.note(i, f"segment {path} does not start with moof: {segment[:8]!r}")
                    counts[IDX["segments"]] += 1
                    self.distinct_segments.add(path)
                    entry = self.segment_fetches.get(path)
                    if entry is None:
                        self.segment_fetches[path] = [self.in_window, 1]
                    else:
                        entry[1] += 1
                    now = loop.time()
                    if play_until is None:
                        play_until = now + duration
                    elif now > play_until:
                        counts[IDX["stalls"]] += 1
                        counts[IDX["stall_ms"]] += round((now - play_until) * 1000)
                        play_until = now + duration
                    else:
                        play_until += duration
                wait = sent + (playlist.target if changed else playlist.target / 2) - loop.time()
                if wait > 0:
                    await asyncio.sleep(min(wait, max(0.0, end - loop.time())))
        finally:
            connection.close()

    async def run(self):
        options = self.options
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        window_start = t0 + options.ramp + options.settle
        window_end = t0 + options.ramp + options.duration
        end = window_end + options.tail
        tasks = [
            asyncio.create_task(self.client(i, t0 + options.ramp * i / options.n, end)) for i in range(options.n)
        ]
        await asyncio.sleep(max(0.0, window_start - loop.time()))
        self.in_window = True
        before = [list(c) for c in self.counts]
        cpu_before = self_cpu_seconds()
        wall_before = time.monotonic()
        await asyncio.sleep(max(0.0, window_end - loop.time()))
        after = [list(c) for c in self.counts]
        cpu_after = self_cpu_seconds()
        wall_after = time.monotonic()
        self.in_window = False
        # let requests under way finish (bounded), then stop every client
        done, pending = await asyncio.wait(tasks, timeout=REQUEST_TIMEOUT + 1)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for task in done:
            if task.exception() is not None:
                self.note(-1, f"client task failed: {task.exception()!r}")
        return before, after, cpu_after - cpu_before, wall_after - wall_before, len(pending)


def spread(values):
    if not values:
        return {"count": 0}
    ordered = sorted(values)

    def rank(q):
        return ordered[max(0, int(-(-q * len(ordered) // 1)) - 1)]

    return {"count": len(ordered), "p50": round(rank(0.5), 3), "p99": round(rank(0.99), 3),
            "max": round(ordered[-1], 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/main/live.m3u8")
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--ramp", type=float, default=10.0)
    parser.add_argument("--duration", type=float, default=120.0, help="seconds after the ramp")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds after the ramp before the steady window")
    parser.add_argument("--tail", type=float, default=0.0, help="seconds the clients go on after the window")
    parser.add_argument("--json")
    options = parser.parse_args()
    try:
        if not ipaddress.ip_address(options.host).is_loopback:
            parser.error("loopback addresses only")
    except ValueError:
        parser.error("--host must be an IP address")
    if options.n < 1 or options.ramp < 0 or options.duration <= options.settle:
        parser.error("need -n >= 1, --ramp >= 0, --duration > --settle")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < options.n + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        if hard < options.n + 64:
            parser.error(f"open-file limit {hard} is below N + 64")

    bench = Bench(options)
    started = time.monotonic()
    before, after, window_cpu, window_seconds, stuck = asyncio.run(bench.run())
    total_cpu = self_cpu_seconds()

    totals = {name: sum(c[IDX[name]] for c in bench.counts) for name in FIELDS}
    window = {name: sum(a[IDX[name]] - b[IDX[name]] for a, b in zip(after, before)) for name in FIELDS}
    per_client = [[a[k] - b[k] for k in range(len(FIELDS))] for a, b in zip(after, before)]

    def median_of(name, per_second=False):
        values = [c[IDX[name]] for c in per_client]
        value = statistics.median(values)
        return round(value / window_seconds, 3) if per_second else value

    errors = {name: totals[name] for name in ERROR_FIELDS}
    new_segments = [count for in_window, count in bench.segment_fetches.values() if in_window]
    clients_with_errors = sum(1 for c in bench.counts if any(c[IDX[name]] for name in ERROR_FIELDS))
    distinct = len(bench.distinct_segments)
    summary = {
        "host": options.host,
        "port": options.port,
        "path": options.path,
        "clients": options.n,
        "ramp_seconds": options.ramp,
        "duration_seconds": options.duration,
        "settle_seconds": options.settle,
        "wall_seconds": round(time.monotonic() - started, 3),
        "totals": totals,
        "errors": errors,
        "error_count": sum(errors.values()),
        "clients_with_errors": clients_with_errors,
        "clients_stopped_by_cancel": stuck,
        "distinct_segments": distinct,
        "distinct_inits": len(bench.distinct_inits),
        "segment_fetches_per_distinct_segment": round(totals["segments"] / distinct, 2) if distinct else None,
        "window": {
            "seconds": round(window_seconds, 3),
            "totals": window,
            "per_second": {name: round(window[name] / window_seconds, 3) for name in
                           ("requests", "playlist_requests", "segment_requests", "bytes_total", "bytes_body")},
            "bytes_total_per_client_second": round(window["bytes_total"] / window_seconds / options.n, 1),
            "bytes_body_per_client_second": round(window["bytes_body"] / window_seconds / options.n, 1),
            "median_per_client": {
                "requests": median_of("requests"),
                "segments": median_of("segments"),
                "playlist_requests": median_of("playlist_requests"),
                "bytes_total_per_second": median_of("bytes_total", per_second=True),
                "bytes_body_per_second": median_of("bytes_body", per_second=True),
                "stalls": median_of("stalls"),
            },
            # the segments first fetched in the window, and how often each was fetched in all (the relay's answers
            # per segment when the clients go straight to it)
            "new_segments": len(new_segments),
            "fetches_per_new_segment": round(statistics.mean(new_segments), 2) if new_segments else None,
            "clients_with_stalls": sum(1 for c in per_client if c[IDX["stalls"]]),
            "response_ms": {kind: spread(values) for kind, values in bench.times.items()},
            "cpu_seconds": round(window_cpu, 3),
            "cpu_cores": round(window_cpu / window_seconds, 4),
        },
        "cpu_seconds": round(total_cpu, 3),
        "examples": bench.examples,
    }
    summary["ok"] = summary["error_count"] == 0
    if options.json:
        write_json(options.json, summary, indent=1, end="\n")
    w = summary["window"]
    print(f"hls: {options.n} clients on {options.host}:{options.port}{options.path}, ramp {options.ramp:g} s, "
          f"steady window {w['seconds']:.1f} s")
    print(f"  total: {totals['requests']} requests ({totals['playlist_requests']} playlist, "
          f"{totals['segment_requests']} segment, {totals['init_requests']} init), {totals['segments']} segments "
          f"of {distinct} distinct ({summary['segment_fetches_per_distinct_segment']} fetches each), "
          f"{totals['bytes_total'] / 1e6:.1f} MB")
    print(f"  window: {w['per_second']['requests']:.1f} requests/s, {w['bytes_total_per_client_second']:.0f} B/s "
          f"per client ({w['bytes_body_per_client_second']:.0f} in bodies), median per client "
          f"{w['median_per_client']['segments']} segments, {w['median_per_client']['requests']} requests; "
          f"segment p50/p99 {w['response_ms']['segment'].get('p50')}/{w['response_ms']['segment'].get('p99')} ms")
    print(f"  errors: {errors}, reconnects {totals['reconnects']}, server closes {totals['server_closes']}, "
          f"fell behind {totals['behind_jumps']}, stalls {totals['stalls']} "
          f"({w['clients_with_stalls']} clients in the window)")
    print(f"  own CPU: {total_cpu:.2f} s in all, {w['cpu_cores']:.3f} cores in the window")
    for example in bench.examples[:5]:
        print(f"  e.g. {example}")
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
