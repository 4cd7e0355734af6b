#!/usr/bin/env python3
"""What a listener hears at every kind of seam, and how long a hung upstream costs, measured with real peers.

Modes (bench/seams.sh runs them; every process is started here and stopped by its PID, every wait has a deadline):
  hang [--stall S]
      Two Debian icecast2 servers, a studio (/live.mp3, 440 Hz) and a backup (/live.mp3, 660 Hz), each fed by an
      ffmpeg source. The relay: `--upstream STUDIO --upstream BACKUP --standby hot --stall-timeout S` (default 5).
      An ffmpeg listener decodes the raw port at 48 kHz. The studio Icecast is stopped with SIGSTOP (a hung
      server: its socket stays established and sends nothing); prints the silence heard, the time from the SIGSTOP
      to the switch the relay logs, and the switch's reason; then SIGCONT.
  dj
      The relay relays a 440 Hz file with a DJ password; ffmpeg DJs (MP3, at 0.31 of full scale, as loud as a
      programme) take over and leave three ways: a DJ whose 6 s end (hand-back: 880 Hz), one killed by
      /admin/killsource (990 Hz), one stopped with SIGSTOP (hang: 770 Hz; the relay takes over once it is late,
      source_timeout, 3 s, ends it). Then a station whose only input is an 8 s file of 550 Hz
      (looped, 4 400 whole cycles) for 30 s: the file-loop seams. For each seam: the largest step between two
      neighbouring samples within 0.3 s of it, beside the largest step of the steady tone around it (the
      programme's own), and the quietest 10 ms there (a hole).
  djset [--minutes M]
      Ogg Opus DJs on the air for M minutes (default 10) at once: ffmpeg (libopus, 660 Hz) over a relayed 440 Hz
      station, Liquidsoap (%opus, a 990 Hz file looped) on a live-only station; a 48 kHz decoding listener each.
      Prints how long each DJ was heard, in how many pieces, and any live source the relay ended early.

Python 3.9+, standard library; bench/benchlib.py and bench/failover.py for the processes.
"""
import argparse
import array
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import failover  # noqa: E402
from failover import HOST, Icecast, Relay, Source  # noqa: E402

RATE = 48000
log = benchlib.logger("seams")


class Listener48(failover.DecodingListener):
    """ffmpeg decoding the raw port at 48 kHz (the common rate: a step is a step of what was encoded)."""

    RATE = RATE

    def __init__(self, work, port, name="listener"):
        self.path = os.path.join(work, f"{name}.f32")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            ["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", f"tcp://{HOST}:{port}", "-ac", "1", "-ar",
             str(RATE), "-f", "f32le", "-y", self.path],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def segments(samples, tones, window=0.02, threshold=0.03):
    """[(tone or None, start, end)] over `window` s windows (Goertzel), at the 48 kHz of these listeners."""
    return failover.timeline(samples, RATE, window, threshold, tones)


def steps(samples, lo, hi):
    lo, hi = max(1, int(lo * RATE)), min(len(samples), int(hi * RATE))
    return max((abs(samples[i] - samples[i - 1]) for i in range(lo, hi)), default=0.0)


def quietest(samples, lo, hi, window=0.01):
    size = int(window * RATE)
    lo, hi = max(0, int(lo * RATE)), min(len(samples), int(hi * RATE))
    levels = [max(abs(v) for v in samples[i:i + size]) for i in range(lo, hi - size, size // 2)]
    return min(levels, default=0.0)


def seam_row(name, samples, at, steady_from, steady_to):
    own = steps(samples, steady_from, steady_to)
    near = steps(samples, at - 0.3, at + 0.3)
    hole = quietest(samples, at - 0.3, at + 0.3)
    print(f"  {name:<22} at {at:7.2f} s   step {near:.4f}   programme's own {own:.4f}   ratio {near / max(own, 1e-9):5.2f}"
          f"   quietest 10 ms peak {hole:.3f}")
    return near / max(own, 1e-9)


def status_post(relay, path):
    request = urllib.request.Request(f"http://{HOST}:{relay.status}{path}", data=b"", method="POST")
    try:
        with urllib.request.urlopen(request, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as error:
        return error.code


def dj(port, password, frequency, seconds):
    return subprocess.Popen(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i",
         f"sine=frequency={frequency}:sample_rate=44100:duration={seconds}", "-af", "volume=2.5", "-ac", "2",
         "-c:a", "libmp3lame",
         "-b:a", "128k", "-content_type", "audio/mpeg", "-f", "mp3",
         f"icecast://source:{password}@{HOST}:{port}/main"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_playing(relay, name, timeout):
    return benchlib.wait_until(lambda: relay.playing() == name, timeout, 0.05)


def mode_dj(args):
    work = tempfile.mkdtemp(prefix="seams-")
    password = "dj-bench-pass-1"
    relay_file = failover.tone_file(work, 440, 120, "Relay")
    things = []
    try:
        relay = Relay(work, ["--upstream", relay_file, "--source-password", password, "--source-timeout", "3"])
        things.append(relay)
        listener = Listener48(work, relay.port)
        things.append(listener)
        benchlib.wait_until(lambda: listener.seconds() > 3, 15)
        # Hand-back: a 6 s DJ ends on its own.
        source = dj(relay.http, password, 880, 6)
        wait_playing(relay, "live", 10)
        wait_playing(relay, "1", 15)
        benchlib.stop_process(source)
        time.sleep(3)
        # Kill: /admin/killsource on the status endpoint.
        source = dj(relay.http, password, 990, 60)
        wait_playing(relay, "live", 10)
        time.sleep(4)
        print(f"killsource: {status_post(relay, '/admin/killsource?mount=/main')}")
        wait_playing(relay, "1", 10)
        benchlib.stop_process(source)
        time.sleep(3)
        # Hang: the DJ stopped (SIGSTOP): the relay takes over once it is late, source_timeout ends it.
        source = dj(relay.http, password, 770, 60)
        wait_playing(relay, "live", 10)
        time.sleep(4)
        source.send_signal(signal.SIGSTOP)
        wait_playing(relay, "1", 15)
        source.send_signal(signal.SIGCONT)
        benchlib.stop_process(source)
        time.sleep(3)
        listener.stop()
        samples = listener.samples()
        relay.stop()
        things = []
        tl = segments(samples, [440.0, 880.0, 990.0, 770.0])
        print("the relayed station with three DJs (48 kHz decode of the raw port):")
        ratios = []
        for tone, name in ((880.0, "hand-back"), (990.0, "killsource"), (770.0, "hang (SIGSTOP)")):
            part = [s for s in tl if s[0] == tone and s[2] - s[1] > 1]
            if not part:
                print(f"  {name}: the DJ's tone was never heard")
                continue
            end = part[0][2]
            ratios.append(seam_row(name, samples, end, part[0][1] + 1, end - 0.5))

        # The file loop: an 8 s file of 550 Hz (4 400 whole cycles), its only input, for 30 s.
        loop_file = os.path.join(work, "loop-550.mp3")
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                        "sine=frequency=550:sample_rate=44100:duration=8", "-ac", "2", "-c:a", "libmp3lame", "-b:a",
                        "128k", "-y", loop_file], check=True)
        relay = Relay(work, ["--upstream", loop_file])
        things.append(relay)
        listener = Listener48(work, relay.port, "loop")
        things.append(listener)
        benchlib.wait_until(lambda: listener.seconds() > 30, 45)
        listener.stop()
        samples = listener.samples()
        relay.stop()
        things = []
        # A seam anywhere in 30 s: a hole is a 10 ms window far below the tone's level; a step is a step larger than
        # the tone's own (its amplitude x 2 pi f / rate). Both over the whole recording after its first second.
        print("the file loop (8 s of 550 Hz, 30 s recorded, three or four seams):")
        size = RATE // 100
        lo, hi = RATE, len(samples) - RATE
        peaks = [(max(abs(v) for v in samples[i:i + size]), i) for i in range(lo, hi - size, size // 2)]
        level = sorted(p for p, _ in peaks)[len(peaks) // 2]
        hole, hole_at = min(peaks)
        own = level * 2 * math.pi * 550 / RATE
        worst = max(range(lo, hi), key=lambda i: abs(samples[i] - samples[i - 1]))
        step = abs(samples[worst] - samples[worst - 1])
        print(f"  tone level {level:.3f}; quietest 10 ms peak {hole:.3f} at {hole_at / RATE:.2f} s; largest step "
              f"{step:.4f} at {worst / RATE:.2f} s against the tone's own {own:.4f} (ratio {step / own:.2f})")
        ratios.append(step / own)
        print(f"largest ratio of a seam's step to the programme's own: {max(ratios, default=0):.2f}")
    finally:
        for thing in things:
            thing.stop()


def mode_hang(args):
    work = tempfile.mkdtemp(prefix="seams-hang-")
    os.chmod(work, 0o755)  # each Icecast, started as root, becomes its own user, which must reach its log folder
    studio_dir, backup_dir = os.path.join(work, "studio"), os.path.join(work, "backup")
    os.makedirs(studio_dir)
    os.makedirs(backup_dir)
    studio, backup = Icecast(studio_dir), Icecast(backup_dir)
    sources, things = [], []
    try:
        sources = [Source(studio, "/live.mp3", "sine=frequency=440"), Source(backup, "/live.mp3", "sine=frequency=660")]
        for source in sources:
            source.start()
        relay = Relay(work, ["--upstream", studio.url("/live.mp3"), "--upstream", backup.url("/live.mp3"),
                             "--standby", "hot", "--stall-timeout", str(args.stall)])
        things.append(relay)
        listener = Listener48(work, relay.port)
        things.append(listener)
        benchlib.wait_until(lambda: listener.seconds() > 6 and relay.playing() == "1", 20)
        time.sleep(2)
        stopped_at = time.monotonic()
        heard_at = listener.seconds()
        studio.proc.send_signal(signal.SIGSTOP)
        switched = benchlib.wait_until(lambda: relay.playing() == "2", 30, 0.05)
        switch_s = time.monotonic() - stopped_at
        time.sleep(4)
        studio.proc.send_signal(signal.SIGCONT)
        listener.stop()
        samples = listener.samples()
        relay.stop()
        things = []
        log_text = open(relay.log_path).read()
        reason = [line for line in log_text.splitlines() if "input 2 plays now" in line]
        tl = segments(samples, [440.0, 660.0])
        gap = max((e - s for tone, s, e in tl if tone is None and e > heard_at - 1), default=0.0)
        print(f"a hung studio Icecast (SIGSTOP), stall_timeout {args.stall}, hot standby:")
        print(f"  switched: {switched}, {switch_s:.2f} s after the SIGSTOP")
        print(f"  silence heard: {gap:.2f} s (the longest run below the tones' threshold after the SIGSTOP)")
        print(f"  the switch: {reason[0].split(': ', 1)[1] if reason else '(none logged)'}")
    finally:
        for thing in things:
            thing.stop()
        for source in sources:
            source.stop()
        for icecast in (studio, backup):
            try:
                icecast.proc.send_signal(signal.SIGCONT)
            except ProcessLookupError:
                pass
            icecast.stop()


def mode_djset(args):
    """Ogg Opus DJs on the air for `minutes`: ffmpeg (-c:a libopus, 660 Hz) over a relayed 440 Hz station, and
    Liquidsoap (%opus, a 990 Hz file looped) on a live-only station, at once, each heard by a decoding listener."""
    work = tempfile.mkdtemp(prefix="seams-djset-")
    os.chmod(work, 0o755)
    seconds = int(args.minutes * 60)
    relay_file = failover.tone_file(work, 440, seconds + 120, "Relay")
    dj_file = failover.tone_file(work, 990, seconds + 60, "Studio DJ")  # no track change within the set
    http, status, main_port, studio_port = (benchlib.free_port() for _ in range(4))
    config = os.path.join(work, "relay.conf")
    with open(config, "w") as f:
        f.write(f"[server]\nhttp = {HOST}:{http}\nstatus = {HOST}:{status}\n\n"
                f"[station main]\nbind = {HOST}\nport = {main_port}\nupstream = {relay_file}\n"
                f"source_password = main-dj-pass-1\n\n"
                f"[station studio]\nbind = {HOST}\nport = {studio_port}\nsource_password = studio-dj-pass-1\n")
    script = os.path.join(work, "dj.liq")
    with open(script, "w") as f:
        f.write(f"""settings.init.allow_root.set(true)
settings.log.stdout.set(false)
settings.log.file.set(false)
s = mksafe(single("{dj_file}"))
output.icecast(%opus(samplerate=48000), host="{HOST}", port={http}, password="studio-dj-pass-1", mount="studio", s)
""")
    things, djs = [], []
    try:
        relay = Relay(work, config=config, ports=(main_port, http, status))
        things.append(relay)
        main_listener = Listener48(work, main_port, "main")
        studio_listener = Listener48(work, studio_port, "studio")
        things += [main_listener, studio_listener]
        benchlib.wait_until(lambda: main_listener.seconds() > 3, 15)
        djs.append(subprocess.Popen(
            ["ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i",
             f"sine=frequency=660:sample_rate=48000:duration={seconds}", "-ac", "2", "-c:a", "libopus", "-b:a", "96k",
             "-content_type", "audio/ogg", "-f", "ogg", f"icecast://source:main-dj-pass-1@{HOST}:{http}/main.opus"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        djs.append(subprocess.Popen(["liquidsoap", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL))
        started = time.monotonic()
        main_from, studio_from = main_listener.seconds(), studio_listener.seconds()
        deadline = started + seconds
        while time.monotonic() < deadline and all(dj.poll() is None for dj in djs):
            time.sleep(1)
        alive = [dj.poll() is None for dj in djs]
        for dj_proc in djs:
            benchlib.stop_process(dj_proc)
        time.sleep(3)
        for listener in (main_listener, studio_listener):
            listener.stop()
        relay.stop()
        things = []
        log_text = open(relay.log_path).read()
        print(f"Ogg Opus DJs for {seconds} s (after {time.monotonic() - started:.0f} s: ffmpeg running {alive[0]}, "
              f"Liquidsoap running {alive[1]} until the end)")
        for name, listener, tone, since in (("main (ffmpeg libopus, 660 Hz)", main_listener, 660.0, main_from),
                                             ("studio (Liquidsoap %opus, 990 Hz)", studio_listener, 990.0, studio_from)):
            samples = listener.samples()
            tl = segments(samples[int(since * RATE):], [440.0, tone], window=0.05)
            pieces = [(s, e) for t, s, e in tl if t == tone]
            heard = [e - s for s, e in pieces]
            first, last = (pieces[0][0], pieces[-1][1]) if pieces else (0, 0)
            gaps = [e - s for t, s, e in tl if t != tone and s >= first and e <= last]
            print(f"  {name}: the DJ heard {sum(heard):.1f} s in {len(heard)} pieces (longest {max(heard, default=0):.1f} s);"
                  f" longest stretch of anything else between its first and last {max(gaps, default=0):.2f} s")
        # A source the relay ended itself (no audio, a stall), not the end of a DJ this bench stopped.
        ends = [line for line in log_text.splitlines()
                if "live source" in line and (" audio in " in line or "stalled" in line or "no data" in line)]
        print(f"  live sources the relay ended: {len(ends)}" + (f" (first: {ends[0].split(': ', 1)[1]})" if ends else ""))
    finally:
        for dj_proc in djs:
            benchlib.stop_process(dj_proc)
        for thing in things:
            thing.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    hang = sub.add_parser("hang")
    hang.add_argument("--stall", type=int, default=5)
    sub.add_parser("dj")
    djset = sub.add_parser("djset")
    djset.add_argument("--minutes", type=float, default=10)
    args = parser.parse_args()
    print(f"relay: {failover.relay_binary()}")
    {"hang": mode_hang, "dj": mode_dj, "djset": mode_djset}[args.mode](args)


if __name__ == "__main__":
    main()
