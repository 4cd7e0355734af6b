"""What the Python scripts of bench/ share: `import benchlib` (a script run as `python3 bench/X.py` has bench/ first on
sys.path). Python 3.9+, standard library only, plus ctypes to libogg (when there: the fast Ogg CRC) and libopus (the
decoder).

  output        logger(prefix), write_json(path, obj), write_atomic(path, text)
  binaries      load_binary(): $LOAD, else the static release build, else the release build (as bench/lib.sh)
  processes     free_port(), wait_until(predicate, timeout), stop_process(proc): SIGTERM, then SIGKILL, by its PID
  HTTP          read_request_head(conn) (a server's side), http_get(port, path): a GET read to its end
  /proc         CLK_TCK, proc_ticks(pid), proc_status_kb(pid, key), thread_cpu_ns(pid, name), self_cpu_seconds()
  statistics    pct(values, p), wpct(pairs, p), median(values)
  Ogg           ogg_crc(bytes), ogg_page_crc(page): the CRC-32 (libogg's when it loads, else the same in Python);
                ogg_page_at(data, pos): the header of a whole page; ogg_pages(data): every whole page;
                ogg_packets(...): a page's body cut by its lacing;
                build_page(packets, granule, serial, seq): one page, CRC set
  Opus          opus_samples(packet), OpusDecoder (libopus: float or int16, 48 kHz stereo)
  MP3           mp3_frame_spans(data), mp3_frames(data), encode_mp3(pcm, base): 16-bit stereo PCM -> lame 128k CBR
  markers       the test signal of latency.py and soak.py: 60 ms tone bursts whose frequency (FREQS) is their ID,
                placed by marker_positions(n); marker_id() finds the ID (Goertzel)
"""
import ctypes
import ctypes.util
import json
import math
import os
import random
import resource
import socket
import struct
import subprocess
import sys
import time
import wave
from typing import NamedTuple

HOST = "127.0.0.1"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)


# ---------------------------------------------------------------- output

def logger(prefix=None):
    """A log function: its arguments on stderr, after "PREFIX:" when a prefix is given, flushed at once."""
    head = (f"{prefix}:",) if prefix else ()

    def log(*args):
        print(*head, *args, file=sys.stderr, flush=True)
    return log


def write_atomic(path, text):
    """Writes `text` to PATH.tmp, then renames it over `path`: a reader sees the whole file or none."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def write_json(path, obj, indent=None, atomic=False, end=""):
    """`obj` as JSON in `path` (indent as json.dump's; atomic: through PATH.tmp; `end` written after it)."""
    target = path + ".tmp" if atomic else path
    with open(target, "w") as f:
        json.dump(obj, f, indent=indent)
        f.write(end)
    if atomic:
        os.replace(target, path)


# ---------------------------------------------------------------- binaries and processes

def load_binary():
    """The load tool: $LOAD when set, else the static release build when there is one, else the release build."""
    if os.environ.get("LOAD"):
        return os.path.abspath(os.environ["LOAD"])
    static = os.path.join(REPO_ROOT, ".build-static", "release", "radio-relay-load")
    if os.access(static, os.X_OK):
        return static
    return os.path.join(REPO_ROOT, ".build", "release", "radio-relay-load")


def free_port(host=HOST):
    """A TCP port on `host` that nothing listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def read_request_head(conn, limit=16384):
    """Reads an HTTP request's head from `conn` (a socket with a timeout), up to the blank line or `limit` bytes: the
    bytes read, and False when the peer closed first. A socket error is raised."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < limit:
        chunk = conn.recv(4096)
        if not chunk:
            return head, False
        head += chunk
    return head, True


def http_get(port, path, host=HOST, timeout=5):
    """GET `path` from `host`:`port` over HTTP/1.0 and read the answer to its end (the server closes): its status
    (None when the first line has none), head and body. A socket error is raised."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(None, 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    return status, head, body


def wait_until(predicate, timeout, step=0.05):
    """Calls `predicate` every `step` s until it is true (True) or `timeout` s have passed (then its last answer)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


def stop_process(proc, timeout=5):
    """Stops a process started here (a Popen), by its PID: SIGTERM, up to `timeout` s, then SIGKILL. True when it
    had to be killed."""
    if proc.poll() is not None:
        return False
    proc.terminate()
    try:
        proc.wait(timeout)
        return False
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)
        return True


# ---------------------------------------------------------------- /proc

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_ticks(pid):
    """utime + stime of a whole process, in clock ticks (/proc/PID/stat; its name may hold spaces)."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def proc_status_kb(pid, key="VmRSS", default=0):
    """A kB figure of /proc/PID/status (VmRSS, VmHWM, …); `default` when the process has none (a zombie)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return default


def thread_cpu_ns(pid, name):
    """CPU time (ns, /proc/PID/task/TID/schedstat) of the first thread of `pid` named `name`; None without one."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() != name:
                    continue
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                return int(f.read().split()[0])
        except OSError:
            continue
    return None


def self_cpu_seconds():
    """This process's user + system CPU seconds."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------- statistics

def pct(values, p):
    """The p-th percentile, interpolated between the two nearest ranks; NaN for no values."""
    if not values:
        return float("nan")
    v = sorted(values)
    x = (len(v) - 1) * p / 100
    i = int(math.floor(x))
    j = min(i + 1, len(v) - 1)
    return v[i] + (v[j] - v[i]) * (x - i)


def wpct(pairs, p):
    """Weighted percentile of (value, weight) pairs (pairs sorted by value)."""
    total = sum(w for _, w in pairs)
    if total == 0:
        return float("nan")
    target = total * p / 100
    acc = 0
    for v, w in pairs:
        acc += w
        if acc >= target:
            return v
    return pairs[-1][0]


def median(values):
    return pct(values, 50) if values else float("nan")


# ---------------------------------------------------------------- Ogg

def _crc_table():
    t = []
    for i in range(256):
        r = i << 24
        for _ in range(8):
            r = ((r << 1) ^ 0x04C11DB7) if r & 0x80000000 else (r << 1)
        t.append(r & 0xFFFFFFFF)
    return t


CRC_TABLE = _crc_table()


def ogg_crc(b):
    """Ogg's CRC-32 (polynomial 0x04C11DB7, not reflected, no final xor) of `b`, in Python."""
    c = 0
    t = CRC_TABLE
    for x in b:
        c = ((c << 8) & 0xFFFFFFFF) ^ t[(c >> 24) ^ x]
    return c


class _OggPage(ctypes.Structure):
    _fields_ = [("header", ctypes.c_void_p), ("header_len", ctypes.c_long),
                ("body", ctypes.c_void_p), ("body_len", ctypes.c_long)]


_LIBOGG = []


def libogg():
    """libogg through ctypes (its ogg_page_checksum_set), or None when it does not load."""
    if not _LIBOGG:
        lib = None
        for name in (ctypes.util.find_library("ogg"), "libogg.so.0"):
            if not name:
                continue
            try:
                lib = ctypes.CDLL(name)
                lib.ogg_page_checksum_set.argtypes = [ctypes.POINTER(_OggPage)]
                lib.ogg_page_checksum_set.restype = None
                break
            except OSError:
                lib = None
        _LIBOGG.append(lib)
    return _LIBOGG[0]


def ogg_page_crc(page, header_len=None):
    """The CRC a whole page (bytes-like, its CRC field whatever it holds) should carry: libogg's
    ogg_page_checksum_set when libogg loads (pure Python is too slow for megabytes a second), else ogg_crc."""
    lib = libogg()
    if lib is None:
        return ogg_crc(bytes(page[:22]) + b"\0\0\0\0" + bytes(page[26:]))
    hl = header_len if header_len is not None else 27 + page[26]
    buf = ctypes.create_string_buffer(bytes(page), len(page))
    addr = ctypes.addressof(buf)
    lib.ogg_page_checksum_set(ctypes.byref(_OggPage(addr, hl, addr + hl, len(page) - hl)))
    return struct.unpack("<I", ctypes.string_at(addr + 22, 4))[0]


class OggPage(NamedTuple):
    """The header of a whole page at `offset` of a buffer; its body runs from offset + header_len to end."""
    offset: int
    version: int
    htype: int              # 1 continued packet, 2 first page (BOS), 4 last page (EOS)
    granule: int
    serial: int
    seq: int
    crc: int
    lacing: bytes
    header_len: int
    end: int


_OGG_FIELDS = struct.Struct("<BBqIII")


def ogg_page_at(data, pos):
    """The page that starts at `pos` of `data` (bytes, bytearray or memoryview) as an OggPage, or None when `data`
    ends before the page does. The capture pattern ("OggS" at pos) is the caller's to check."""
    if pos + 27 > len(data):
        return None
    nseg = data[pos + 26]
    hl = 27 + nseg
    if pos + hl > len(data):
        return None
    lacing = bytes(data[pos + 27:pos + hl])
    end = pos + hl + sum(lacing)
    if end > len(data):
        return None
    version, htype, granule, serial, seq, crc = _OGG_FIELDS.unpack_from(data, pos + 4)
    return OggPage(pos, version, htype, granule, serial, seq, crc, lacing, hl, end)


def ogg_pages(data):
    """The whole pages of `data`, in order (OggPage); None for each place where bytes that are not a page were
    skipped up to the next capture pattern. Ends at the first page that `data` does not hold whole."""
    pos = 0
    while pos + 27 <= len(data):
        if data[pos:pos + 4] != b"OggS":
            yield None
            pos = data.find(b"OggS", pos + 1)
            if pos < 0:
                return
            continue
        page = ogg_page_at(data, pos)
        if page is None:
            return
        yield page
        pos = page.end


def ogg_packets(data, page, partial=b""):
    """A page's body cut by its lacing values: ([the packets that end on this page, the first one after `partial`,
    the unfinished packet it continues], the unfinished rest: b"" when the page ends a packet)."""
    packets, cur, off = [], partial, page.offset + page.header_len
    for lv in page.lacing:
        cur += data[off:off + lv]
        off += lv
        if lv < 255:
            packets.append(cur)
            cur = b""
    return packets, cur


def build_page(packets, granule, serial, seq, htype=0):
    """One Ogg page holding whole `packets` (their lacing must fit 255 segments), with its CRC."""
    lacing = []
    for p in packets:
        lacing += [255] * (len(p) // 255) + [len(p) % 255]
    if len(lacing) > 255:
        raise ValueError("packets too large for one page")
    header = b"OggS" + struct.pack("<BBqIIIB", 0, htype, granule, serial & 0xFFFFFFFF, seq & 0xFFFFFFFF, 0,
                                   len(lacing)) + bytes(lacing)
    page = header + b"".join(packets)
    return page[:22] + struct.pack("<I", ogg_page_crc(page, len(header))) + page[26:]


# ---------------------------------------------------------------- Opus

def opus_samples(p):
    """Samples (at 48 kHz, per channel) of an Opus packet, from its TOC byte (and frame count); 0 for none."""
    if not p:
        return 0
    toc = p[0]
    cfg = toc >> 3
    if cfg < 12:
        fs = (480, 960, 1920, 2880)[cfg & 3]
    elif cfg < 16:
        fs = (480, 960)[cfg & 1]
    else:
        fs = (120, 240, 480, 960)[cfg & 3]
    code = toc & 3
    n = 1 if code == 0 else 2 if code < 3 else (p[1] & 0x3F if len(p) > 1 else 0)
    return fs * n


class OpusDecoder:
    """libopus (libopus.so.0, ctypes): a 48 kHz stereo decoder; decode() appends float samples to an array('f'),
    decode16() returns int16 samples as bytes."""

    def __init__(self, rate=48000):
        self.lib = ctypes.CDLL("libopus.so.0")
        self.lib.opus_decoder_create.restype = ctypes.c_void_p
        self.lib.opus_decoder_create.argtypes = [ctypes.c_int32, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
        self.lib.opus_decode_float.restype = ctypes.c_int
        self.lib.opus_decode_float.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                                               ctypes.POINTER(ctypes.c_float), ctypes.c_int, ctypes.c_int]
        self.lib.opus_decode.restype = ctypes.c_int
        self.lib.opus_decode.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                                         ctypes.POINTER(ctypes.c_int16), ctypes.c_int, ctypes.c_int]
        self.lib.opus_decoder_destroy.argtypes = [ctypes.c_void_p]
        err = ctypes.c_int(0)
        self.dec = self.lib.opus_decoder_create(rate, 2, ctypes.byref(err))
        if not self.dec or err.value != 0:
            raise RuntimeError(f"opus_decoder_create failed: {err.value}")
        self.buf = (ctypes.c_float * (5760 * 2))()
        self.buf16 = (ctypes.c_int16 * (5760 * 2))()

    def decode(self, packet, out):
        """Appends the packet's samples (interleaved float) to `out`; their count per channel, or libopus's error."""
        n = self.lib.opus_decode_float(self.dec, packet, len(packet), self.buf, 5760, 0)
        if n < 0:
            return n
        out.frombytes(ctypes.string_at(self.buf, n * 8))
        return n

    def decode16(self, packet):
        """(samples per channel or libopus's error, interleaved int16 bytes)."""
        n = self.lib.opus_decode(self.dec, packet, len(packet), self.buf16, 5760, 0)
        return n, (ctypes.string_at(self.buf16, n * 4) if n > 0 else b"")

    def close(self):
        if self.dec:
            self.lib.opus_decoder_destroy(self.dec)
            self.dec = None


# ---------------------------------------------------------------- MP3

_MP3_RATES = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000]}
_MP3_BITRATES_1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
_MP3_BITRATES_2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]


def mp3_frame_spans(data, strict=False):
    """[(start, end)] of the MPEG 1/2/2.5 Layer III frames of `data`, up to the last whole one. An ID3v2 tag and
    stray bytes are skipped; with strict, `data` must be MPEG-1 Layer III 44.1 kHz frames and nothing else
    (ValueError at the first byte that does not start one)."""
    pos = 0
    if not strict and data[:3] == b"ID3" and len(data) >= 10:
        size = ((data[6] & 0x7F) << 21) | ((data[7] & 0x7F) << 14) | ((data[8] & 0x7F) << 7) | (data[9] & 0x7F)
        pos = 10 + size + (10 if data[5] & 0x10 else 0)
    spans = []
    while pos + 4 <= len(data):
        h = data[pos:pos + 4]
        ver = (h[1] >> 3) & 3
        layer = (h[1] >> 1) & 3
        bri = h[2] >> 4
        sri = (h[2] >> 2) & 3
        pad = (h[2] >> 1) & 1
        if h[0] != 0xFF or (h[1] & 0xE0) != 0xE0 or ver == 1 or layer != 1 or bri in (0, 15) or sri == 3 \
                or (strict and (ver != 3 or sri != 0)):
            if strict:
                raise ValueError(f"not an MPEG-1 Layer III 44.1 kHz frame at byte {pos}")
            pos += 1
            continue
        rate = _MP3_RATES[ver][sri]
        if ver == 3:
            length = 144000 * _MP3_BITRATES_1[bri] // rate + pad
        else:
            length = 72000 * _MP3_BITRATES_2[bri] // rate + pad
        if pos + length > len(data):
            break
        spans.append((pos, pos + length))
        pos += length
    return spans


def mp3_frames(data):
    """The frames of an MP3 byte string (MPEG 1/2/2.5 Layer III), as byte strings; skips an ID3v2 tag and stray
    bytes."""
    return [data[a:b] for a, b in mp3_frame_spans(data)]


def encode_mp3(pcm, base, rate=44100):
    """16-bit stereo PCM (an array('h'), interleaved) -> BASE.mp3 with lame, 128 kb/s CBR, joint stereo, without
    a Xing/LAME tag (a live stream has none: its first frame is audio); through BASE.wav, which is removed."""
    wav, mp3 = base + ".wav", base + ".mp3"
    with wave.open(wav, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    subprocess.run(["lame", "--quiet", "-t", "--cbr", "-b", "128", "-m", "j", wav, mp3 + ".partial"], check=True)
    os.replace(mp3 + ".partial", mp3)
    os.remove(wav)
    return mp3


def cached_table(base, version=None):
    """The JSON table beside BASE.mp3 when both are there and the table matches the MP3's size (and `version`);
    else None."""
    mp3, meta = base + ".mp3", base + ".json"
    if os.path.exists(mp3) and os.path.exists(meta):
        with open(meta) as f:
            table = json.load(f)
        if (version is None or table.get("version") == version) and table.get("mp3_size") == os.path.getsize(mp3):
            return table
    return None


# ---------------------------------------------------------------- marker bursts (latency.py's and soak.py's signal)

SRC_RATE = 44100
SPF = 1152                      # MPEG-1 Layer III samples per frame
FRAME_S = SPF / SRC_RATE        # 26.12 ms
OUT_RATE = 48000
FIRST_MARKER = 11025            # 0.25 s
SPACING = (22050, 26460)        # 0.5-0.6 s apart, pseudo-random (seeded): the markers fall at every phase of MP3
                                # frames, Ogg pages and the server's write pattern, without aliasing with any of them
MARKER_LEN = 2646               # 60 ms
MARKER_AMP = 0.5                # -6 dBFS
FREQS = [400 + 100 * i for i in range(16)]   # marker k is a sine at FREQS[k % 16]: an ID that repeats every ~8.8 s;
                                             # low tones keep latency.py's phase fit free of period ambiguity
REARM_S = 0.3                   # a new onset needs 300 ms without any sample above the threshold
LAME_DELAY = 576 + 529          # encoder delay + mpg123 synthesis delay: input sample s decodes at s + 1105


def marker_positions(n):
    """[(source sample, k)] of the markers of a signal `n` samples long: the first at FIRST_MARKER, then every
    SPACING (random.Random(7)), each with a second of signal after it."""
    out = []
    rng = random.Random(7)
    s, k = FIRST_MARKER, 0
    while s + MARKER_LEN + SRC_RATE < n:
        out.append((s, k))
        k += 1
        s += rng.randrange(*SPACING)
    return out


def goertzel(x, freq, rate):
    """The power of `x` (a sequence of samples) at `freq` Hz (the Goertzel filter)."""
    c = 2 * math.cos(2 * math.pi * freq / rate)
    s1 = s2 = 0.0
    for v in x:
        s1, s2 = v + c * s1 - s2, s1
    return s1 * s1 + s2 * s2 - c * s1 * s2


def marker_id(pcm, channels, rate, onset):
    """Which of FREQS the burst starting at `onset` carries (Goertzel on 40 ms of channel 0); (id, confidence: the
    best power over the second best)."""
    a = onset + int(0.005 * rate)
    b = onset + int(0.045 * rate)
    x = pcm[a * channels:b * channels:channels]
    if len(x) < (b - a) // 2:
        return None, 0.0
    powers = [goertzel(x, f, rate) for f in FREQS]
    order = sorted(range(len(FREQS)), key=lambda i: -powers[i])
    best, second = powers[order[0]], powers[order[1]]
    return order[0], (best / second if second > 0 else float("inf"))
