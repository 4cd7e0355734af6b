#!/usr/bin/env python3
"""Never dead air, measured: a station with a primary, a backup and a fallback file, switched by failures, silence
and an operator, with real peers and listeners held through all of it.

Modes (bench/failover.sh runs them; every process is started here and stopped by its PID, every wait has a deadline):
  scenario --standby cold|hot
      Debian's icecast2 on a free port with two ffmpeg sources: /primary.mp3 (440 Hz, ICY title "Primary Tone") and
      /backup.mp3 (660 Hz); a 30 s MP3 of 880 Hz with the ID3 title "Fallback Tone" as the file. The relay
      (`serve --upstream primary --upstream backup --upstream FILE --dead-air 5 --recover 10 --crossfade 0.5`),
      an ffmpeg listener decoding it all along (16 kHz mono), 1000 raw-TCP and 100 HTTP listeners (radio-relay-load,
      which checks every Ogg page). The steps: primary SIGKILLed; backup stopped; primary back; backup back; the
      primary sends digital silence (its volume to 0 for 12 s): dead air; its sound back. Then a force of input 3
      and its release through the status endpoint. Prints the timeline of the tone heard (Goertzel over 50 ms
      windows), the silence heard at each switch, the switch reasons and their delays, the titles seen, and the
      listeners' disconnects and stream errors.
  cpu
      The relay's CPU with the backup in hot standby against cold, in interleaved runs (ROUNDS, default 3, of
      DURATION s, default 60, each after a 10 s settle), medians and the ratio; RSS beside it.
  chaos --minutes M
      M minutes (default 30): every 20-60 s (seeded) one of the sources is killed or stopped, or a stopped one
      restarted; every 60 s the config file is rewritten (crossfade and recover changed, and every other time the
      order of the backup and the file swapped) and the relay reloaded (SIGHUP); 1000 raw and 100 HTTP listeners
      all along. Reports disconnects and stream errors (radio-relay-load), the relay's descriptors and RSS (first
      and last 5 minutes: their medians within 5 %), and the share of the time each input played (status.json, once
      a second).

Python 3.9+, standard library; bench/benchlib.py for the processes and figures.
"""
import argparse
import array
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

HOST = "127.0.0.1"
TONES = {440.0: "primary", 660.0: "backup", 880.0: "file"}
log = benchlib.logger("failover")


def relay_binary():
    return os.environ.get("RADIO_RELAY") or os.path.join(benchlib.REPO_ROOT, ".build-static", "release", "radio-relay")


class Icecast:
    """icecast2 with a minimal config in a temporary directory."""

    def __init__(self, work):
        # Icecast started as root becomes its own user (changeowner), which must reach its log folder.
        os.chmod(work, 0o755)
        self.port = benchlib.free_port()
        self.password = "pw-bench-" + str(os.getpid())
        self.directory = os.path.join(work, "icecast")
        os.makedirs(self.directory + "/log", exist_ok=True)
        change_owner = ""
        if os.getuid() == 0:
            try:
                import grp
                import pwd
                os.chown(self.directory + "/log", pwd.getpwnam("icecast2").pw_uid, grp.getgrnam("icecast").gr_gid)
                change_owner = "<changeowner><user>icecast2</user><group>icecast</group></changeowner>"
            except KeyError:
                pass
        with open(self.directory + "/icecast.xml", "w") as f:
            f.write(f"""<icecast><location>Earth</location><admin>icemaster@localhost</admin>
<limits><clients>50</clients><sources>4</sources><source-timeout>10</source-timeout></limits>
<authentication><source-password>{self.password}</source-password><admin-user>admin</admin-user>
<admin-password>{self.password}</admin-password></authentication><hostname>127.0.0.1</hostname>
<listen-socket><port>{self.port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
<paths><basedir>/usr/share/icecast2</basedir><logdir>{self.directory}/log</logdir>
<webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
<logging><errorlog>error.log</errorlog><accesslog>access.log</accesslog><loglevel>2</loglevel></logging>
<security><chroot>0</chroot>{change_owner}</security></icecast>""")
        self.proc = subprocess.Popen(["icecast2", "-c", self.directory + "/icecast.xml"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not benchlib.wait_until(self.accepting, 10):
            raise SystemExit("icecast2 did not start")

    def accepting(self):
        import socket
        try:
            with socket.create_connection((HOST, self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def mounts(self):
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.port}/status-json.xsl", timeout=2) as r:
                text = r.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return text

    def set_title(self, mount, title):
        request = urllib.request.Request(
            f"http://{HOST}:{self.port}/admin/metadata?mount={mount}&mode=updinfo&song={urllib.request.quote(title)}")
        import base64
        request.add_header("Authorization", "Basic " + base64.b64encode(f"admin:{self.password}".encode()).decode())
        with urllib.request.urlopen(request, timeout=2) as r:
            r.read()

    def url(self, mount):
        return f"http://{HOST}:{self.port}{mount}"

    def stop(self):
        benchlib.stop_process(self.proc)


class Source:
    """An ffmpeg source of a lavfi filter, as 128 kb/s MP3, sent to Icecast at real time."""

    def __init__(self, icecast, mount, filter_, title=None):
        self.icecast, self.mount, self.filter, self.title = icecast, mount, filter_, title
        self.proc = None

    def start(self, filter_=None):
        self.proc = subprocess.Popen(
            ["ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", filter_ or self.filter,
             "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", "-content_type", "audio/mpeg", "-f", "mp3",
             f"icecast://source:{self.icecast.password}@{HOST}:{self.icecast.port}{self.mount}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        benchlib.wait_until(lambda: self.mount.strip("/") in self.icecast.mounts(), 10, 0.1)
        if self.title:
            self.icecast.set_title(self.mount, self.title)

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.running:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(5)

    def stop(self):
        if self.proc is not None:
            benchlib.stop_process(self.proc)


def tone_file(work, frequency, seconds, title):
    path = os.path.join(work, f"tone-{int(frequency)}.mp3")
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                    f"sine=frequency={frequency}:duration={seconds}", "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k",
                    "-metadata", f"title={title}", "-y", path], check=True)
    return path


class Relay:
    def __init__(self, work, arguments=None, config=None, ports=None):
        # With a config file, its ports (listen, HTTP, status); else free ones for the flags.
        self.port, self.http, self.status = ports or (benchlib.free_port(), benchlib.free_port(), benchlib.free_port())
        self.log_path = os.path.join(work, "relay.log")
        self.log_file = open(self.log_path, "w")
        if config is not None:
            command = [relay_binary(), "serve", "--config", config]
        else:
            command = [relay_binary(), "serve", "--name", "main", "--bind", HOST, "--port", str(self.port),
                       "--http", f"{HOST}:{self.http}", "--status", f"{HOST}:{self.status}"] + arguments
        self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log_file)
        if not benchlib.wait_until(lambda: self.station() is not None, 10, 0.1):
            self.stop()
            raise SystemExit("the relay did not start: " + open(self.log_path).read()[-2000:])

    def station(self):
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.status}/status.json", timeout=2) as r:
                return json.loads(r.read())["stations"][0]
        except (OSError, ValueError, KeyError, IndexError):
            return None

    def post(self, path):
        request = urllib.request.Request(f"http://{HOST}:{self.status}{path}", data=b"", method="POST")
        try:
            with urllib.request.urlopen(request, timeout=2) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def playing(self):
        station = self.station()
        return station and station.get("input_playing")

    def stop(self):
        benchlib.stop_process(self.proc)
        self.log_file.close()


class Load:
    """radio-relay-load: n listeners for `duration` s, its JSON report at the end."""

    def __init__(self, work, port, n, duration, http_path=None, name="raw"):
        self.json = os.path.join(work, f"load-{name}.json")
        command = [benchlib.load_binary(), "--port", str(port), "-n", str(n), "--duration", str(duration),
                   "--json", self.json]
        if http_path:
            command += ["--http", http_path]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def result(self, timeout):
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            benchlib.stop_process(self.proc)
        with open(self.json) as f:
            return json.load(f)


class DecodingListener:
    """ffmpeg decoding the station's raw TCP stream to 16 kHz mono float samples, all along."""

    RATE = 16000

    def __init__(self, work, port):
        self.path = os.path.join(work, "listener.f32")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            ["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", f"tcp://{HOST}:{port}", "-ac", "1", "-ar",
             str(self.RATE), "-f", "f32le", "-y", self.path],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def seconds(self):
        try:
            return os.path.getsize(self.path) / 4 / self.RATE
        except OSError:
            return 0.0

    def samples(self):
        data = array.array("f")
        with open(self.path, "rb") as f:
            data.frombytes(f.read())
        return data

    def stop(self):
        benchlib.stop_process(self.proc)


def stop_all(things, icecast, loads):
    """Stops what a mode started (by PID): relay, sources and listeners, then Icecast, then the load tools."""
    for thing in things:
        if thing is not None:
            thing.stop()
    icecast.stop()
    for load in loads:
        if load is not None:
            benchlib.stop_process(load.proc)


def timeline(samples, rate, window=0.05, threshold=0.03, tones=None):
    """[(tone or None, start s, end s)]: each window labelled with the loudest of `tones` (default the scenario's)
    above `threshold`."""
    size = int(window * rate)
    segments = []
    for start in range(0, len(samples) - size, size):
        chunk = samples[start:start + size]
        best, amplitude = None, threshold
        for frequency in (TONES if tones is None else tones):
            a = 2 * math.sqrt(max(benchlib.goertzel(chunk, frequency, rate), 0)) / size
            if a >= amplitude:
                best, amplitude = frequency, a
        at = start / rate
        if segments and segments[-1][0] == best:
            segments[-1][2] = at + window
        else:
            segments.append([best, at, at + window])
    return segments


def largest_step(samples, rate, around, half=0.5):
    """The largest step between neighbouring samples within `half` s of `around` s."""
    lo = max(1, int((around - half) * rate))
    hi = min(len(samples), int((around + half) * rate))
    return max((abs(samples[i] - samples[i - 1]) for i in range(lo, hi)), default=0.0)


def print_timeline(segments):
    for tone, start, end in segments:
        if end - start < 0.2 and tone is not None:
            continue
        name = TONES.get(tone, "silence") if tone else "silence"
        print(f"  {start:7.2f} – {end:7.2f} s  {name}{'' if tone else ''}")


# ---------------------------------------------------------------- scenario

def scenario(args):
    work = tempfile.mkdtemp(prefix="failover-")
    icecast = Icecast(work)
    primary = Source(icecast, "/primary.mp3", "sine=frequency=440", "Primary Tone")
    backup = Source(icecast, "/backup.mp3", "sine=frequency=660", "Backup Tone")
    relay = listener = raw = http = None
    steps = []
    try:
        primary.start()
        backup.start()
        fallback = tone_file(work, 880, 30, "Fallback Tone")
        relay = Relay(work, ["--upstream", icecast.url("/primary.mp3"), "--upstream", icecast.url("/backup.mp3"),
                             "--upstream", fallback, "--standby", args.standby, "--dead-air", "5", "--recover", "10",
                             "--crossfade", "0.5", "--reconnect-max", "2", "--stall-timeout", "5"])
        duration = 140
        raw = Load(work, relay.port, 1000, duration, name="raw")
        http = Load(work, relay.http, 100, duration, http_path="/main.opus", name="http")
        listener = DecodingListener(work, relay.port)
        titles = set()

        def wait_playing(name, timeout):
            def check():
                station = relay.station() or {}
                if station.get("title"):
                    titles.add(station["title"])
                return station.get("input_playing") == name
            return benchlib.wait_until(check, timeout, 0.1)

        def step(what):
            steps.append((what, listener.seconds()))
            log(f"{listener.seconds():7.2f} s  {what}")

        wait_playing("1", 10)
        time.sleep(10)
        step("primary SIGKILLed")
        primary.kill()
        wait_playing("2", 20)
        time.sleep(10)
        step("backup stopped (SIGTERM)")
        backup.stop()
        wait_playing("3", 20)
        time.sleep(10)
        step("primary back")
        # 25 s into its run the primary's volume goes to 0 for 12 s: digital silence on a live connection.
        primary.start("sine=frequency=440,volume=volume=0:enable='between(t,25,37)'")
        primary_started = listener.seconds()
        wait_playing("1", 25)
        step("backup back")
        backup.start()
        benchlib.wait_until(lambda: listener.seconds() > primary_started + 25, 30, 0.1)
        step("primary silent (volume 0)")
        wait_playing("2", 15)
        benchlib.wait_until(lambda: listener.seconds() > primary_started + 37, 20, 0.1)
        step("primary sounds again")
        wait_playing("1", 25)
        time.sleep(5)
        step("force input 3")
        status, text = relay.post("/stations/main/force/3")
        log(f"POST /stations/main/force/3: {status} {text.strip()}")
        wait_playing("3", 10)
        time.sleep(5)
        forced = (relay.station() or {}).get("input_forced")
        step("release")
        status, text = relay.post("/stations/main/release")
        log(f"POST /stations/main/release: {status} {text.strip()}")
        wait_playing("1", 10)
        time.sleep(5)
        station = relay.station() or {}
        listener_alive = listener.proc.poll() is None
        listener.stop()
        samples = listener.samples()
        raw_result = raw.result(duration + 30)
        http_result = http.result(duration + 30)
    finally:
        stop_all([listener, relay, primary, backup], icecast, [raw, http])

    rate = DecodingListener.RATE
    segments = timeline(samples, rate)
    print(f"\nstandby = {args.standby}: timeline of the tone the ffmpeg listener heard")
    print_timeline(segments)
    print("\nsteps (listener seconds):")
    for what, at in steps:
        print(f"  {at:7.2f} s  {what}")
    print("\nswitches (status.json):")
    for change in station.get("switches", []):
        print(f"  {change['from']} -> {change['to']}: {change['reason']}"
              + (f" ({change['detail']})" if change.get("detail") else ""))
    print(f"\nforced while forced: {forced}; titles seen: {sorted(titles)}")
    print("\nat each step: silence heard, and the next tone's start")
    for what, at in steps:
        after = [s for s in segments if s[1] >= at - 0.2]
        silence = sum(e - s for t, s, e in after[:6] if t is None and s < at + 12)
        nxt = next(((t, s) for t, s, e in after if t is not None and e - s >= 0.5 and s > at), None)
        step_max = largest_step(samples, rate, nxt[1]) if nxt else 0
        print(f"  {what:28s} silence {silence:5.2f} s; next tone {TONES.get(nxt[0], '-') if nxt else '-'}"
              f" at +{(nxt[1] - at) if nxt else float('nan'):5.2f} s; largest sample step near it {step_max:.3f}")
    # The same measure in steady play, for comparison: a click is a step far above the tones' own (a crossfade's
    # sum of two tones may reach about twice one tone's).
    steady = {}
    for tone, start, end in segments:
        if tone is not None and end - start >= 3:
            step_max = largest_step(samples, rate, (start + end) / 2)
            steady[tone] = max(steady.get(tone, 0.0), step_max)
    print("largest sample step in steady play (1 s in the middle of each tone of 3 s or more): "
          + ", ".join(f"{TONES[tone]} {value:.3f}" for tone, value in sorted(steady.items())))
    order = []
    for tone, start, end in segments:
        if tone is not None and end - start >= 0.5 and (not order or order[-1] != TONES[tone]):
            order.append(TONES[tone])
    print("order heard: " + " → ".join(order))
    for name, result in (("raw", raw_result), ("http", http_result)):
        ogg = result.get("ogg", {})
        print(f"{name}: {result.get('connected')} connected, {result.get('open_at_end')} open at the end, "
              f"{result.get('unexpected_disconnects_normal')} disconnects, crc {ogg.get('crc_errors')}, "
              f"framing {ogg.get('framing_errors')}, gaps {ogg.get('gaps_beyond_join')}, "
              f"granule regressions {ogg.get('granule_regressions')}, longest stall "
              f"{result.get('stall_ms', {}).get('max')} ms")
    print(f"ffmpeg listener still connected at the end: {listener_alive}")


# ---------------------------------------------------------------- cpu

def cpu(args):
    rounds = int(os.environ.get("ROUNDS", "3"))
    duration = float(os.environ.get("DURATION", "60"))
    work = tempfile.mkdtemp(prefix="failover-cpu-")
    icecast = Icecast(work)
    primary = Source(icecast, "/primary.mp3", "sine=frequency=440")
    backup = Source(icecast, "/backup.mp3", "sine=frequency=660")
    figures = {"cold": [], "hot": []}
    rss = {"cold": [], "hot": []}
    try:
        primary.start()
        backup.start()
        for _ in range(rounds):
            for standby in ("cold", "hot"):
                relay = Relay(work, ["--upstream", icecast.url("/primary.mp3"), "--upstream",
                                     icecast.url("/backup.mp3"), "--standby", standby])
                try:
                    time.sleep(10)
                    ticks = benchlib.proc_ticks(relay.proc.pid)
                    time.sleep(duration)
                    used = (benchlib.proc_ticks(relay.proc.pid) - ticks) / benchlib.CLK_TCK
                    figures[standby].append(100 * used / duration)
                    rss[standby].append(benchlib.proc_status_kb(relay.proc.pid) / 1024)
                    inputs = (relay.station() or {}).get("inputs", [])
                    log(f"{standby}: {figures[standby][-1]:.2f} % of a core, RSS {rss[standby][-1]:.1f} MB, inputs "
                        + ", ".join(f"{i['name']} {i['state']}" for i in inputs))
                finally:
                    relay.stop()
    finally:
        primary.stop()
        backup.stop()
        icecast.stop()
    cold, hot = benchlib.median(figures["cold"]), benchlib.median(figures["hot"])
    print(f"\nCPU of the relay, % of one core, median of {rounds} interleaved runs of {duration:.0f} s:")
    print(f"  cold standby {cold:6.2f} %   (runs {', '.join(f'{v:.2f}' for v in figures['cold'])})")
    print(f"  hot standby  {hot:6.2f} %   (runs {', '.join(f'{v:.2f}' for v in figures['hot'])})")
    print(f"  hot / cold   {hot / cold if cold else float('nan'):6.2f}")
    print(f"RSS median: cold {benchlib.median(rss['cold']):.1f} MB, hot {benchlib.median(rss['hot']):.1f} MB")


# ---------------------------------------------------------------- chaos

def chaos(args):
    seconds = args.minutes * 60
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="failover-chaos-")
    icecast = Icecast(work)
    primary = Source(icecast, "/primary.mp3", "sine=frequency=440")
    backup = Source(icecast, "/backup.mp3", "sine=frequency=660")
    fallback = tone_file(work, 880, 30, "Fallback Tone")
    port, http_port, status_port = benchlib.free_port(), benchlib.free_port(), benchlib.free_port()
    config = os.path.join(work, "relay.conf")

    def write_config(version):
        inputs = [icecast.url("/primary.mp3"), icecast.url("/backup.mp3"), fallback]
        if version % 2:
            inputs = [inputs[0], inputs[2], inputs[1]]
        lines = ["[server]", f"status = {HOST}:{status_port}", f"http = {HOST}:{http_port}", "",
                 "[station main]", f"bind = {HOST}", f"port = {port}"]
        lines += [f"upstream = {url}" for url in inputs]
        lines += [f"recover = {5 + version % 3 * 5}", f"crossfade = {0.25 + version % 2 * 0.5}",
                  "dead_air = 5", "standby = hot", "reconnect_max = 3", "stall_timeout = 5"]
        benchlib.write_atomic(config, "\n".join(lines) + "\n")

    write_config(0)
    relay = raw = http = None
    samples = []
    played = {}
    events = []
    try:
        primary.start()
        backup.start()
        relay = Relay(work, config=config, ports=(port, http_port, status_port))
        raw = Load(work, port, 1000, seconds + 20, name="raw")
        http = Load(work, http_port, 100, seconds + 20, http_path="/main.opus", name="http")
        start = time.monotonic()
        next_fault = start + rng.uniform(20, 60)
        next_reload = start + 60
        version = 0
        while time.monotonic() - start < seconds:
            now = time.monotonic()
            station = relay.station() or {}
            playing = station.get("input_playing")
            url = next((i["url"] for i in station.get("inputs", []) if i["name"] == playing), None)
            played[url] = played.get(url, 0) + 1
            if int(now - start) % 10 == 0:
                fds = len(os.listdir(f"/proc/{relay.proc.pid}/fd"))
                samples.append((now - start, fds, benchlib.proc_status_kb(relay.proc.pid) / 1024))
            if now >= next_fault:
                source = rng.choice([primary, backup])
                if source.running:
                    action = rng.choice(["kill", "stop"])
                    source.kill() if action == "kill" else source.stop()
                else:
                    action = "start"
                    source.start()
                events.append((now - start, f"{source.mount} {action}"))
                next_fault = now + rng.uniform(20, 60)
            if now >= next_reload:
                version += 1
                write_config(version)
                relay.proc.send_signal(signal.SIGHUP)
                events.append((now - start, f"reload {version}"))
                next_reload += 60
            time.sleep(max(0.0, 1 - (time.monotonic() - now)))
        raw_result = raw.result(60)
        http_result = http.result(60)
    finally:
        stop_all([relay, primary, backup], icecast, [raw, http])
    print(f"\nchaos: {args.minutes} min, seed {args.seed}, {len([e for e in events if 'reload' not in e[1]])} faults, "
          f"{len([e for e in events if 'reload' in e[1]])} reloads")
    for name, result in (("raw", raw_result), ("http", http_result)):
        ogg = result.get("ogg", {})
        print(f"  {name}: {result.get('connected')} connected, {result.get('open_at_end')} open at the end, "
              f"{result.get('unexpected_disconnects_normal')} disconnects, stream errors: crc {ogg.get('crc_errors')} "
              f"framing {ogg.get('framing_errors')} gaps {ogg.get('gaps_beyond_join')} granule "
              f"{ogg.get('granule_regressions')}")
    window = 300
    first = [s for s in samples if 60 <= s[0] < 60 + window]
    last = [s for s in samples if s[0] >= seconds - window]
    for index, name in ((1, "descriptors"), (2, "RSS MB")):
        a, b = benchlib.median([s[index] for s in first]), benchlib.median([s[index] for s in last])
        print(f"  {name}: median {a:.1f} in minutes 1-6, {b:.1f} in the last 5: {100 * (b - a) / a:+.1f} %")
    total = sum(played.values())
    print("  share of the time each input played:")
    for url, count in sorted(played.items(), key=lambda item: -item[1]):
        print(f"    {100 * count / total:5.1f} %  {url}")


def main():
    # SIGTERM (and SIGINT, which a background job ignores) ends a run through its finally blocks: every process it
    # started is stopped by its PID.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("scenario")
    s.add_argument("--standby", choices=["cold", "hot"], default="cold")
    sub.add_parser("cpu")
    c = sub.add_parser("chaos")
    c.add_argument("--minutes", type=float, default=30)
    c.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    {"scenario": scenario, "cpu": cpu, "chaos": chaos}[args.mode](args)


if __name__ == "__main__":
    main()
