"""The Ogg side of the attacks: the pages and links of a capture, and the Ogg Opus fixtures (ffmpeg's libopus) that
the edge rows' upstreams send."""
import os
import subprocess

from benchlib import ogg_packets, ogg_pages


def parse_pages(data):
    """[(header type, granule, serial, seq, [(packet bytes, complete)], raw page)] of well-formed pages."""
    out = []
    for page in ogg_pages(data):
        if page is None:
            continue
        packets, rest = ogg_packets(data, page)
        segs = [(p, True) for p in packets] + ([(rest, False)] if rest else [])
        out.append((page.htype, page.granule, page.serial, page.seq, segs, data[page.offset:page.end]))
    return out


def ogg_links(data):
    """[(serial, channels, mapping family, streams)] of the links (BOS pages with OpusHead) of a capture."""
    links = []
    for htype, _g, serial, _s, segs, _raw in parse_pages(data):
        if htype & 2 and segs and segs[0][0][:8] == b"OpusHead":
            head = segs[0][0]
            family = head[18] if len(head) > 18 else 0
            streams = head[19] if family and len(head) > 19 else 1
            links.append((serial, head[9], family, streams))
    return links


class Fixture:
    """An Ogg Opus file made by ffmpeg's libopus from a 440 Hz sine: its pages, header packets and audio packets."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.raw = f.read()
        self.pages = parse_pages(self.raw)
        packets = []
        partial = b""
        for _h, _g, _serial, _s, segs, _raw in self.pages:
            for p, complete in segs:
                partial += p
                if complete:
                    packets.append(partial)
                    partial = b""
        self.head, self.tags, self.audio = packets[0], packets[1], packets[2:]
        self.serial = self.pages[0][2]
        self.channels = self.head[9]


def make_fixtures(work):
    specs = {
        "stereo": ["-ac", "2", "-c:a", "libopus", "-b:a", "64k"],
        "mono": ["-ac", "1", "-c:a", "libopus", "-b:a", "32k"],
        "six": ["-ac", "6", "-c:a", "libopus", "-b:a", "128k", "-mapping_family", "1"],
    }
    out = {}
    for name, args in specs.items():
        path = os.path.join(work, f"fixture-{name}.opus")
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:d=30"] + args +
                       ["-page_duration", "100000", "-f", "ogg", path], check=True, timeout=120)
        out[name] = Fixture(path)
    return out
