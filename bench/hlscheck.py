#!/usr/bin/env python3
"""Checks a running radio-relay's live HLS streams from outside, as a strict player would, for minutes.

For each stream (`/NAME/live.m3u8` on the HTTP address) it reloads the media playlist every second on one kept
connection, fetches every segment it lists once and every init segment once, and parses them (ISO BMFF: `moof` with
`mfhd`, `tfdt`, `trun`; `mdat`; the init segment's `dOps`). It checks:

  * the playlist: EXT-X-VERSION, TARGETDURATION, INDEPENDENT-SEGMENTS, a MAP before the first segment, a
    PROGRAM-DATE-TIME on each segment; the window (as many segments as `--window` once full); the media sequence
    never going back and equal to the first segment's number; sequence numbers contiguous; DISCONTINUITY-SEQUENCE
    equal to the discontinuities that left the window;
  * each segment: its duration (the sum of its `trun` sample durations) at most the target and equal to its EXTINF
    (to 10 µs); `mfhd` sequence = its media sequence number; `mdat` holds exactly the `trun` sizes;
  * across segments: each `tfdt` equal to the previous segment's plus its duration (decode times run on, across
    discontinuities too); program dates following the durations (a jump over 50 ms is counted as a re-anchor);
  * discontinuities: each has a new EXT-X-MAP; its init segment's `dOps` (channels, pre-skip) is read, and the
    cause is named: "channels" when the channel count changed, "title link" when a title (EXT-X-DATERANGE) starts
    within 1.5 s of it, "upstream stream" otherwise (an edge's upstream that came back as a new stream);
  * a segment that left the window and the retention is answered 404, a listed one answered to HEAD with its length.

Prints one table per stream and a verdict; `--json` writes everything. Exit status 1 when a check failed.
Usage: hlscheck.py --base http://127.0.0.1:PORT --stream radio --stream edge --duration 300 [--window 6]
"""
import argparse
import http.client
import struct
import sys
import time
import urllib.parse
from datetime import datetime

from benchlib import write_json


def boxes(data, start=0, end=None):
    """(type, payload start, box end) of each box in data[start:end]."""
    end = len(data) if end is None else end
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[at + 8:at + 16])[0]
            header = 16
        if size < header or at + size > end:
            raise ValueError(f"box {kind!r} at {at}: size {size} past the end {end}")
        yield kind.decode("latin-1"), at + header, at + size
        at += size
    if at != end:
        raise ValueError(f"{end - at} stray bytes after the boxes")


def parse_segment(data):
    """(mfhd sequence, tfdt, [durations], [sizes]) of a media segment; raises on a malformed one."""
    top = list(boxes(data))
    kinds = [k for k, _, _ in top]
    if kinds != ["moof", "mdat"]:
        raise ValueError(f"top-level boxes {kinds}, not moof + mdat")
    _, moof_start, moof_end = top[0]
    seq = tfdt = None
    durations, sizes = [], []
    data_offset = None
    for kind, s, e in boxes(data, moof_start, moof_end):
        if kind == "mfhd":
            seq = struct.unpack(">I", data[s + 4:s + 8])[0]
        elif kind == "traf":
            for k2, s2, e2 in boxes(data, s, e):
                if k2 == "tfdt":
                    version = data[s2]
                    tfdt = struct.unpack(">Q", data[s2 + 4:s2 + 12])[0] if version == 1 else \
                        struct.unpack(">I", data[s2 + 4:s2 + 8])[0]
                elif k2 == "trun":
                    flags = struct.unpack(">I", data[s2:s2 + 4])[0] & 0xFFFFFF
                    count = struct.unpack(">I", data[s2 + 4:s2 + 8])[0]
                    at = s2 + 8
                    if flags & 0x1:
                        data_offset = struct.unpack(">i", data[at:at + 4])[0]
                        at += 4
                    if flags & 0x4:
                        at += 4
                    for _ in range(count):
                        if flags & 0x100:
                            durations.append(struct.unpack(">I", data[at:at + 4])[0])
                            at += 4
                        if flags & 0x200:
                            sizes.append(struct.unpack(">I", data[at:at + 4])[0])
                            at += 4
                        if flags & 0x400:
                            at += 4
                        if flags & 0x800:
                            at += 4
    _, mdat_start, mdat_end = top[1]
    if seq is None or tfdt is None or not durations:
        raise ValueError("no mfhd, tfdt or trun durations")
    if data_offset != mdat_start:
        raise ValueError(f"trun data offset {data_offset}, mdat payload at {mdat_start}")
    if sum(sizes) != mdat_end - mdat_start:
        raise ValueError(f"trun sizes {sum(sizes)} bytes, mdat holds {mdat_end - mdat_start}")
    return seq, tfdt, durations, sizes


def parse_init(data):
    """(channels, pre-skip, input rate) from the init segment's dOps; raises when it has none."""
    kinds = [k for k, _, _ in boxes(data)]
    if kinds[:2] != ["ftyp", "moov"]:
        raise ValueError(f"top-level boxes {kinds}")
    at = data.find(b"dOps")
    if at < 4:
        raise ValueError("no dOps box")
    s = at + 4
    version, channels, preskip, rate = struct.unpack(">BBHI", data[s:s + 8])
    if version != 0:
        raise ValueError(f"dOps version {version}")
    return channels, preskip, rate


def parse_playlist(text):
    """The tags and the segments: [{uri, seconds, pdt, discontinuity, map, dateranges}], plus header values."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines or lines[0] != "#EXTM3U":
        raise ValueError("no #EXTM3U")
    info = {"version": None, "target": None, "sequence": None, "dseq": 0, "independent": False, "titles": []}
    segments = []
    pending = {"discontinuity": False, "pdt": None, "seconds": None}
    current_map = None
    for line in lines[1:]:
        if line.startswith("#EXT-X-VERSION:"):
            info["version"] = int(line.split(":", 1)[1])
        elif line.startswith("#EXT-X-TARGETDURATION:"):
            info["target"] = int(line.split(":", 1)[1])
        elif line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
            info["sequence"] = int(line.split(":", 1)[1])
        elif line.startswith("#EXT-X-DISCONTINUITY-SEQUENCE:"):
            info["dseq"] = int(line.split(":", 1)[1])
        elif line == "#EXT-X-INDEPENDENT-SEGMENTS":
            info["independent"] = True
        elif line == "#EXT-X-DISCONTINUITY":
            pending["discontinuity"] = True
        elif line.startswith("#EXT-X-MAP:"):
            current_map = line.split('URI="', 1)[1].split('"', 1)[0]
        elif line.startswith("#EXT-X-PROGRAM-DATE-TIME:"):
            stamp = line.split(":", 1)[1].replace("Z", "+00:00")
            pending["pdt"] = datetime.fromisoformat(stamp).timestamp()
        elif line.startswith("#EXT-X-DATERANGE:"):
            attrs = dict(part.split("=", 1) for part in split_attributes(line.split(":", 1)[1]))
            start = datetime.fromisoformat(attrs["START-DATE"].strip('"').replace("Z", "+00:00")).timestamp()
            info["titles"].append((attrs["ID"].strip('"'), start, attrs.get("X-TITLE", "").strip('"')))
        elif line.startswith("#EXTINF:"):
            pending["seconds"] = float(line.split(":", 1)[1].split(",", 1)[0])
        elif not line.startswith("#"):
            segments.append({"uri": line, "seconds": pending["seconds"], "pdt": pending["pdt"],
                             "discontinuity": pending["discontinuity"], "map": current_map})
            pending = {"discontinuity": False, "pdt": None, "seconds": None}
    return info, segments


def split_attributes(text):
    """An attribute list's NAME=VALUE parts, commas inside quotes kept."""
    parts, current, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current:
        parts.append(current)
    return parts


class Client:
    """One kept HTTP/1.1 connection to the relay, opened again when the server closes it."""

    def __init__(self, base):
        url = urllib.parse.urlsplit(base)
        self.host, self.port = url.hostname, url.port or 80
        self.connection = None
        self.connections = 0
        self.requests = 0

    def request(self, method, path):
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
                self.connections += 1
            try:
                self.connection.request(method, path)
                response = self.connection.getresponse()
                body = response.read()
                self.requests += 1
                if response.getheader("Connection", "").lower() == "close":
                    self.connection.close()
                    self.connection = None
                return response.status, dict(response.getheaders()), body
            except (http.client.HTTPException, OSError):
                self.connection.close()
                self.connection = None
                if attempt == 1:
                    raise


class StreamCheck:
    def __init__(self, name, base, window):
        self.name = name
        self.directory = f"/{name}/"
        self.client = Client(base)
        self.window = window
        self.problems = []
        self.segments = {}       # sequence -> record
        self.maps = {}           # uri -> (channels, preskip, rate)
        self.discontinuities = []  # records
        self.titles = {}
        self.last_sequence = None
        self.polls = 0
        self.full_polls = 0
        self.window_errors = 0
        self.reanchors = 0
        self.gone_checked = 0
        self.head_checked = 0
        self.dseq_base = None
        self.started = time.monotonic()

    def problem(self, text):
        if len(self.problems) < 50:
            self.problems.append(f"+{time.monotonic() - self.started:6.1f} s {self.name}: {text}")

    def poll(self):
        status, headers, body = self.client.request("GET", self.directory + "live.m3u8")
        if status == 503:
            return
        if status != 200:
            return self.problem(f"playlist answered {status}")
        self.polls += 1
        try:
            info, listed = parse_playlist(body.decode())
        except (ValueError, KeyError) as error:
            return self.problem(f"playlist unreadable: {error}")
        if info["version"] != 7 or not info["independent"] or info["target"] is None:
            self.problem(f"playlist header {info}")
        if not listed:
            return self.problem("a playlist without segments")
        sequences = [info["sequence"] + i for i in range(len(listed))]
        if self.last_sequence is not None and info["sequence"] < self.last_sequence:
            self.problem(f"media sequence went back: {self.last_sequence} -> {info['sequence']}")
        self.last_sequence = info["sequence"]
        if len(listed) == self.window:
            self.full_polls += 1
        elif self.full_polls > 0:
            self.window_errors += 1
            self.problem(f"{len(listed)} segments listed, the window is {self.window}")
        if listed[0]["map"] is None:
            self.problem("no EXT-X-MAP before the first segment")
        for title in info["titles"]:
            self.titles[title[0]] = title
        # The discontinuity sequence: what it was at the first load, plus the discontinuities seen since that left
        # the window (those before the first listed segment's own tag).
        first = sequences[0]
        before = sum(1 for d in self.discontinuities if d["sequence"] < first)
        if self.dseq_base is None:
            self.dseq_base = info["dseq"]
        elif info["dseq"] != self.dseq_base + before:
            self.problem(f"DISCONTINUITY-SEQUENCE {info['dseq']}, expected {self.dseq_base} + {before} that left")
        for sequence, segment in zip(sequences, listed):
            if sequence not in self.segments:
                self.fetch(sequence, segment, info)

    def fetch(self, sequence, segment, info):
        expected_name = segment["uri"]
        if not expected_name.endswith(f"-{sequence}.m4s"):
            self.problem(f"segment {sequence} named {expected_name}")
        if segment["pdt"] is None:
            self.problem(f"segment {sequence} without a program date")
        if segment["map"] not in self.maps:
            status, _, body = self.client.request("GET", self.directory + segment["map"])
            if status != 200:
                self.problem(f"init {segment['map']} answered {status}")
                self.maps[segment["map"]] = None
            else:
                try:
                    self.maps[segment["map"]] = parse_init(body)
                except ValueError as error:
                    self.problem(f"init {segment['map']}: {error}")
                    self.maps[segment["map"]] = None
        status, _, body = self.client.request("GET", self.directory + expected_name)
        if status != 200:
            return self.problem(f"listed segment {sequence} answered {status}")
        try:
            mfhd, tfdt, durations, sizes = parse_segment(body)
        except ValueError as error:
            return self.problem(f"segment {sequence}: {error}")
        samples = sum(durations)
        seconds = samples / 48000
        record = {"sequence": sequence, "tfdt": tfdt, "samples": samples, "extinf": segment["seconds"],
                  "pdt": segment["pdt"], "discontinuity": segment["discontinuity"], "map": segment["map"],
                  "bytes": len(body), "packets": len(durations)}
        if mfhd != sequence % (1 << 32):
            self.problem(f"segment {sequence}: mfhd sequence {mfhd}")
        if seconds > info["target"] + 1e-9:
            self.problem(f"segment {sequence}: {seconds} s, over the target {info['target']} s")
        if segment["seconds"] is None or abs(segment["seconds"] - seconds) > 1e-5:
            self.problem(f"segment {sequence}: EXTINF {segment['seconds']} but {seconds} s of samples")
        previous = self.segments.get(sequence - 1)
        if previous is not None:
            if tfdt != previous["tfdt"] + previous["samples"]:
                self.problem(f"segment {sequence}: tfdt {tfdt}, the previous ended at "
                             f"{previous['tfdt'] + previous['samples']}")
            record["tfdt_continuous"] = tfdt == previous["tfdt"] + previous["samples"]
            if previous["pdt"] is not None and segment["pdt"] is not None:
                jump = segment["pdt"] - (previous["pdt"] + previous["samples"] / 48000)
                if abs(jump) > 0.05:
                    self.reanchors += 1
                    record["reanchor"] = jump
            if segment["discontinuity"]:
                if segment["map"] == previous["map"]:
                    self.problem(f"segment {sequence}: a discontinuity without a new EXT-X-MAP")
                self.discontinuity(record, previous)
            elif segment["map"] != previous["map"]:
                self.problem(f"segment {sequence}: a new EXT-X-MAP without a discontinuity")
        else:
            if self.segments:
                self.problem(f"segment {sequence - 1} was never seen (polls too slow?)")
            if segment["discontinuity"]:
                self.discontinuities.append({"sequence": sequence, "pdt": segment["pdt"], "cause": "before the check",
                                             "init": self.maps.get(segment["map"]), "at": 0.0})
        self.segments[sequence] = record

    def discontinuity(self, record, previous):
        now_map = self.maps.get(record["map"])
        was_map = self.maps.get(previous["map"])
        cause = "same head: a new upstream stream"
        nearest = min((t[1] - record["pdt"] for t in self.titles.values()), key=abs, default=None)
        if now_map and was_map and now_map[0] != was_map[0]:
            cause = f"channels {was_map[0]} -> {now_map[0]}"
        elif nearest is not None and abs(nearest) <= 5:
            cause = f"title link (its date range {nearest:+.2f} s from the segment)"
        self.discontinuities.append({"sequence": record["sequence"], "pdt": record["pdt"], "cause": cause,
                                     "init": now_map, "at": round(time.monotonic() - self.started, 1)})

    def spot_checks(self):
        """HEAD of the newest segment; GET of one that left the window and the retention: 404."""
        if not self.segments:
            return
        newest = max(self.segments)
        record = self.segments[newest]
        status, headers, _ = self.client.request("HEAD", self.directory + self.name_of(newest))
        if status != 200 or int(headers.get("Content-Length", -1)) != record["bytes"]:
            self.problem(f"HEAD of segment {newest}: {status}, Content-Length {headers.get('Content-Length')}")
        self.head_checked += 1
        old = newest - 2 * self.window - 2
        if old in self.segments:
            status, headers, _ = self.client.request("GET", self.directory + self.name_of(old))
            if status != 404 or "no-cache" not in headers.get("Cache-Control", ""):
                self.problem(f"segment {old}, out of the window and the retention, answered {status}")
            self.gone_checked += 1

    def name_of(self, sequence):
        token = self.segments[max(self.segments)]["map"].split("-init-")[0]
        return f"{token}-{sequence}.m4s"

    def summary(self):
        records = [self.segments[k] for k in sorted(self.segments)]
        chained = [r for r in records if "tfdt_continuous" in r]
        durations = [r["samples"] / 48000 for r in records]
        return {
            "stream": self.name, "segments": len(records), "polls": self.polls,
            "max_seconds": max(durations) if durations else 0,
            "min_seconds": min(durations) if durations else 0,
            "tfdt_continuous": sum(1 for r in chained if r["tfdt_continuous"]), "tfdt_pairs": len(chained),
            "full_window_polls": self.full_polls, "window_errors": self.window_errors,
            "discontinuities": self.discontinuities, "titles": len(self.titles), "reanchors": self.reanchors,
            "reanchored": [(r["sequence"], round(r["reanchor"], 3), r["discontinuity"]) for r in records
                           if "reanchor" in r],
            "init_segments": {k: v for k, v in self.maps.items()}, "head_checked": self.head_checked,
            "gone_checked": self.gone_checked, "connections": self.client.connections,
            "requests": self.client.requests, "problems": self.problems,
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True)
    parser.add_argument("--stream", action="append", required=True)
    parser.add_argument("--duration", type=float, default=300)
    parser.add_argument("--window", type=int, default=6)
    parser.add_argument("--json")
    args = parser.parse_args()
    checks = [StreamCheck(name, args.base, args.window) for name in args.stream]
    end = time.monotonic() + args.duration
    next_spot = time.monotonic() + 30
    while time.monotonic() < end:
        started = time.monotonic()
        for check in checks:
            try:
                check.poll()
            except (OSError, http.client.HTTPException) as error:
                check.problem(f"request failed: {error}")
        if time.monotonic() >= next_spot:
            next_spot += 30
            for check in checks:
                try:
                    check.spot_checks()
                except (OSError, http.client.HTTPException) as error:
                    check.problem(f"spot check failed: {error}")
        time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
    results = [check.summary() for check in checks]
    failed = False
    for r in results:
        print(f"== /{r['stream']}/live.m3u8: {r['segments']} segments checked over {args.duration:.0f} s "
              f"({r['polls']} playlist loads, {r['requests']} requests on {r['connections']} connection(s))")
        print(f"   segment duration          {r['min_seconds']:.5f} to {r['max_seconds']:.5f} s (target 2)")
        print(f"   decode times continuous   {r['tfdt_continuous']} of {r['tfdt_pairs']} consecutive pairs")
        print(f"   window                    {r['full_window_polls']} full-window loads, {r['window_errors']} wrong")
        print(f"   titles (date ranges)      {r['titles']}; program-date re-anchors {r['reanchors']}"
              + "".join(f"\n     segment {q}: {j:+.3f} s{' (a discontinuity)' if d else ''}" for q, j, d in r["reanchored"]))
        print(f"   HEAD checks {r['head_checked']}, 404 checks of segments gone {r['gone_checked']}")
        print(f"   init segments             " + ", ".join(
            f"{k.split('-init-')[1]}: {v[0]} ch, pre-skip {v[1]}" if v else f"{k}: unreadable"
            for k, v in r["init_segments"].items()))
        for d in r["discontinuities"]:
            print(f"   discontinuity at segment {d['sequence']} (+{d['at']} s): {d['cause']}; init {d['init']}")
        for p in r["problems"]:
            print(f"   PROBLEM {p}")
        failed |= bool(r["problems"]) or r["tfdt_continuous"] != r["tfdt_pairs"] or r["segments"] == 0
    if args.json:
        write_json(args.json, results, indent=1)
    print("hlscheck: " + ("FAILED" if failed else "all checks passed"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
