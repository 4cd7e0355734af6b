#!/usr/bin/env python3
"""Bounded attacks on radio-relay, one server per attack: the work of bench/attack.sh.

Each attack is a function with its own setup: it writes a config, starts one `radio-relay --config FILE` (stderr to a
log), runs what the attacker does for at most 20 s, and fills one row of the table:

  attack | what was sent | what the server did | server CPU | RSS growth | honest listener | PASS/FAIL

  * server CPU: utime + stime of the server's /proc/PID/stat over the attack window, as % of one core;
  * RSS growth: VmRSS sampled every 0.1 s during the window, the largest minus the value before it, in MB (10^6);
  * honest listener: one HTTP listener from 127.0.0.1 on the attacked station's mount (GET /NAME.opus), connected
    before the attack (after the flood is in place for http-pending) and reading until its end into a file; "valid"
    when it got 200, was never closed by the server, never waited more than 2 s for data, got audio pages, and
    `oggz-validate` finds nothing but the one missing EOS of a cut capture (multichannel: also decoded with ffmpeg
    and opusdec, which must report no error);
  * PASS needs CPU <= 25 % of one core, RSS growth <= 10 MB, a valid honest stream, and the attack's own expectation.

Attackers "from another host" bind their sockets to 127.0.0.2 before connecting; upstreams the attacker controls
listen on 127.0.0.1. Every process is started here and stopped by its PID (SIGTERM, 5 s, SIGKILL); every PID is
also written to WORK/pids for bench/attack.sh's own cleanup. The attacks (bench/README.md has the bounds and how
to read the table):

  forged-proxy       proxy_protocol = yes, max_per_ip = 1, proxy_from = 127.0.0.1: 20 connections from 127.0.0.2
                     each opening with PROXY TCP4 198.51.100.N; all must be closed within 1 s without Ogg data;
                     control from 127.0.0.1 (trusted) with the same header must get OggS
  status-idle        1000 silent connections to the status port from 127.0.0.2 (reopened when closed), /health from
                     127.0.0.1 every 0.1 s for 10 s: every answer 200 within 100 ms
  status-slowloris   200 connections from 127.0.0.2 sending one byte of a request head a second; same polling
  http-pending       2100 connections to the HTTP address from 127.0.0.2, each an incomplete head (reopened when
                     closed); the honest listener connects after the flood is in place: 200 and a valid stream
  http-head-lines    50 connections, each a head of up to ~8 KB sent as `A:b\\r\\n` lines, one per send, never the
                     blank line (quadratic re-parsing shows as CPU)
  oggs-flood         an edge (tcp:// upstream) gets 2 s of valid Ogg Opus, then 15 s of 1 MB/s of false OggS
                     capture patterns (b"OggS\\0" + 59 random bytes: version 0, random lengths)
  link-flood         an edge upstream sends a new chained link (new serial, OpusHead, OpusTags, one 20 ms packet,
                     EOS) 50 times a second for 10 s, alternating stereo and mono heads; log lines <= 50
  title-flood        an MP3 station (ICY 200 OK, icy-metaint 256, chain_titles = yes) with a new StreamTitle in
                     every metadata block for 10 s, at real time; log lines <= 50
  big-packets        an edge upstream sends pages of one 60 000-byte Opus packet whose TOC claims 2.5 ms (CELT,
                     code 0), 400 a second (real time by the TOC) for 8 s: RSS growth shows an unbounded page ring
  dns-blackhole      a station with upstream tcp://blackhole.test:9, the server under `unshare -m` with a bind-mounted
                     resolv.conf (nameserver 127.0.0.2, timeout:30 attempts:5) and a UDP socket on 127.0.0.2:53 that
                     never answers; /health every 0.5 s for 12 s: all 200
  multichannel       an edge upstream serving 6-channel Ogg Opus (mapping family 1) for 5 s, then closing and
                     refusing; refused with a clear error or relayed, and what the listener got decodes
  status-idle-same   status-idle with the silent connections from 127.0.0.1, the health check's own address (a
                     status endpoint on 127.0.0.1 sees one address for every client)
  http-idle-same     1000 silent connections to the HTTP address from 127.0.0.1; 20 GET /main.opus from 127.0.0.1,
                     0.3 s each: every one 200 with Ogg
  events-idle        the server under prlimit --nofile=600; 700 GET /main/events from 127.0.0.2 that never read; a raw
                     listener and the honest HTTP listener from 127.0.0.1 are served, at most 64 subscriptions held
                     after 60 s
  access-fifo        access_log on a FIFO: a reader that never reads and 1500 short visits, then SIGTERM (exit <= 3 s);
                     the reader gone, SIGHUP, /health (200), SIGTERM (exit <= 3 s); no reader at start-up (the
                     station serves, the error is logged)
  framing            a GET of the HLS playlist with a body (Content-Length, chunked) that is a request: one answer; two
                     Content-Length: 400; two Host on the status endpoint: 400; an absolute-form target: 200

Python 3.9+, standard library only (bench/benchlib.py: Ogg pages, their CRC through libogg's ctypes binding when it
loads, /proc, processes); ffmpeg, oggz-validate, opusdec and unshare as external tools.

This file lists the attacks in order and runs them; the rows and the harness they share are in bench/attack/
(its __init__.py says which module holds what: harness.py, ogg.py, listener.py, flood.py, upstream.py, and the rows
by theme in rows_status.py, rows_http.py, rows_edge.py and rows_events_log.py).
"""
import argparse
import os
import resource
import signal
import sys
import time
import traceback

from benchlib import write_json

from attack.harness import ROW_LIMIT_S, ROW_LIMITS_S, Ctx, Row, RowTimeout, Scene, listening_ports, log, print_tables
from attack.rows_edge import (attack_big_packets, attack_link_flood, attack_multichannel, attack_oggs_flood,
                              attack_title_flood)
from attack.rows_events_log import attack_access_fifo, attack_events_idle
from attack.rows_http import attack_framing, attack_http_head_lines, attack_http_idle_same, attack_http_pending
from attack.rows_status import (attack_dns_blackhole, attack_forged_proxy, attack_status_idle,
                                attack_status_idle_same, attack_status_slowloris)


ATTACKS = [
    ("forged-proxy", attack_forged_proxy),
    ("status-idle", attack_status_idle),
    ("status-slowloris", attack_status_slowloris),
    ("http-pending", attack_http_pending),
    ("http-head-lines", attack_http_head_lines),
    ("oggs-flood", attack_oggs_flood),
    ("link-flood", attack_link_flood),
    ("title-flood", attack_title_flood),
    ("big-packets", attack_big_packets),
    ("dns-blackhole", attack_dns_blackhole),
    ("multichannel", attack_multichannel),
    ("status-idle-same", attack_status_idle_same),
    ("http-idle-same", attack_http_idle_same),
    ("events-idle", attack_events_idle),
    ("access-fifo", attack_access_fifo),
    ("framing", attack_framing),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("attacks", nargs="*", help="attacks to run (default: all)")
    ap.add_argument("--radio-relay", required=False)
    ap.add_argument("--repo", required=False)
    ap.add_argument("--work", required=False)
    ap.add_argument("--markdown", help="also write the markdown table here")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--list", action="store_true", help="list the attacks and exit")
    args = ap.parse_args()
    names = [n for n, _ in ATTACKS]
    if args.list:
        print("\n".join(names))
        return 0
    unknown = [a for a in args.attacks if a not in names]
    if unknown:
        print(f"attack: unknown attack {', '.join(unknown)}; known: {', '.join(names)}", file=sys.stderr)
        return 64
    if not (args.radio_relay and args.repo and args.work):
        print("attack: --radio-relay, --repo and --work are needed (bench/attack.sh gives them)", file=sys.stderr)
        return 64
    chosen = [(n, f) for n, f in ATTACKS if not args.attacks or n in args.attacks]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 20000 if hard == resource.RLIM_INFINITY else min(20000, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 5000:
        log(f"warning: open files limited to {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}: floods will be smaller")

    def on_term(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_term)

    def on_alarm(_s, _f):
        raise RowTimeout()
    signal.signal(signal.SIGALRM, on_alarm)

    ctx = Ctx(os.path.abspath(args.radio_relay), os.path.abspath(args.repo), os.path.abspath(args.work))
    before = listening_ports()
    rows = []
    interrupted = False
    for name, fn in chosen:
        row = Row(name)
        scene = Scene(row)
        log(f"{name}: start")
        t0 = time.monotonic()
        limit = ROW_LIMITS_S.get(name, ROW_LIMIT_S)
        signal.alarm(limit)
        try:
            fn(ctx, row, scene)
        except RowTimeout:
            row.failures.append(f"cut after {limit} s")
        except KeyboardInterrupt:
            row.failures.append("interrupted")
            interrupted = True
        except Exception as e:
            row.failures.append(f"script error: {e}"[:200])
            traceback.print_exc(file=sys.stderr)
        finally:
            signal.alarm(0)
            scene.close()
        row.seconds = time.monotonic() - t0
        rows.append(row)
        verdict, why = row.verdict()
        log(f"{name}: {verdict} in {row.seconds:.1f} s; cpu {row.cpu if row.cpu is None else round(row.cpu, 1)} %, "
            f"rss +{row.rss if row.rss is None else round(row.rss, 1)} MB; honest: {row.honest}; {why}")
        log(f"{name}: sent: {row.sent}")
        log(f"{name}: did: {row.did}")
        if interrupted:
            break
    time.sleep(0.2)
    left = {p for p in listening_ports() - before if p[2] in ctx.ports or (p[0] == "udp" and p[2] == 53)}
    if left:
        log(f"still listening after the run: {sorted(left)}")
    else:
        log("nothing of the run is left listening")
    print_tables(rows, args.markdown)
    if args.json:
        write_json(args.json, [dict(r.__dict__, verdict=r.verdict()) for r in rows], indent=1)
    if interrupted:
        return 130
    failed = [r.name for r in rows if r.verdict()[0] != "PASS"]
    print(f"\nresult: {len(rows) - len(failed)} of {len(rows)} passed" + (f"; failed: {', '.join(failed)}" if failed
                                                                          else ""))
    return 1 if failed or left else 0


if __name__ == "__main__":
    sys.exit(main())
