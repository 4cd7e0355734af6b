#!/usr/bin/env python3
"""A relay tree over real links: network namespaces (bench/netlab.py) joined through a bridge, each link with its own
rate limit, random loss and blackhole, and what the listeners hear when the links fail as they do in the wild.

The tree (mode `tree` and the soak): `studio` (Debian's icecast2, two ffmpeg MP3 sources: /a.mp3 440 Hz, /b.mp3
660 Hz), `root1` and `root2` (radio-relay transcoding stations: root1 pulls /a.mp3, root2 /b.mp3, each with a tone
file of its own as its hot standby), `edge1` and `edge2` (radio-relay edges listing both roots' Ogg Opus, root1 first,
`standby = hot`, `stall_timeout = 3`), and `listeners` (an ffmpeg listener decoding each edge, radio-relay-load). All
addresses are 198.18.0.N; every process runs in its node's namespace and is stopped by its PID.

Modes (each prints its figures; `--json FILE` writes them):
  edge [--standby hot|cold]   root1's link blackholed 20 s, then lifted: the gap edge1's listener hears, when the
                              edge switched, when it went back to root1 (recover 10 s)
  transcode                   root1's upstream (the studio's link) blackholed 20 s: the gap root1's listener hears
                              with its hot-standby file
  live                        a DJ (ffmpeg, MP3 over Icecast's protocol) on root1 from a namespace of its own, its
                              link blackholed: the hand-back heard, when the source is given up (source_timeout)
  loss [--minutes M]          root1 -> edge1 over a link of twice the stream's rate with 3 % loss each way (--loss P),
                              M minutes (default 10): gaps heard by edge1's listener, its lag, the load's stream
                              errors; root2 is the edge's hot standby on a clean link: the switches the loss causes
  slow                        a listener on a link at 80 % of the stream's rate: when it is dropped; 50 others on a
                              good link untouched
  crowd [-n N]                N (default 1000) listeners of edge1 behind a link that is blackholed: when all are
                              released; edge1's descriptors, RSS, FIN-WAIT-1 sockets and TCP memory before and after
  push [--minutes M]          root1 pushes to the studio's Icecast over 3 % loss for M minutes (default 5), then a
                              20 s blackhole: the longest time Icecast's mount was gone
  soak [--minutes M] [--seed S]  the tree for M minutes (default 30) with seeded random faults on every link
                              (blackholes, loss, rate limits); listeners on both edges all along
  all                         edge (hot and cold), transcode, loss, slow, crowd, push

RADIO_RELAY (default .build-static/release/radio-relay) and LOAD pick the binaries, so the same run measures an
older build. Needs root, iproute2, nftables, icecast2, ffmpeg (.ci/deps --test).
"""
import argparse
import array
import ctypes
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import failover  # noqa: E402
import netlab  # noqa: E402

log = benchlib.logger("links")
RATE = 16000
STREAM_KBIT = 100  # 96 kb/s Opus in Ogg pages, with TCP/IP's share
A, B, FILE1, FILE2, DJ = 440.0, 660.0, 880.0, 1100.0, 1320.0
TONES = {A: "root1/studio a", B: "root2/studio b", FILE1: "root1 file", FILE2: "edge file", DJ: "dj"}
ICECAST_PASSWORD = "pw-links"
RELAY_PORT, HTTP_PORT, STATUS_PORT, ICECAST_PORT = 8000, 8001, 9000, 8000

libc = ctypes.CDLL(None, use_errno=True)


def in_namespace(ns, function, timeout=5):
    """Runs `function` on a thread that entered `ns`'s network namespace (setns is per thread); its result, or
    None when it failed or took longer than `timeout`."""
    box = {}

    def body():
        try:
            fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
            try:
                if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
                    return
            finally:
                os.close(fd)
            box["value"] = function()
        except Exception as error:  # noqa: BLE001 (a status read that fails is None)
            box["error"] = error

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(timeout)
    return box.get("value")


def fetch(url, timeout=2):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


class Node:
    """Processes of one namespace, stopped by PID at the end."""

    def __init__(self, lab, name, work):
        self.lab, self.name, self.work = lab, name, work
        self.procs = []

    def popen(self, argv, log_name=None):
        out = open(os.path.join(self.work, f"{self.name}-{log_name}.log"), "w") if log_name else subprocess.DEVNULL
        proc = self.lab.popen(self.name, argv, stdout=subprocess.DEVNULL, stderr=out)
        self.procs.append(proc)
        return proc

    def stop(self):
        for proc in reversed(self.procs):
            benchlib.stop_process(proc)
        self.procs = []


class Relay(Node):
    def __init__(self, lab, name, work, arguments):
        super().__init__(lab, name, work)
        self.address = lab.address[name]
        self.log_path = os.path.join(work, f"{name}-relay.log")
        command = [relay_binary(), "serve", "--name", "main", "--bind", "0.0.0.0", "--port", str(RELAY_PORT),
                   "--http", f"0.0.0.0:{HTTP_PORT}", "--status", f"127.0.0.1:{STATUS_PORT}"] + arguments
        self.proc = self.popen(command, "relay")
        if not benchlib.wait_until(lambda: self.station() is not None, 15, 0.1):
            raise SystemExit(f"{name}: the relay did not start: " + open(self.log_path).read()[-2000:])

    def station(self):
        def get():
            return json.loads(fetch(f"http://127.0.0.1:{STATUS_PORT}/status.json"))["stations"][0]
        return in_namespace(self.lab.ns(self.name), get)

    def playing(self):
        station = self.station()
        return station and station.get("input_playing")

    def descriptors(self):
        try:
            return len(os.listdir(f"/proc/{self.proc.pid}/fd"))
        except OSError:
            return -1

    def rss_kb(self):
        return benchlib.proc_status_kb(self.proc.pid)

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


def relay_binary():
    return os.environ.get("RADIO_RELAY") or os.path.join(benchlib.REPO_ROOT, ".build-static", "release", "radio-relay")


class Studio(Node):
    """Debian's icecast2 on 0.0.0.0:8000 in the studio's namespace, with ffmpeg MP3 sources."""

    def __init__(self, lab, work, mounts):
        super().__init__(lab, "studio", work)
        directory = os.path.join(work, "icecast")
        os.makedirs(directory + "/log", exist_ok=True)
        os.chmod(work, 0o755)
        change_owner = ""
        try:
            import grp
            import pwd
            os.chown(directory + "/log", pwd.getpwnam("icecast2").pw_uid, grp.getgrnam("icecast").gr_gid)
            change_owner = "<changeowner><user>icecast2</user><group>icecast</group></changeowner>"
        except (KeyError, PermissionError):
            pass
        with open(directory + "/icecast.xml", "w") as f:
            f.write(f"""<icecast><location>Earth</location><admin>icemaster@localhost</admin>
<limits><clients>100</clients><sources>8</sources><source-timeout>10</source-timeout></limits>
<authentication><source-password>{ICECAST_PASSWORD}</source-password><admin-user>admin</admin-user>
<admin-password>{ICECAST_PASSWORD}</admin-password></authentication><hostname>{lab.address['studio']}</hostname>
<listen-socket><port>{ICECAST_PORT}</port></listen-socket>
<paths><basedir>/usr/share/icecast2</basedir><logdir>{directory}/log</logdir>
<webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
<logging><errorlog>error.log</errorlog><accesslog>access.log</accesslog><loglevel>2</loglevel></logging>
<security><chroot>0</chroot>{change_owner}</security></icecast>""")
        self.icecast = self.popen(["icecast2", "-c", directory + "/icecast.xml"], "icecast")
        if not benchlib.wait_until(lambda: self.status() is not None, 10, 0.1):
            raise SystemExit("icecast2 did not start in the studio namespace")
        for mount, tone in mounts.items():
            self.popen(["ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i",
                        f"sine=frequency={tone}", "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", "-content_type",
                        "audio/mpeg", "-f", "mp3",
                        f"icecast://source:{ICECAST_PASSWORD}@127.0.0.1:{ICECAST_PORT}{mount}"], "source")
        if not benchlib.wait_until(lambda: all(m in self.mounts() for m in mounts), 15, 0.2):
            raise SystemExit("the studio's sources did not mount")

    def status(self):
        return in_namespace(self.lab.ns("studio"),
                            lambda: json.loads(fetch(f"http://127.0.0.1:{ICECAST_PORT}/status-json.xsl")))

    def mounts(self):
        status = self.status() or {}
        sources = (status.get("icestats") or {}).get("source") or []
        if isinstance(sources, dict):
            sources = [sources]
        return {s.get("listenurl", "").rsplit("/", 1)[-1] and "/" + s.get("listenurl", "").rsplit("/", 1)[-1]
                for s in sources}

    def url(self, mount):
        return f"http://{self.lab.address['studio']}:{ICECAST_PORT}{mount}"


class Listener(Node):
    """ffmpeg in the listeners' namespace decoding a station's raw TCP stream to 16 kHz mono floats."""

    def __init__(self, lab, work, target, name="listener", node="listeners"):
        super().__init__(lab, node, work)
        self.path = os.path.join(work, f"{name}.f32")
        self.started = time.monotonic()
        self.popen(["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", f"tcp://{target}:{RELAY_PORT}", "-ac",
                    "1", "-ar", str(RATE), "-f", "f32le", "-y", self.path], name)

    def samples(self):
        data = array.array("f")
        try:
            with open(self.path, "rb") as f:
                data.frombytes(f.read())
        except OSError:
            pass
        return data

    def seconds(self):
        try:
            return os.path.getsize(self.path) / 4 / RATE
        except OSError:
            return 0.0


class Load(Node):
    def __init__(self, lab, work, target, n, duration, name="load", node="listeners", extra=()):
        super().__init__(lab, node, work)
        self.json = os.path.join(work, f"{name}.json")
        self.proc = self.popen([os.environ.get("LOAD") or benchlib.load_binary(), "--host", target, "--port",
                                str(RELAY_PORT), "-n", str(n), "--duration", str(duration), "--json", self.json]
                               + list(extra), name)

    def result(self, timeout):
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
        try:
            with open(self.json) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}


def tone_file(work, frequency, seconds=600, opus=False):
    path = os.path.join(work, f"tone-{int(frequency)}.{'opus' if opus else 'mp3'}")
    codec = ["-c:a", "libopus", "-b:a", "96k"] if opus else ["-c:a", "libmp3lame", "-b:a", "128k"]
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                    f"sine=frequency={frequency}:duration={seconds}", "-ac", "2", "-ar", "48000"] + codec
                   + ["-y", path], check=True)
    return path


def silences(samples, start=0.0, end=None, tones=TONES):
    """[(start, length)] of the stretches where none of `tones` was heard, between `start` and `end` s."""
    out = []
    for tone, s, e in failover.timeline(samples, RATE, tones=tones):
        if tone is None and e > start and (end is None or s < end):
            out.append((round(s, 2), round(e - s, 2)))
    return out


def longest_silence(samples, start, end=None):
    return max((length for _, length in silences(samples, start, end)), default=0.0)


class Watch:
    """Polls a relay's input_playing every 0.1 s: the times it changed (monotonic)."""

    def __init__(self, relay):
        self.relay, self.changes, self.stopped = relay, [], False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        last = None
        while not self.stopped:
            now = self.relay.playing()
            if now is not None and now != last:
                self.changes.append((time.monotonic(), now))
                last = now
            time.sleep(0.1)

    def first(self, name, after):
        return next((t - after for t, n in self.changes if n == name and t >= after), None)

    def stop(self):
        self.stopped = True
        self.thread.join(2)


def print_timeline(samples, t0=0.0):
    for tone, start, end in failover.timeline(samples, RATE, tones=TONES):
        if end - start < 0.2 and tone is not None:
            continue
        print(f"  {start + t0:7.2f} – {end + t0:7.2f} s  {TONES.get(tone, 'silence') if tone else 'silence'}")


class Run:
    """One mode's lab, work folder and processes; everything stopped and torn down at the end, however it ends."""

    def __init__(self, nodes, name):
        self.work = tempfile.mkdtemp(prefix=f"links-{name}-")
        os.chmod(self.work, 0o755)
        self.lab = netlab.Lab("lk" + str(os.getpid() % 100000), nodes)
        self.things = []
        self.figures = {"mode": name}

    def add(self, thing):
        self.things.append(thing)
        return thing

    def close(self):
        for thing in reversed(self.things):
            thing.stop()
        self.lab.down()
        if os.environ.get("KEEP_TMP") != "1":
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            log(f"kept {self.work}")


def edge_args(lab, standby, extra=()):
    return ["--upstream", f"tcp://{lab.address['root1']}:{RELAY_PORT}", "--upstream",
            f"tcp://{lab.address['root2']}:{RELAY_PORT}", "--standby", standby, "--stall-timeout", "3",
            "--recover", "10"] + list(extra)


def root_args(studio, mount, file_path):
    return ["--upstream", studio.url(mount), "--upstream", file_path, "--standby", "hot", "--stall-timeout", "3",
            "--recover", "10"]


def blackhole_and_lift(run, relay, node, listener, window):
    """Blackholes `node`'s link for 20 s while `relay` plays input 1 to `listener`, then lifts it: the timeline heard,
    when the relay switched to input 2 and back, the silence heard around the blackhole (`window` s after it) and
    at the return, and the last switch reasons."""
    if not benchlib.wait_until(lambda: relay.playing() == "1", 20, 0.2):
        raise SystemExit(f"{relay.name} does not play its input 1: " + relay.log_text()[-1500:])
    watch = Watch(relay)
    benchlib.wait_until(lambda: listener.seconds() > 8, 20, 0.2)
    t_fault, heard = time.monotonic(), listener.seconds()
    run.lab.blackhole(node)
    log(f"{node}'s link blackholed at {heard:.2f} s heard")
    time.sleep(20)
    t_lift, heard_lift = time.monotonic(), listener.seconds()
    run.lab.restore(node)
    benchlib.wait_until(lambda: relay.playing() == "1", 40, 0.2)
    time.sleep(5)
    watch.stop()
    samples = listener.samples()
    print_timeline(samples)
    f = run.figures
    f["switch_s"] = watch.first("2", t_fault)
    f["back_to_input_1_after_lift_s"] = watch.first("1", t_lift)
    f["silence_at_blackhole"] = silences(samples, heard - 1, heard + window)
    f["longest_silence_at_blackhole_s"] = longest_silence(samples, heard - 1, heard + window)
    back = heard_lift + (f["back_to_input_1_after_lift_s"] or 0)
    f["longest_silence_at_return_s"] = longest_silence(samples, back - 2, back + 3)
    f["switch_reasons"] = [s.get("reason") for s in (relay.station() or {}).get("switches", [])][-4:]
    return f


def mode_edge(args):
    run = Run(["studio", "root1", "root2", "edge1", "listeners"], f"edge-{args.standby}")
    try:
        lab = run.lab
        studio = run.add(Studio(lab, run.work, {"/a.mp3": A, "/b.mp3": B}))
        f1, f2 = tone_file(run.work, FILE1), tone_file(run.work, FILE2)
        run.add(Relay(lab, "root1", run.work, root_args(studio, "/a.mp3", f1)))
        run.add(Relay(lab, "root2", run.work, root_args(studio, "/b.mp3", f2)))
        edge = run.add(Relay(lab, "edge1", run.work, edge_args(lab, args.standby)))
        listener = run.add(Listener(lab, run.work, lab.address["edge1"]))
        return blackhole_and_lift(run, edge, "root1", listener, 8)
    finally:
        run.close()


def mode_transcode(args):
    run = Run(["studio", "root1", "listeners"], "transcode")
    try:
        lab = run.lab
        studio = run.add(Studio(lab, run.work, {"/a.mp3": A}))
        root = run.add(Relay(lab, "root1", run.work, root_args(studio, "/a.mp3", tone_file(run.work, FILE1))))
        listener = run.add(Listener(lab, run.work, lab.address["root1"]))
        return blackhole_and_lift(run, root, "studio", listener, 12)
    finally:
        run.close()


def mode_live(args):
    run = Run(["root1", "dj", "listeners"], "live")
    try:
        lab = run.lab
        password = "dj-links-pw"
        root = run.add(Relay(lab, "root1", run.work, ["--upstream", tone_file(run.work, FILE1, 900),
                                                       "--source-password", password]))
        benchlib.wait_until(lambda: root.playing() == "1", 20, 0.2)
        listener = run.add(Listener(lab, run.work, lab.address["root1"]))
        dj = run.add(Node(lab, "dj", run.work))
        dj.popen(["ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", f"sine=frequency={DJ}",
                  "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", "-content_type", "audio/mpeg", "-f", "mp3",
                  f"icecast://source:{password}@{lab.address['root1']}:{HTTP_PORT}/main"], "dj")
        if not benchlib.wait_until(lambda: root.playing() == "live", 20, 0.2):
            raise SystemExit("the DJ did not go on the air: " + root.log_text()[-1500:])
        watch = Watch(root)
        time.sleep(8)
        t_fault, heard = time.monotonic(), listener.seconds()
        lab.blackhole("dj")
        gone = None
        while time.monotonic() - t_fault < 30:
            live = next((i for i in (root.station() or {}).get("inputs", []) if i.get("name") == "live"), {})
            if live.get("state") not in ("playing",) and gone is None and "stalled" in root.log_text():
                gone = time.monotonic() - t_fault
                break
            time.sleep(0.2)
        time.sleep(3)
        watch.stop()
        samples = listener.samples()
        print_timeline(samples)
        f = run.figures
        f["hand_back_s"] = watch.first("1", t_fault)
        f["source_given_up_s"] = round(gone, 1) if gone is not None else None
        f["silence_at_blackhole"] = silences(samples, heard - 1, heard + 12)
        f["longest_silence_at_blackhole_s"] = longest_silence(samples, heard - 1, heard + 12)
        f["relay_lines"] = [line for line in root.log_text().splitlines() if "live" in line][-4:]
        return f
    finally:
        run.close()


def load_errors(result):
    ogg = result.get("ogg") or {}
    keys = ("crc_errors", "framing_errors", "start_errors", "serial_changes", "granule_regressions",
            "gaps_beyond_join")
    return {k: ogg.get(k) for k in keys} | {
        "connected": result.get("connected"), "open_at_end": result.get("open_at_end"),
        "unexpected_disconnects_normal": result.get("unexpected_disconnects_normal"),
        "failures": result.get("failures")}


def mode_loss(args):
    run = Run(["root1", "root2", "edge1", "listeners"], "loss")
    try:
        lab = run.lab
        root = run.add(Relay(lab, "root1", run.work, ["--upstream", tone_file(run.work, A, 900)]))
        run.add(Relay(lab, "root2", run.work, ["--upstream", tone_file(run.work, B, 900)]))
        roots = [f"tcp://{lab.address[name]}:{RELAY_PORT}" for name in ("root1", "root2")]
        edge = run.add(Relay(lab, "edge1", run.work, ["--upstream", roots[0], "--upstream", roots[1], "--standby",
                                                       "hot", "--stall-timeout", "3", "--recover", "5"]))
        benchlib.wait_until(lambda: edge.playing() == "1", 20, 0.2)
        lab.link("root1", rate=2 * STREAM_KBIT, loss=args.loss)
        seconds = args.minutes * 60
        listener = run.add(Listener(lab, run.work, lab.address["edge1"]))
        load = run.add(Load(lab, run.work, lab.address["edge1"], 20, seconds))
        time.sleep(seconds + 3)
        result = load.result(30)
        samples = listener.samples()
        station = edge.station() or {}
        f = run.figures
        f["link"] = f"root1: {2 * STREAM_KBIT} kbit/s each way, {args.loss} % loss each way; root2 hot standby, clean"
        f["heard_s"] = round(len(samples) / RATE, 1)
        f["silences_after_start"] = silences(samples, 3.0, len(samples) / RATE - 1)
        f["edge_switches"] = [s.get("reason") for s in station.get("switches", [])]
        f["heard_from_root2_s"] = round(sum(e - s for tone, s, e in failover.timeline(samples, RATE, tones=TONES)
                                            if tone == B), 1)
        f["edge_late_lines"] = [line.split(": ", 1)[-1] for line in edge.log_text().splitlines()
                                if ": late" in line][-6:]
        f["edge_reconnects"] = sum(i.get("reconnects", 0) for i in station.get("inputs", []))
        f["load"] = load_errors(result)
        f["root_rss_kb"] = root.rss_kb()
        return f
    finally:
        run.close()


def mode_slow(args):
    run = Run(["root1", "listeners", "slowpoke"], "slow")
    try:
        lab = run.lab
        root = run.add(Relay(lab, "root1", run.work, ["--upstream", tone_file(run.work, A, 900), "--max-lag",
                                                       str(args.max_lag)]))
        lab.link("slowpoke", rate=int(0.8 * STREAM_KBIT))
        load = run.add(Load(lab, run.work, lab.address["root1"], 50, args.seconds, "good"))
        t0 = time.monotonic()
        slow = run.add(Load(lab, run.work, lab.address["root1"], 1, args.seconds, "slow", node="slowpoke"))
        dropped = None
        while time.monotonic() - t0 < args.seconds:
            if "left after" in root.log_text() and "behind" in root.log_text():
                dropped = time.monotonic() - t0
                break
            time.sleep(0.5)
        good = load.result(args.seconds + 30)
        slow_result = slow.result(10)
        f = run.figures
        f["link"] = f"{int(0.8 * STREAM_KBIT)} kbit/s for a {STREAM_KBIT} kbit/s stream; max_lag {args.max_lag} s"
        f["slow_dropped_after_s"] = round(dropped, 1) if dropped else None
        f["relay_lines"] = [line for line in root.log_text().splitlines() if "slowpoke" in line or "behind" in line
                            or "moved" in line][-4:]
        f["good"] = load_errors(good)
        f["slow"] = {"connected": slow_result.get("connected"), "open_at_end": slow_result.get("open_at_end")}
        return f
    finally:
        run.close()


def kernel_sockets(lab, node):
    """The node's TCP sockets as its namespace's kernel holds them (`ss`): how many in FIN-WAIT-1 and established,
    and the bytes queued to send over all of them (their Send-Q summed, closed-but-unsent ones included)."""
    rows = [line.split() for line in lab.run(node, ["ss", "-tanH"]).stdout.splitlines() if line.strip()]
    fin = sum(1 for r in rows if r and r[0] == "FIN-WAIT-1")
    established = sum(1 for r in rows if r and r[0] == "ESTAB")
    queued = sum(int(r[2]) for r in rows if len(r) > 2 and r[2].isdigit())
    return {"fin_wait_1": fin, "established": established, "send_queued_bytes": queued}


def mode_crowd(args):
    run = Run(["root1", "edge1", "listeners"], "crowd")
    try:
        lab = run.lab
        run.add(Relay(lab, "root1", run.work, ["--upstream", tone_file(run.work, A, 900)]))
        edge = run.add(Relay(lab, "edge1", run.work, ["--upstream", f"tcp://{lab.address['root1']}:{RELAY_PORT}"]))
        benchlib.wait_until(lambda: edge.playing() == "1", 20, 0.2)
        time.sleep(3)
        f = run.figures
        f["before"] = {"descriptors": edge.descriptors(), "rss_kb": edge.rss_kb()} | kernel_sockets(lab, "edge1")
        load = run.add(Load(lab, run.work, lab.address["edge1"], args.n, 600, "crowd"))
        benchlib.wait_until(lambda: (edge.station() or {}).get("listeners", 0) >= args.n, 60, 0.5)
        time.sleep(5)
        f["with_listeners"] = {"listeners": (edge.station() or {}).get("listeners"),
                               "descriptors": edge.descriptors(), "rss_kb": edge.rss_kb()} | kernel_sockets(lab, "edge1")
        t0 = time.monotonic()
        lab.blackhole("listeners")
        released = None
        samples = []
        while time.monotonic() - t0 < args.bound:
            count = (edge.station() or {}).get("listeners", -1)
            samples.append((round(time.monotonic() - t0, 1), count))
            if count == 0:
                released = time.monotonic() - t0
                break
            time.sleep(0.5)
        time.sleep(2)
        f["released_all_after_s"] = round(released, 1) if released is not None else None
        f["listeners_over_time"] = samples[::10]
        f["after"] = {"descriptors": edge.descriptors(), "rss_kb": edge.rss_kb()} | kernel_sockets(lab, "edge1")
        lab.restore("listeners")
        return f
    finally:
        run.close()


def mode_push(args):
    run = Run(["studio", "root1"], "push")
    try:
        lab = run.lab
        studio = run.add(Studio(lab, run.work, {}))
        push = f"icecast://source:{ICECAST_PASSWORD}@{lab.address['studio']}:{ICECAST_PORT}/root1.opus"
        run.add(Relay(lab, "root1", run.work, ["--upstream", tone_file(run.work, A, 900), "--push", push]))
        if not benchlib.wait_until(lambda: "/root1.opus" in studio.mounts(), 20, 0.2):
            raise SystemExit("the push did not mount")
        lab.link("root1", loss=3)
        absent, longest, since = 0.0, 0.0, None

        def sample(until):
            nonlocal absent, longest, since
            while time.monotonic() < until:
                here = "/root1.opus" in studio.mounts()
                now = time.monotonic()
                if not here and since is None:
                    since = now
                if here and since is not None:
                    absent += now - since
                    longest = max(longest, now - since)
                    since = None
                time.sleep(0.25)
        sample(time.monotonic() + args.minutes * 60)
        f = run.figures
        f["loss_minutes"] = args.minutes
        f["mount_gone_total_s_under_loss"] = round(absent, 2)
        f["mount_gone_longest_s_under_loss"] = round(longest, 2)
        lab.link("root1", loss=0)
        absent, longest, since = 0.0, 0.0, None
        t0 = time.monotonic()
        lab.blackhole("root1")
        time.sleep(20)
        lab.restore("root1")
        t_lift = time.monotonic()
        back = benchlib.wait_until(lambda: "/root1.opus" in studio.mounts(), 60, 0.25)
        f["blackhole_s"] = 20
        f["mount_back_after_lift_s"] = round(time.monotonic() - t_lift, 1) if back else None
        f["push_lines"] = [line for line in run.things[-1].log_text().splitlines() if "push" in line][-6:]
        del t0
        return f
    finally:
        run.close()


def mode_soak(args):
    rng = random.Random(args.seed)
    run = Run(["studio", "root1", "root2", "edge1", "edge2", "listeners"], "soak")
    try:
        lab = run.lab
        studio = run.add(Studio(lab, run.work, {"/a.mp3": A, "/b.mp3": B}))
        f1, f2 = tone_file(run.work, FILE1, 3600), tone_file(run.work, FILE2, 3600)
        roots = [run.add(Relay(lab, "root1", run.work, root_args(studio, "/a.mp3", f1))),
                 run.add(Relay(lab, "root2", run.work, root_args(studio, "/b.mp3", f2)))]
        edges = [run.add(Relay(lab, name, run.work, edge_args(lab, "hot"))) for name in ("edge1", "edge2")]
        for edge in edges:
            benchlib.wait_until(lambda: edge.playing() is not None, 20, 0.2)
        seconds = args.minutes * 60
        per_edge = 50
        loads = [run.add(Load(lab, run.work, lab.address[e.name], per_edge, seconds + 20, f"load-{e.name}"))
                 for e in edges]
        listeners = [run.add(Listener(lab, run.work, lab.address[e.name], f"listener-{e.name}")) for e in edges]
        relays = roots + edges
        t0 = time.monotonic()
        faults, samples = [], []
        next_fault, next_sample = t0 + rng.uniform(20, 60), t0
        active = {}  # node -> when its fault ends
        while time.monotonic() - t0 < seconds:
            now = time.monotonic()
            for node, end in list(active.items()):
                if now >= end:
                    lab.link(node, rate=0, loss=0, blackhole=False)
                    del active[node]
            if now >= next_fault:
                node = rng.choice(["studio", "root1", "root2", "edge1", "edge2", "listeners"])
                kind = rng.choice(["blackhole", "loss", "rate"])
                # The links that carry listeners (an edge's, the listeners') get faults its listeners outlive: a
                # blackhole shorter than max_lag with TCP's backoff after it, milder loss, and a rate above what
                # the streams on it need (an edge's: its listeners, its decoder and its two roots; the listeners':
                # both edges' listeners) — a path that cannot carry the stream drops its listeners, as it should.
                carries = {"edge1": per_edge + 3, "edge2": per_edge + 3, "listeners": 2 * (per_edge + 1)}.get(node)
                length = rng.uniform(2, 5) if kind == "blackhole" and carries else rng.uniform(5, 40)
                if node not in active:
                    if kind == "blackhole":
                        lab.link(node, blackhole=True)
                    elif kind == "loss":
                        lab.link(node, loss=rng.randint(1, 3 if carries else 5))
                    else:
                        lab.link(node, rate=int(STREAM_KBIT * (carries or 1) * rng.uniform(1.5 if carries else 2.5, 6)))
                    active[node] = now + length
                    faults.append((round(now - t0, 1), node, kind, round(length, 1)))
                    log(f"{now - t0:7.1f} s: {kind} on {node} for {length:.1f} s")
                next_fault = now + rng.uniform(20, 60)
            if now >= next_sample:
                samples.append([round(now - t0)] + [(r.descriptors(), r.rss_kb()) for r in relays])
                next_sample = now + 10
            time.sleep(0.2)
        for node in list(active):
            lab.link(node, rate=0, loss=0, blackhole=False)
        results = [load.result(60) for load in loads]
        f = run.figures
        f["minutes"], f["seed"], f["faults"] = args.minutes, args.seed, faults
        f["loads"] = {e.name: load_errors(r) for e, r in zip(edges, results)}
        first = [s for s in samples if s[0] < 300]
        last = [s for s in samples if s[0] >= seconds - 300]
        f["flat"] = {}
        for i, relay in enumerate(relays):
            fds = (benchlib.median([s[i + 1][0] for s in first]), benchlib.median([s[i + 1][0] for s in last]))
            rss = (benchlib.median([s[i + 1][1] for s in first]), benchlib.median([s[i + 1][1] for s in last]))
            f["flat"][relay.name] = {"descriptors_first_last_5min": fds, "rss_kb_first_last_5min": rss}
        f["rss_kb_every_minute"] = {relay.name: [s[i + 1][1] for s in samples[::6]] for i, relay in enumerate(relays)}
        f["heard_s"] = {e.name: round(lst.seconds(), 1) for e, lst in zip(edges, listeners)}
        f["listeners_at_end"] = {e.name: (e.station() or {}).get("listeners") for e in edges}
        f["listeners_left"] = {e.name: [line.split(": ", 2)[-1] for line in e.log_text().splitlines()
                                        if " left after " in line or "more " in line and "listener" in line][-8:]
                               for e in edges}
        return f
    finally:
        run.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["edge", "transcode", "live", "loss", "slow", "crowd", "push", "soak", "all"])
    parser.add_argument("--standby", choices=["hot", "cold"], default="hot")
    parser.add_argument("--minutes", type=float)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--loss", type=int, default=3, help="loss: the share of packets dropped each way (%%)")
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--bound", type=float, default=90, help="crowd: the longest wait for the release (s)")
    parser.add_argument("--max-lag", type=float, default=5)
    parser.add_argument("--seconds", type=float, default=150, help="slow: how long the slow listener may take")
    parser.add_argument("--json")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    modes = {"edge": mode_edge, "transcode": mode_transcode, "live": mode_live, "loss": mode_loss, "slow": mode_slow,
             "crowd": mode_crowd, "push": mode_push, "soak": mode_soak}
    defaults = {"loss": 10, "push": 5, "soak": 30}
    figures = []
    plan = [args.mode] if args.mode != "all" else ["edge", "edge-cold", "transcode", "live", "loss", "slow", "crowd",
                                                   "push"]
    for mode in plan:
        run_args = argparse.Namespace(**vars(args))
        if mode == "edge-cold":
            mode, run_args.standby = "edge", "cold"
        if run_args.minutes is None:
            run_args.minutes = defaults.get(mode, 1)
        log(f"mode {mode} ({relay_binary()})")
        result = modes[mode](run_args)
        print(json.dumps(result, indent=1))
        figures.append(result)
    if args.json:
        benchlib.write_json(args.json, figures, indent=1)


if __name__ == "__main__":
    main()
