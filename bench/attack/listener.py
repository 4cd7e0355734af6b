"""The honest listener of bench/attack.py's rows: one HTTP listener from 127.0.0.1 on the attacked station's mount,
and how its capture is judged."""
import os
import re
import socket
import subprocess
import threading
import time

from .harness import HOST, STALL_MAX_S


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
