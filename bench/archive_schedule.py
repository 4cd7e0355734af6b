#!/usr/bin/env python3
"""A station whose tone follows the wall clock, archived, and read back from chosen moments: the helper of
bench/archive-schedule.sh.

The schedule: the tone of UTC second T is TONES[SEQ[floor(T / 30) mod 56]]. TONES are eight sines at m × 44100 /
1152 Hz (m = 10, 14, …, 38: 383 to 1455 Hz, 153 Hz apart), a whole number of periods in one MP3 frame; SEQ is an
Eulerian circuit of the complete directed graph on the eight tones (each ordered pair of two different tones once),
so any two consecutive tones name their place in a 28-minute cycle: a reader that lands 30 s or 5 minutes off hears
the wrong tones, not the right ones late.

    python3 bench/archive_schedule.py upstream --dir DIR --port-file F --json F --duration S
    python3 bench/archive_schedule.py read --kind start|offset --port P --mounts /A.opus,/A.mp3 --origin T
                                      --duration S [--fractions 0.1,0.3,…] [--seconds 60] --out DIR --log F
                                      --readers FILE.json
    python3 bench/archive_schedule.py analyze --readers FILE.json [--json OUT] [--tolerance 0.25] [--origin T]
    python3 bench/archive_schedule.py players --port P --name NAME [--back 600] [--seconds 30] --out DIR
    python3 bench/archive_schedule.py schedule --start UTC_SECONDS [--seconds S]

upstream: an HTTP/1.0 server on 127.0.0.1 sending MP3 (44.1 kHz stereo, 128 kb/s CBR, lame --nores: no bit
reservoir, so frames of different tones join cleanly) at real time, one frame per send(), from the live position
(no burst; a reconnect starts at the wall clock). Each frame's tone is the schedule's at the wall clock (time.time)
just before its send(); the wall time of each tone change's first frame is logged (the schedule's boundary plus at
most one frame, 26 ms). The frames are lame's encoding of 10 s of each tone, looped over whole frames of its middle
(each tone has whole periods in a frame and starts each frame at phase 0, so neither a loop nor a change of tone
makes a step in the wave). The JSON (written at the end and every 10 s) holds the changes, the frames sent, how late
the sends were, and the connections.

read: ffmpeg reads each mount from each moment (origin + fraction × duration: `?start=` that moment, or `?offset=`
the seconds from now back to it), all at once, --seconds s each, decoded to s16le mono 16 kHz; the list of readers is
appended to FILE.json. An offset reader's moment is the server's: its log line for the listener (to the ms) less the
offset.

analyze: FILE.json lists the readers: {"label", "kind" ("start", "offset", "hls-…"), "mount", "pcm" (s16le mono
16 kHz: ffmpeg's decode), "moment" (the UTC second the first decoded sample should hold), "asked" (what was asked
for)}. Each reader's audio is cut in 100 ms windows; a window's tone is the strongest of the eight (Goertzel: the
sine's amplitude at each frequency) when it is at least 0.05 of full scale (-26 dBFS; the tones are 0.25) and 3 times
the second; else it is unclear. The window's expected tone is the schedule's at moment + the window's middle. A
window is a match, unclear, or wrong; a window within --tolerance s of a change of the schedule (a "boundary" window,
also counted apart) is a match with either tone, and may hold none. The reader's first window is not
judged (an MP3 decoder's first frame). Each change of tone heard is placed to 5 ms (20 ms windows, 5 ms hop: where
the new tone's amplitude passes the old one's) and matched to the schedule's change between the same two tones
nearest it: drift = (moment + where it is heard) - the schedule's change (positive: the audio is late). A reader
passes with no wrong window, no unclear window away from a change, every change heard in the schedule's order, and
its drifts within 0.1 s of each other (the first change against the last: after 60 s it still follows the
schedule).

players: a player seeks back --back s in the archive's HLS (/NAME/archive.m3u8, the live playlist of the archive;
its `?start=` form is closed) and what it decodes is analysed as a reader, from the moment the seek should reach,
with where the first change of tone heard puts it ("landed", drift not taken off). VLC (run as nobody under root:
VLC refuses root): `--start-time` on the live playlist, and the rc interface's `seek` while it plays it; mpv:
`--start=-BACK` on the live playlist, `--start=X` on the closed one (fMP4, and the same window in MPEG-TS:
`archive-ts.m3u8`), and ffmpeg's `live_start_index` option (no seek: it opens the live playlist BACK / 10 segments
from its end); ffmpeg: `-ss X` on the closed playlist (fMP4, MPEG-TS) and `-live_start_index`. Each player is stopped by its PID once it has decoded --seconds s or after --seconds + 60 s.

Python 3.9+, standard library; lame (the upstream's frames), ffmpeg, and for the players VLC (cvlc) and mpv.
"""
import argparse
import array
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import wave
from datetime import datetime, timezone

import benchlib as B

STEP = 30                                       # seconds of one tone
TONE_M = [10, 14, 18, 22, 26, 30, 34, 38]       # TONES[k] = m × 44100 / 1152 Hz: whole periods in a frame
TONES = [m * B.SRC_RATE / B.SPF for m in TONE_M]
AMP = 0.25                                      # -12 dBFS
RATE = 16000                                    # the analysis' sample rate (ffmpeg resamples to it)
WINDOW = RATE // 10                             # 100 ms
LEVEL = 0.05                                    # a window's tone: at least this amplitude …
DOMINANCE = 3.0                                 # … and this many times the second tone's

log = B.logger("archive-schedule")
SAID = re.compile(r"not seekable|seek|Errors when|Exiting|error|starting at time|EOF|empty", re.IGNORECASE)
NOISE = re.compile(r"dbus|pulse|interface|globalhotkeys|tls_verify|\(empty\)|AO signaled", re.IGNORECASE)


def circuit(n):
    """An Eulerian circuit of the complete directed graph on n nodes without loops (Hierholzer, smallest neighbour
    first): n × (n - 1) nodes, each ordered pair of two different nodes once as consecutive (cyclically)."""
    left = {v: [w for w in range(n) if w != v] for v in range(n)}
    stack, out = [0], []
    while stack:
        v = stack[-1]
        if left[v]:
            stack.append(left[v].pop(0))
        else:
            out.append(stack.pop())
    out.reverse()
    return out[:-1]


SEQ = circuit(len(TONES))


def step_of(t):
    return math.floor(t / STEP)


def tone_index(t):
    """The index in TONES of the tone the schedule plays at UTC second t."""
    return SEQ[step_of(t) % len(SEQ)]


def utc(t, millis=True):
    text = datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{int(round(t * 1000)) % 1000:03d}Z" if millis else "Z")


# ---------------------------------------------------------------- upstream

def tone_frames(directory):
    """[frames of tone k] for each tone: lame --nores of 10 s of it, the frames of its middle."""
    out = []
    n = 10 * B.SRC_RATE
    for k, freq in enumerate(TONES):
        base = os.path.join(directory, f"tone-{k}")
        pcm = array.array("h", [0]) * (2 * n)
        w = 2 * math.pi * freq / B.SRC_RATE
        for i in range(n):
            v = int(round(AMP * 32767 * math.sin(w * i)))
            pcm[2 * i] = v
            pcm[2 * i + 1] = v
        with wave.open(base + ".wav", "wb") as f:
            f.setnchannels(2)
            f.setsampwidth(2)
            f.setframerate(B.SRC_RATE)
            f.writeframes(pcm.tobytes())
        subprocess.run(["lame", "--quiet", "-t", "--nores", "--cbr", "-b", "128", "-m", "j", base + ".wav",
                        base + ".mp3"], check=True)
        os.remove(base + ".wav")
        with open(base + ".mp3", "rb") as f:
            frames = B.mp3_frames(f.read())
        # lame's delay (576 samples) is half a frame: a tone with an even m is at phase 0 at each frame's start.
        out.append(frames[40:len(frames) - 40])
    return out


def cmd_upstream(args):
    frames = tone_frames(args.dir)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((B.HOST, 0))
    srv.listen(4)
    srv.settimeout(0.5)
    B.write_atomic(args.port_file, f"{srv.getsockname()[1]}\n")
    stop = {"now": False}

    def on_term(signum, frame):
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    state = {"changes": [], "connections": [], "frames": 0, "late_max": 0.0, "late_over_50ms": 0,
             "mono_t0": time.monotonic(), "wall_t0": time.time(), "tones": TONES, "seq": SEQ, "step": STEP}
    frame_s = B.FRAME_S
    started = time.monotonic()
    last_write = 0.0
    current = None                    # the step of the last frame sent

    def write():
        state["clock_divergence_s"] = (time.time() - state["wall_t0"]) - (time.monotonic() - state["mono_t0"])
        B.write_json(args.json, state, atomic=True)

    try:
        while not stop["now"] and time.monotonic() - started < args.duration:
            try:
                c, peer = srv.accept()
            except socket.timeout:
                continue
            c.settimeout(10)
            try:
                req, _ = B.read_request_head(c)
                c.settimeout(None)
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: audio/mpeg\r\nCache-Control: no-cache\r\n"
                          b"icy-name: radio-relay archive schedule bench\r\nicy-br: 128\r\n\r\n")
            except OSError as e:
                state["connections"].append({"wall": time.time(), "error": str(e)})
                c.close()
                continue
            state["connections"].append({"wall": time.time(), "request": req.split(b"\r\n")[0].decode("latin-1")})
            log(f"upstream: a client at {utc(time.time())}")
            due = time.monotonic()
            try:
                while not stop["now"] and time.monotonic() - started < args.duration:
                    wait = due - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                    late = time.monotonic() - due
                    state["late_max"] = max(state["late_max"], late)
                    state["late_over_50ms"] += late > 0.05
                    wall = time.time()
                    step = step_of(wall)
                    k = SEQ[step % len(SEQ)]
                    if step != current:
                        state["changes"].append({"step": step, "tone": k, "boundary": step * STEP, "sent": wall})
                        current = step
                    frame = frames[k][state["frames"] % len(frames[k])]
                    c.sendall(frame)
                    state["frames"] += 1
                    due += frame_s
                    if time.monotonic() - last_write > 10:
                        write()
                        last_write = time.monotonic()
            except OSError as e:
                state["connections"].append({"wall": time.time(), "closed": str(e)})
                log(f"upstream: the client went: {e}")
            finally:
                c.close()
    finally:
        srv.close()
        write()
    return 0


# ---------------------------------------------------------------- readers

def log_moments(log_path, mount):
    """[(log time as seconds of the day, offset)] of the server's "time-shifted listener … starts at … (N s behind
    live)" lines for `mount`."""
    out = []
    try:
        with open(log_path, errors="replace") as f:
            for line in f:
                if f" {mount}: time-shifted listener " not in line or " behind live)" not in line:
                    continue
                clock = line.split(" ", 1)[0]
                try:
                    h, m, s = clock.split(":")
                    behind = int(line.rsplit("(", 1)[1].split(" ", 1)[0])
                except (ValueError, IndexError):
                    continue
                out.append((int(h) * 3600 + int(m) * 60 + float(s), behind))
    except OSError:
        pass
    return out


def server_moment(launched, offset, lines):
    """The moment the server took for `?offset=` asked at wall time `launched`: its log line's time (to the ms) less
    the offset, when a line for that offset is within 5 s after the launch; else the launch less the offset."""
    day = launched % 86400
    for clock, behind in lines:
        d = (clock - day + 43200) % 86400 - 43200
        if 0 <= d < 5 and abs(behind - offset) <= 1:
            return launched + d - offset, "server log"
    return launched - offset, "launch"


def cmd_read(args):
    """The readers of one kind, all at once: ffmpeg on each mount from each moment (start) or offset, READ s each,
    decoded to s16le mono 16 kHz; their list (for analyze) appended to --readers."""
    readers = []
    procs = []
    mounts = [m for m in args.mounts.split(",") if m]

    def on_term(signum, frame):
        for p in procs:
            B.stop_process(p, 2)
        sys.exit(143)

    signal.signal(signal.SIGTERM, on_term)
    now = time.time()
    for i, frac in enumerate(float(f) for f in args.fractions.split(",")):
        # the step of the schedule at that fraction, SHIFT s into it plus 4.1 s more for each moment: five phases
        moment = round(STEP * step_of(args.origin + frac * args.duration) + args.shift + 4.1 * i, 3)
        if moment < args.origin + 2:
            moment += STEP
        offset = max(1, int(round(now - moment)))
        for mount in mounts:
            name = f"{args.kind}-{i + 1}-{mount.strip('/').replace('.', '-')}"
            if args.kind == "start":
                asked = utc(moment)
                url = f"http://{B.HOST}:{args.port}{mount}?start={asked}"
            else:
                asked = str(offset)
                url = f"http://{B.HOST}:{args.port}{mount}?offset={offset}"
            pcm = os.path.join(args.out, name + ".pcm")
            err = open(os.path.join(args.out, name + ".err"), "w")
            launched = time.time()
            procs.append(subprocess.Popen(
                ["ffmpeg", "-nostdin", "-hide_banner", "-v", "error", "-i", url, "-t", str(args.seconds),
                 "-f", "s16le", "-ac", "1", "-ar", str(RATE), "-y", pcm],
                stdout=subprocess.DEVNULL, stderr=err))
            err.close()
            readers.append({"label": f"{args.kind} {i + 1} {mount}", "kind": args.kind, "mount": mount, "pcm": pcm,
                            "moment": moment, "asked": asked, "url": url, "launched": launched, "offset": offset})
    deadline = time.monotonic() + args.seconds + 30
    for p, r in zip(procs, readers):
        try:
            r["status"] = p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            B.stop_process(p, 2)
            r["status"] = "killed (took over READ + 30 s)"
        r["finished"] = time.time()
        with open(r["pcm"][:-4] + ".err") as f:
            r["stderr"] = f.read()[-2000:]
    if args.kind == "offset":
        for r in readers:
            r["moment"], r["moment_from"] = server_moment(r["launched"], r["offset"], log_moments(args.log, r["mount"]))
    listed = []
    if os.path.exists(args.readers):
        with open(args.readers) as f:
            listed = json.load(f)
    B.write_json(args.readers, listed + readers, indent=1)
    for r in readers:
        if r["status"] != 0 or r["stderr"].strip():
            log(f"{r['label']}: ffmpeg ended with {r['status']}: {r['stderr'].strip()[:300]}")
    return 0


# ---------------------------------------------------------------- players

def http_text(port, path):
    status, _, body = B.http_get(port, path)
    return status, body.decode("utf-8", "replace")


def playlist(port, path):
    """(the segments' [(UTC start, seconds, uri)], the whole text) of an HLS media playlist."""
    status, text = http_text(port, path)
    if status != 200:
        raise RuntimeError(f"{path}: HTTP {status}")
    segments, pdt, duration = [], None, None
    for line in text.splitlines():
        if line.startswith("#EXT-X-PROGRAM-DATE-TIME:"):
            value = line.split(":", 1)[1].replace("Z", "+00:00")
            pdt = datetime.fromisoformat(value).timestamp()
        elif line.startswith("#EXTINF:"):
            duration = float(line.split(":", 1)[1].split(",")[0])
        elif line and not line.startswith("#") and duration is not None:
            segments.append((pdt, duration, line))
            pdt = None if pdt is None else pdt + duration
            duration = None
    return segments, text


def as_nobody(cmd, home):
    """VLC refuses to run as root: under root, the command runs as nobody (setpriv and env exec it: same PID), its
    HOME `home` (its configuration, none)."""
    if os.geteuid() != 0:
        return cmd
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "env", f"HOME={home}"] + cmd


def run_until(cmd, path, wanted, limit, log_path):
    """Runs cmd until `path` holds `wanted` bytes, it ends, or `limit` s pass; stops it by its PID. (exit status or
    "stopped", seconds)."""
    t0 = time.monotonic()
    with open(log_path, "w") as err:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=subprocess.STDOUT)
        while p.poll() is None and time.monotonic() - t0 < limit:
            if os.path.exists(path) and os.path.getsize(path) >= wanted:
                break
            time.sleep(0.2)
        status = p.poll()
        if status is None:
            B.stop_process(p, 3)
            status = "stopped"
    return status, round(time.monotonic() - t0, 1)


def to_pcm(source, target):
    """A player's output (any WAV or raw s16le 16 kHz mono) as s16le mono 16 kHz; False when there is none."""
    if not os.path.exists(source) or os.path.getsize(source) < 1000:
        return False
    if source.endswith(".pcm"):
        return True
    done = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-ignore_length", "1", "-i", source, "-f", "s16le",
                           "-ac", "1", "-ar", str(RATE), "-y", target], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=60)
    return done.returncode == 0


class RC:
    """VLC's rc interface over TCP: one command, its answer."""

    def __init__(self, port, timeout=15):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection((B.HOST, port), timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.ask("")

    def ask(self, command, wait=0.3):
        if command:
            self.sock.sendall((command + "\n").encode())
        time.sleep(wait)
        self.sock.settimeout(0.3)
        out = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                out += chunk
        except OSError:
            pass
        return out.decode("utf-8", "replace").replace(">", "").strip()

    def number(self, command):
        for word in self.ask(command).split():
            if word.lstrip("-").isdigit():
                return int(word)
        return None


def vlc_rc_seek(args, url, wav, log_path):
    """VLC plays the live playlist; once it plays, `seek` to its time less --back; --seconds s after, `quit`.
    (the reader's fields, notes)."""
    rc_port = B.free_port()
    cmd = as_nobody(["cvlc", "--intf", "dummy", "--extraintf", "rc", "--rc-host", f"{B.HOST}:{rc_port}",
                     "--no-video", "--aout", "afile", "--audiofile-file", wav, "--audiofile-format", "s16",
                     "--audiofile-channels", "1", url], os.path.dirname(wav))
    notes = {"command": " ".join(cmd)}
    with open(log_path, "w") as err:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=subprocess.STDOUT)
        try:
            rc = RC(rc_port)
            deadline = time.monotonic() + 30
            now = None
            while time.monotonic() < deadline:
                now = rc.number("get_time")
                if now:
                    break
                time.sleep(0.5)
            time.sleep(3)
            now = rc.number("get_time")
            length = rc.number("get_length")
            size = os.path.getsize(wav) if os.path.exists(wav) else 0
            target = max(0, (now or 0) - args.back)
            rc.ask(f"seek {target}", 1.0)
            after = rc.number("get_time")
            time.sleep(args.seconds + 3)
            later = rc.number("get_time")
            rc.ask("quit", 1.0)
            notes.update({"time_before": now, "length": length, "seek_to": target, "time_after_seek": after,
                          "time_later": later, "bytes_before_seek": size})
        except OSError as e:
            notes["error"] = str(e)
        finally:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                B.stop_process(p, 3)
        notes["status"] = p.returncode
    return notes


def locate(reader):
    """Where a player's audio is in the schedule, from its first change of tone heard: (the moment its first sample
    holds, assuming no drift) or None."""
    bank = Bank(WINDOW)
    x = read_pcm(reader["pcm"], reader.get("skip", 0.0), reader.get("seconds"))
    windows = [classify(bank.amplitudes(x[w * WINDOW:(w + 1) * WINDOW])) for w in range(len(x) // WINDOW)]
    runs = long_runs(windows)
    for (ta, _, a_end), (tb, b_start, _) in zip(runs, runs[1:]):
        at = (a_end + 1 + b_start) / 2 * 0.1
        change = nearest_change(reader["moment"] + at, ta, tb)
        if change is not None:
            return change - at
    return None


def cmd_players(args):
    live_path = f"/{args.name}/archive.m3u8"
    live_url = f"http://{B.HOST}:{args.port}{live_path}"
    segments, _ = playlist(args.port, live_path)
    if len(segments) < args.back / 10 + 3:
        print(f"players: the archive's playlist holds {len(segments)} segments: too few to go back {args.back} s")
        return 1
    first = segments[0][0]
    total = sum(d for _, d, _ in segments)
    vod_path = f"/{args.name}/archive.m3u8?start={utc(first, millis=False)}"
    vod_url = f"http://{B.HOST}:{args.port}{vod_path}"
    # the same closed window in MPEG-TS segments: ffmpeg's HLS demuxer (and so mpv) seeks in this one only
    vod_ts_url = vod_url.replace("/archive.m3u8?", "/archive-ts.m3u8?")
    back_segments = int(args.back // 10)
    out = os.path.join(args.out, "players")
    os.makedirs(out, exist_ok=True)
    os.chmod(out, 0o777)
    want = int(args.seconds * RATE * 2)
    readers = []

    def reader(label, pcm, moment, how, **extra):
        r = {"label": label, "kind": "player", "mount": live_path, "pcm": pcm, "moment": moment, "asked": how,
             "seconds": args.seconds}
        r.update(extra)
        readers.append(r)
        return r

    # VLC: the live playlist opened 10 minutes back from its end (--start-time: the adaptive module's seek).
    x = int(total - args.back)
    wav = os.path.join(out, "vlc-start-time.wav")
    sout = f"#transcode{{acodec=s16l,channels=1,samplerate={RATE}}}:std{{access=file,mux=wav,dst={wav}}}"
    cmd = as_nobody(["cvlc", "--intf", "dummy", "--no-video", f"--start-time={x}", live_url, "--sout", sout], out)
    status, took = run_until(cmd, wav, want + 44, args.seconds + 60, wav + ".log")
    reader("vlc --start-time live", wav, first + x, f"--start-time={x} of {total:.0f} s", status=status,
           took=took, command=" ".join(cmd))
    # VLC: playing the live playlist, then the rc interface's `seek` to its time less 10 minutes.
    wav = os.path.join(out, "vlc-rc-seek.wav")
    notes = vlc_rc_seek(args, live_url, wav, wav + ".log")
    if "seek_to" in notes:
        pcm = wav[:-4] + ".pcm"
        to_pcm(wav, pcm)
        # the audio from 3 s after the seek's command on (what VLC had buffered before it played out first)
        skip = notes["bytes_before_seek"] / (2 * 48000) + 3
        reader("vlc rc seek live", pcm, first + notes["seek_to"] + 3, f"seek {notes['seek_to']} (from "
               f"{notes['time_before']} of {notes['length']} s)", skip=skip, locate=True, **notes)
    else:
        reader("vlc rc seek live", wav, first + total - args.back, "seek", **notes)
    # mpv: --start=-BACK on the live playlist, --start=X on the closed one, and live_start_index.
    for label, url, extra in (
            (f"mpv --start=-{args.back} live", live_url, [f"--start=-{args.back}"]),
            ("mpv --start=X closed", vod_url, [f"--start={x}"]),
            ("mpv --start=X ts closed", vod_ts_url, [f"--start={x}"]),
            ("mpv live_start_index", live_url, [f"--demuxer-lavf-o=live_start_index=-{back_segments}"])):
        # the live playlist as the player will see it (it grows by a segment every 10 s)
        now_segments, _ = playlist(args.port, live_path)
        now_total = sum(d for _, d, _ in now_segments)
        moment = {"live": first + now_total - args.back, "closed": first + x,
                  "live_start_index": now_segments[-back_segments][0]}[label.split()[-1]]
        pcm = os.path.join(out, label.split()[0] + "-" + str(len(readers)) + ".pcm")
        cmd = ["mpv", "--no-config", "-v", "--no-video", "--ao=pcm", f"--ao-pcm-file={pcm}", "--ao-pcm-waveheader=no",
               "--audio-format=s16", "--audio-channels=mono", f"--audio-samplerate={RATE}",
               f"--length={args.seconds}", *extra, url]
        status, took = run_until(cmd, pcm, want, args.seconds + 60, pcm + ".log")
        reader(label, pcm, moment, " ".join(extra), status=status, took=took, command=" ".join(cmd), locate=True)
    # ffmpeg: -ss on the closed playlist, and -live_start_index on the live one.
    for label, url, extra in (
            ("ffmpeg -ss closed", vod_url, ["-ss", str(x)]),
            ("ffmpeg -ss ts closed", vod_ts_url, ["-ss", str(x)]),
            ("ffmpeg live_start_index", live_url, ["-live_start_index", str(-back_segments)])):
        now_segments, _ = playlist(args.port, live_path)
        moment = first + x if label.endswith("closed") else now_segments[-back_segments][0]
        pcm = os.path.join(out, label.split()[0] + "-" + str(len(readers)) + ".pcm")
        cmd = ["ffmpeg", "-nostdin", "-v", "error", *extra, "-i", url, "-t", str(args.seconds), "-f", "s16le",
               "-ac", "1", "-ar", str(RATE), "-y", pcm]
        status, took = run_until(cmd, pcm, want + 1, args.seconds + 60, pcm + ".log")
        reader(label, pcm, moment, " ".join(extra), status=status, took=took, command=" ".join(cmd), locate=True)
    for r in readers:
        if r["pcm"].endswith(".wav"):
            pcm = r["pcm"][:-4] + ".pcm"
            if to_pcm(r["pcm"], pcm):
                r["pcm"] = pcm
    bank = Bank(WINDOW)
    fine = Bank(RATE // 50)
    results = []
    for r in readers:
        if not os.path.exists(r["pcm"]) or os.path.getsize(r["pcm"]) < 4 * WINDOW:
            res = {"label": r["label"], "ok": False, "error": "no audio"}
        else:
            res = analyze_reader(r, bank, fine, args.tolerance)
            landed = locate(r)
            res["landed"] = landed
            res["landing_error"] = None if landed is None else round(landed - r["moment"], 2)
        res["asked"] = r["asked"]
        res["status"] = r.get("status")
        res["command"] = r.get("command")
        res["moment"] = r["moment"]
        results.append(res)
    B.write_json(os.path.join(args.out, "players.json"), {"readers": readers, "results": results}, indent=1)
    print(f"the playlist: {len(segments)} segments from {utc(first, millis=False)}, {total:.0f} s; target "
          f"{args.back} s back from its end; moment = where the player should land; landed = where the first change "
          f"of tone heard puts it (drift not taken off)")
    print(f"{'player':<26} {'asked':<28} {'moment (UTC)':<25} {'landed':>8} {'match':>5} {'uncl':>5} {'wrong':>5} "
          f"{'drift first':>11} {'last':>6}  seek works")
    for res in results:
        if "error" in res:
            print(f"{res['label']:<26} {res['asked'][:28]:<28} {utc(res['moment']):<25} {'-':>8} no audio "
                  f"(exit {res['status']})")
            continue
        err = "-" if res["landing_error"] is None else f"{res['landing_error']:+.1f}"
        fmt = lambda v: "-" if v is None else f"{v:+.3f}"
        print(f"{res['label']:<26} {res['asked'][:28]:<28} {utc(res['moment']):<25} {err:>8} {res['match']:5d} "
              f"{res['unclear']:5d} {res['wrong']:5d} {fmt(res['drift_first']):>11} {fmt(res['drift_last']):>6}  "
              f"{'yes' if res['ok'] else 'no'}")
    print("what each player said (its log's lines about seeking, the stream, errors):")
    for r in readers:
        log_path = r["pcm"][:-4] + (".wav.log" if r["label"].startswith("vlc") else ".pcm.log")
        if not os.path.exists(log_path):
            continue
        with open(log_path, errors="replace") as f:
            lines = [line.strip() for line in f if SAID.search(line) and not NOISE.search(line)]
        for line in lines[:6]:
            print(f"   {r['label']}: {line[:150]}")
    return 0


# ---------------------------------------------------------------- analysis

class Bank:
    """Goertzel's sums for each tone over windows of `n` samples (cos and sin tables: C-speed map/sum)."""

    def __init__(self, n, rate=RATE):
        self.n = n
        self.tables = []
        for f in TONES:
            w = 2 * math.pi * f / rate
            self.tables.append(([math.cos(w * i) for i in range(n)], [math.sin(w * i) for i in range(n)]))

    def amplitudes(self, x):
        """The amplitude (of full scale) of each tone in x (n samples, floats of full scale)."""
        out = []
        for cos, sin in self.tables:
            c = sum(map(float.__mul__, x, cos))
            s = sum(map(float.__mul__, x, sin))
            out.append(2 * math.hypot(c, s) / self.n)
        return out


def read_pcm(path, skip=0.0, seconds=None):
    """s16le mono 16 kHz samples of `path` as floats of full scale, from `skip` s on, `seconds` s at most; a WAV file
    (RIFF) is read from its data chunk on, whatever its sizes say (a player stopped by a signal leaves them 0)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:4] == b"RIFF":
        at = raw.find(b"data", 12)
        raw = raw[at + 8:] if at >= 0 else b""
    start = int(skip * RATE) * 2
    end = len(raw) if seconds is None else min(len(raw), start + int(seconds * RATE) * 2)
    data = array.array("h")
    data.frombytes(raw[start:end][:(max(0, end - start)) // 2 * 2])
    if sys.byteorder != "little":
        data.byteswap()
    return [v / 32768.0 for v in data]


def classify(amps):
    order = sorted(range(len(amps)), key=lambda k: -amps[k])
    best, second = amps[order[0]], amps[order[1]]
    if best >= LEVEL and best >= DOMINANCE * second:
        return order[0]
    return -1


def long_runs(windows, minimum=10):
    """Runs of one tone in `windows` (a tone index per 100 ms window, -1 for none: skipped), as [tone, first window,
    last window], those of at least `minimum` windows."""
    runs = []
    for w, heard in enumerate(windows):
        if heard < 0:
            continue
        if runs and runs[-1][0] == heard:
            runs[-1][2] = w
        else:
            runs.append([heard, w, w])
    return [r for r in runs if r[2] - r[1] + 1 >= minimum]


def nearest_change(t, a, b):
    """The schedule's change from tone a to tone b nearest UTC second t (its time), or None within 10 minutes."""
    s = step_of(t + STEP / 2)     # the boundary nearest t is s × STEP
    for d in range(0, 21):
        for boundary_step in ({s + d, s - d} if d else {s}):
            if SEQ[(boundary_step - 1) % len(SEQ)] == a and SEQ[boundary_step % len(SEQ)] == b:
                return boundary_step * STEP
    return None


def analyze_reader(reader, bank, fine, tolerance):
    x = read_pcm(reader["pcm"], reader.get("skip", 0.0), reader.get("seconds"))
    moment = reader["moment"]
    windows = []
    for w in range(len(x) // WINDOW):
        windows.append(classify(bank.amplitudes(x[w * WINDOW:(w + 1) * WINDOW])))
    match = unclear = wrong = boundary = boundary_unclear = 0
    wrong_at = []
    for w, heard in enumerate(windows):
        if w == 0:
            continue
        a, b = moment + w * 0.1, moment + (w + 1) * 0.1
        expected = tone_index((a + b) / 2)
        near = [step * STEP for step in range(step_of(a - tolerance), step_of(b + tolerance) + 1)
                if a - tolerance <= step * STEP <= b + tolerance]
        if near:
            allowed = {tone_index(near[0] - 0.01), tone_index(near[-1] + 0.01)}
            boundary += 1
            if heard == -1:
                boundary_unclear += 1
            elif heard in allowed:
                match += 1
            else:
                wrong += 1
                wrong_at.append(round(w * 0.1, 1))
        elif heard == expected:
            match += 1
        elif heard == -1:
            unclear += 1
            wrong_at.append(round(w * 0.1, 1))
        else:
            wrong += 1
            wrong_at.append(round(w * 0.1, 1))
    # the changes between runs of one tone of at least 1 s
    runs = long_runs(windows)
    changes = []
    for (ta, _, a_end), (tb, b_start, _) in zip(runs, runs[1:]):
        # the crossing, to 5 ms: 20 ms windows every 5 ms from 300 ms before the last window of a to 300 ms after
        # the first of b
        lo = max(0, int((a_end * 0.1 - 0.3) * RATE))
        hi = min(len(x) - fine.n, int(((b_start + 1) * 0.1 + 0.3) * RATE))
        at = None
        for i in range(lo, hi, RATE // 200):
            amps = fine.amplitudes(x[i:i + fine.n])
            if amps[tb] > amps[ta]:
                at = (i + fine.n / 2) / RATE
                break
        if at is None:
            at = (a_end + 1) * 0.1
        boundary_t = nearest_change(moment + at, ta, tb)
        changes.append({"from": round(TONES[ta]), "to": round(TONES[tb]), "heard_at": round(at, 3),
                        "drift": None if boundary_t is None else round(moment + at - boundary_t, 3),
                        "schedule": None if boundary_t is None else utc(boundary_t, millis=False)})
    heard_tones = [round(TONES[r[0]]) for r in runs]
    end = moment + len(windows) * 0.1
    # The tones the read should hold for more than the tolerance (the first window is not judged). One at either end
    # that it holds for less than 1.5 s may be heard or not (a run is heard from 1 s on, less its boundary windows).
    expected = []
    for s in range(step_of(moment + 0.1 + tolerance), step_of(end - tolerance) + 1):
        held = min(end, (s + 1) * STEP) - max(moment + 0.1, s * STEP)
        expected.append((round(TONES[SEQ[s % len(SEQ)]]), held >= 1.5))
    expected_tones = [tone for tone, _ in expected]
    choices = [expected_tones]
    if expected and not expected[0][1]:
        choices.append(expected_tones[1:])
    if expected and not expected[-1][1]:
        choices += [c[:-1] for c in choices if c]
    drifts = [c["drift"] for c in changes if c["drift"] is not None]
    in_order = heard_tones in choices and all(c["drift"] is not None for c in changes)
    spread = (max(drifts) - min(drifts)) if drifts else None
    ok = (wrong == 0 and unclear == 0 and in_order and len(windows) >= 10 and
          (spread is None or spread <= 0.1))
    return {"label": reader["label"], "kind": reader["kind"], "mount": reader["mount"], "asked": reader.get("asked"),
            "moment": moment, "moment_utc": utc(moment), "seconds": round(len(x) / RATE, 2),
            "windows": len(windows), "match": match, "unclear": unclear, "wrong": wrong,
            "boundary": boundary, "boundary_unclear": boundary_unclear, "wrong_at": wrong_at[:20],
            "expected_tones": expected_tones, "heard_tones": heard_tones, "changes": changes,
            "drift_first": drifts[0] if drifts else None, "drift_last": drifts[-1] if drifts else None,
            "drift_spread": spread, "ok": ok}


def cmd_analyze(args):
    with open(args.readers) as f:
        readers = json.load(f)
    bank = Bank(WINDOW)
    fine = Bank(RATE // 50)
    results = []
    for reader in readers:
        if not os.path.exists(reader["pcm"]) or os.path.getsize(reader["pcm"]) < 2 * WINDOW:
            results.append({"label": reader["label"], "kind": reader["kind"], "mount": reader["mount"],
                            "asked": reader.get("asked"), "moment": reader.get("moment"), "ok": False,
                            "error": "no audio decoded"})
            continue
        results.append(analyze_reader(reader, bank, fine, args.tolerance))
    if args.json:
        B.write_json(args.json, results, indent=1)
    print_table(results, args.origin)
    return 0 if all(r["ok"] for r in results) else 1


def print_table(results, origin):
    head = (f"{'reader':<26} {'moment (UTC)':<25} {'min':>5} {'s':>5} {'tones expected (Hz)':<24} {'heard':>5} "
            f"{'match':>5} {'uncl':>5} {'wrong':>5} {'bound':>5} {'drift first':>11} {'last':>6}  ok")
    print(head)
    for r in results:
        if "error" in r:
            print(f"{r['label']:<26} {utc(r['moment']) if r.get('moment') else '-':<25} {r['error']}")
            continue
        minute = (r["moment"] - origin) / 60 if origin else float("nan")
        fmt = lambda v: "-" if v is None else f"{v:+.3f}"
        tones = "→".join(str(t) for t in r["expected_tones"])
        heard = "same" if r["heard_tones"] == r["expected_tones"] else "→".join(str(t) for t in r["heard_tones"])
        if r["ok"] and heard != "same":
            heard = "short"     # a tone of less than 1.5 s at an end, not heard as a run
        print(f"{r['label']:<26} {r['moment_utc']:<25} {minute:5.1f} {r['seconds']:5.1f} {tones:<24} "
              f"{heard:>5} {r['match']:5d} {r['unclear']:5d} {r['wrong']:5d} {r['boundary']:5d} "
              f"{fmt(r['drift_first']):>11} {fmt(r['drift_last']):>6}  {'yes' if r['ok'] else 'NO'}")
        if r["wrong_at"]:
            print(f"{'':<26} wrong or unclear windows at (s into the read): {r['wrong_at']}")
    ok = sum(1 for r in results if r["ok"])
    drifts = [c["drift"] for r in results if "changes" in r for c in r["changes"] if c["drift"] is not None]
    if drifts:
        print(f"{ok} of {len(results)} readers follow the schedule; {len(drifts)} changes heard, drift "
              f"{min(drifts):+.3f} … {max(drifts):+.3f} s (median {B.median(drifts):+.3f})")
    else:
        print(f"{ok} of {len(results)} readers follow the schedule; no change heard")


def cmd_schedule(args):
    t = args.start
    while t < args.start + args.seconds:
        s = step_of(t)
        print(f"{utc(s * STEP, millis=False)} {TONES[SEQ[s % len(SEQ)]]:.1f} Hz")
        t = (s + 1) * STEP
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("upstream")
    up.add_argument("--dir", required=True, help="where the tones' MP3 are made")
    up.add_argument("--port-file", required=True)
    up.add_argument("--json", required=True)
    up.add_argument("--duration", type=float, required=True)
    an = sub.add_parser("analyze")
    an.add_argument("--readers", required=True)
    an.add_argument("--json")
    an.add_argument("--tolerance", type=float, default=0.25)
    an.add_argument("--origin", type=float, default=0, help="UTC second of the archive's start (the min column)")
    rd = sub.add_parser("read")
    rd.add_argument("--kind", choices=["start", "offset"], required=True)
    rd.add_argument("--port", type=int, required=True, help="the server's HTTP port")
    rd.add_argument("--mounts", required=True, help="comma-separated: /NAME.opus,/NAME.mp3")
    rd.add_argument("--origin", type=float, required=True, help="UTC second of the archive's start")
    rd.add_argument("--duration", type=float, required=True, help="the archive's length (s) the fractions are of")
    rd.add_argument("--fractions", default="0.1,0.3,0.5,0.7,0.9")
    rd.add_argument("--shift", type=float, default=7.3,
                    help="each moment: its fraction's step of the schedule, this many seconds in, + 4.1 s × its rank")
    rd.add_argument("--seconds", type=float, default=60)
    rd.add_argument("--out", required=True)
    rd.add_argument("--log", required=True, help="the server's log (the offset readers' moments)")
    rd.add_argument("--readers", required=True)
    pl = sub.add_parser("players")
    pl.add_argument("--port", type=int, required=True)
    pl.add_argument("--name", required=True)
    pl.add_argument("--back", type=int, default=600)
    pl.add_argument("--seconds", type=float, default=30)
    pl.add_argument("--out", required=True)
    pl.add_argument("--tolerance", type=float, default=0.25)
    sc = sub.add_parser("schedule")
    sc.add_argument("--start", type=float, required=True)
    sc.add_argument("--seconds", type=float, default=300)
    args = parser.parse_args()
    commands = {"upstream": cmd_upstream, "read": cmd_read, "players": cmd_players, "analyze": cmd_analyze,
                "schedule": cmd_schedule}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
