#!/usr/bin/env python3
"""The table of bench/slowdisk.sh: live listeners and the server with no archive, with the archive on a slow (then
hung) file system, and with the archive on a normal directory, from the files of its rounds.

    python3 bench/slowdisk.py summary DIR KIND...
    python3 bench/slowdisk.py links FILE
    python3 bench/slowdisk.py bursts FILE.wav

DIR holds, per round TAG = KIND-R: TAG.json (bench/timeshift.py listen: the N HTTP listeners and the server's CPU),
TAG.lat.json (bench/latency.py run: the raw-TCP listener's end-to-end latency), TAG.status.json (the server's
status.json at the end of the listening, with fetched_at), TAG.hang.json (the slow rounds: status.json in the
middle of the hang, with answered_ms) and TAG.fuse.json (the FUSE process's CPU seconds in the round). Printed:
medians over the rounds of each kind, the ratio of each kind to the first one, and each round's values.

links: the Ogg links of a stream saved to FILE (a time-shifted read): per link its serial, pages, audio seconds
(granules), and whether it ended with an end-of-stream page.

bursts: the marker bursts of latency.py's test signal (a 60 ms tone every 0.5-0.6 s over quiet noise) in a decoded
WAV (16-bit): how many, the longest time between two, and the 100 ms windows of digital silence; a read that
crossed a gap in the archive with silence put in it would show a long spacing or silent windows.

Python 3.9+ standard library only (and bench/benchlib.py).
"""

import argparse
import array
import datetime
import glob
import json
import os
import statistics
import sys
import wave

from benchlib import ogg_pages


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def moment(text):
    if not text:
        return None
    return datetime.datetime.strptime(text.rstrip("Z")[:19], "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def archive(status):
    try:
        return status["stations"][0].get("archive")
    except (TypeError, KeyError, IndexError):
        return None


def lag(status):
    """Seconds between the status's fetch and the newest archived audio's end."""
    a = archive(status)
    if not a or not a.get("newest_end") or "fetched_at" not in status:
        return None
    return status["fetched_at"] - moment(a["newest_end"])


def rounds(directory, kind):
    out = []
    for path in sorted(glob.glob(os.path.join(directory, f"{kind}-*.json"))):
        tag = os.path.basename(path)[:-5]
        if "." in tag:
            continue
        out.append({
            "listen": load(path), "lat": load(os.path.join(directory, f"{tag}.lat.json")) or {},
            "status": load(os.path.join(directory, f"{tag}.status.json")) or {},
            "hang": load(os.path.join(directory, f"{tag}.hang.json")),
            "fuse": load(os.path.join(directory, f"{tag}.fuse.json")) or {},
        })
    return out


def arch(key):
    return lambda r: (archive(r["status"]) or {}).get(key)


ROWS = [
    ("listeners served (of N)", lambda r: r["listen"]["served"], "{:.0f}"),
    ("early closes", lambda r: r["listen"]["early_closes"], "{:.0f}"),
    ("Ogg errors", lambda r: sum(r["listen"]["ogg_errors"].values()), "{:.0f}"),
    ("first byte p50 (ms)", lambda r: r["listen"]["first_byte_ms"]["p50"], "{:.1f}"),
    ("first byte p99 (ms)", lambda r: r["listen"]["first_byte_ms"]["p99"], "{:.1f}"),
    ("first audio p50 (ms)", lambda r: r["listen"]["first_audio_ms"]["p50"], "{:.1f}"),
    ("first audio p99 (ms)", lambda r: r["listen"]["first_audio_ms"]["p99"], "{:.1f}"),
    ("stalls > 500 ms", lambda r: r["listen"]["stalls"], "{:.0f}"),
    ("listeners with a stall", lambda r: r["listen"]["listeners_stalled"], "{:.0f}"),
    ("longest gap p50 (ms)", lambda r: r["listen"]["longest_gap_ms"]["p50"], "{:.0f}"),
    ("longest gap max (ms)", lambda r: r["listen"]["longest_gap_ms"]["max"], "{:.0f}"),
    ("audio s per wall s, p50", lambda r: r["listen"]["steady_audio_s_per_s"]["p50"], "{:.4f}"),
    ("audio s per wall s, min", lambda r: r["listen"]["steady_audio_s_per_s"]["min"], "{:.4f}"),
    ("latency, markers p50 (ms)", lambda r: r["lat"].get("p50"), "{:.0f}"),
    ("latency, markers p99 (ms)", lambda r: r["lat"].get("p99"), "{:.0f}"),
    ("latency, markers max (ms)", lambda r: r["lat"].get("max"), "{:.0f}"),
    ("latency, every sample p99 (ms)", lambda r: r["lat"].get("all_p99"), "{:.0f}"),
    ("latency listener's longest write gap (ms)", lambda r: r["lat"].get("write_gap_max"), "{:.0f}"),
    ("server CPU, steady (cores)", lambda r: r["listen"]["steady"]["cpu_cores"], "{:.4f}"),
    ("  arch-* thread (cores)", lambda r: sum(v for k, v in r["listen"]["steady"]["threads_cores"].items()
                                              if k.startswith("arch")), "{:.4f}"),
    ("RSS at the end (MiB)", lambda r: r["listen"]["steady"]["rss_kb_end"] / 1024, "{:.1f}"),
    ("FUSE process CPU in the round (s)", lambda r: r["fuse"].get("fuse_cpu_s"), "{:.1f}"),
    ("archive: bytes written", arch("bytes_written"), "{:.0f}"),
    ("archive: pages dropped", arch("pages_dropped"), "{:.0f}"),
    ("archive: write errors", arch("write_errors"), "{:.0f}"),
    ("archive: behind live at the end (s)", lambda r: lag(r["status"]), "{:.1f}"),
    ("status.json mid-hang: answered in (ms)", lambda r: (r["hang"] or {}).get("answered_ms"), "{:.0f}"),
    ("status.json mid-hang: archive behind (s)", lambda r: lag(r["hang"]) if r["hang"] else None, "{:.1f}"),
    ("status.json mid-hang: pages dropped", lambda r: (archive(r["hang"]) or {}).get("pages_dropped")
     if r["hang"] else None, "{:.0f}"),
]


def value(get, r):
    try:
        v = get(r)
    except (KeyError, TypeError):
        return None
    return v if isinstance(v, (int, float)) else None


def summary(args):
    by = {kind: rounds(args.dir, kind) for kind in args.kinds}
    base = args.kinds[0]
    head = f"{'medians over rounds':<42}" + "".join(f"{k:>10}" for k in args.kinds)
    head += "".join(f"{k + '/' + base:>13}" for k in args.kinds[1:]) + "   rounds: " + " | ".join(args.kinds)
    print(head)
    for label, get, fmt in ROWS:
        values = {k: [value(get, r) for r in rs] for k, rs in by.items()}
        med = {k: statistics.median([x for x in v if x is not None]) if any(x is not None for x in v) else None
               for k, v in values.items()}
        show = lambda x: "-" if x is None else fmt.format(x)
        line = f"{label:<42}" + "".join(f"{show(med[k]):>10}" for k in args.kinds)
        for k in args.kinds[1:]:
            ratio = f"{med[k] / med[base]:.2f}" if med[k] is not None and med[base] else "-"
            line += f"{ratio:>13}"
        line += "   " + " | ".join(" ".join(show(x) for x in values[k]) for k in args.kinds)
        print(line)
    states = {k: [(archive(r["status"]) or {}).get("state", "-") for r in rs] for k, rs in by.items()}
    middle = {k: [(archive(r["hang"]) or {}).get("state", "-") for r in by.get(k, []) if r["hang"]]
              for k in ("slow", "full", "readonly")}
    print(f"archive state at the end: " + "; ".join(f"{k} {' '.join(v)}" for k, v in states.items())
          + "".join(f"; in the middle of the fault ({k}): {' '.join(v)}" for k, v in middle.items() if v))
    print(f"({', '.join(f'{len(v)} {k}' for k, v in by.items())} rounds; load average at each round's end: "
          f"{', '.join(r['listen']['loadavg_end'][0] for rs in by.values() for r in rs)})")
    return 0


def links(args):
    with open(args.file, "rb") as f:
        data = f.read()
    out, skipped = [], 0
    for page in ogg_pages(data):
        if page is None:
            skipped += 1
            continue
        if page.htype & 2 or not out:
            out.append({"serial": page.serial, "pages": 0, "first": None, "last": None, "eos": False})
        link = out[-1]
        link["pages"] += 1
        if page.granule > 0:
            link["first"] = page.granule if link["first"] is None else link["first"]
            link["last"] = page.granule
        link["eos"] = link["eos"] or bool(page.htype & 4)
    parts = [f"link {i + 1}: serial {x['serial']:08x}, {x['pages']} pages, "
             f"{((x['last'] or 0) - (x['first'] or 0)) / 48000:.1f} s of audio"
             f"{', ended by an EOS page' if x['eos'] else ''}" for i, x in enumerate(out)]
    print(f"{len(data)} bytes, {len(out)} Ogg link(s){f', {skipped} skips' if skipped else ''}: " + "; ".join(parts))
    return 0


def bursts(args):
    with wave.open(args.file) as w:
        channels, rate = w.getnchannels(), w.getframerate()
        samples = array.array("h", w.readframes(w.getnframes()))[::channels]
    step = rate // 10
    peaks = [max(abs(x) for x in samples[i:i + step]) / 32768 for i in range(0, len(samples) - step + 1, step)]
    starts = [i / 10 for i, p in enumerate(peaks) if p > 0.1 and (i == 0 or peaks[i - 1] <= 0.1)]
    spacing = max((b - a for a, b in zip(starts, starts[1:])), default=0)
    silent = sum(1 for p in peaks if p < 1e-4)
    print(f"{len(samples) / rate:.2f} s decoded, {len(starts)} marker bursts, at most {spacing:.1f} s apart, "
          f"{silent} silent 100 ms windows")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("summary")
    s.add_argument("dir")
    s.add_argument("kinds", nargs="+")
    l = sub.add_parser("links")
    l.add_argument("file")
    b = sub.add_parser("bursts")
    b.add_argument("file")
    args = parser.parse_args()
    return {"summary": summary, "links": links, "bursts": bursts}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
