#!/usr/bin/env python3
"""Reloads under a connect loop: what a listener sees while an operator reloads, and what the process keeps.

One radio-relay process (the binary given) serves two stations from a config file on 127.0.0.1:
  * `tuned`: each reload flips its bitrate between 96k and 64k (applied in place: listeners kept);
  * `remixed`: each reload flips its channels between 2 and 1 (a new Ogg stream: the station restarts on the
    listening socket it hands over).
While ROUNDS reloads (SIGHUP, one every INTERVAL s) run, a client connects to each station every 50 ms and reads
until it has "OggS" (ok), or 3 s pass without it (hung), or the connection is refused or reset (refused). One
listener on `tuned` stays connected throughout (it must not be dropped). The process's open descriptors and RSS are
read before the first reload and after the last (each after 2 s of quiet). With --socket-activate, the process is
started under `systemd-socket-activate` holding `remixed`'s port, and the last reload moves `remixed` to a new port,
which must be served.

Loopback only; the process is started here and stopped by its PID. Prints a table and exits 1 when any connection
was refused or hung, a reload failed, the kept listener was dropped, or descriptors or RSS grew by more than 5 %.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import free_port, proc_status_kb, stop_process


def config(ports, status, demo, tuned_bitrate, remixed_channels):
    return (f"[server]\nstatus = 127.0.0.1:{status}\n\n"
            f"[station tuned]\nupstream = {demo}\nbind = 127.0.0.1\nport = {ports[0]}\nbitrate = {tuned_bitrate}\n\n"
            f"[station remixed]\nupstream = {demo}\nbind = 127.0.0.1\nport = {ports[1]}\n"
            f"channels = {remixed_channels}\n")


def probe(port, results, stop):
    """Connects every 50 ms until `stop`; counts ok / hung / refused."""
    while not stop.is_set():
        started = time.monotonic()
        outcome = "hung"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
                data = b""
                while time.monotonic() - started < 3 and b"OggS" not in data:
                    chunk = s.recv(4096)
                    if not chunk:
                        outcome = "refused"
                        break
                    data += chunk
                if b"OggS" in data:
                    outcome = "ok"
        except (ConnectionRefusedError, ConnectionResetError):
            outcome = "refused"
        except OSError:
            outcome = "hung"
        results[outcome] = results.get(outcome, 0) + 1
        time.sleep(max(0, 0.05 - (time.monotonic() - started)))


def kept_listener(port, state, stop):
    """One listener that must stay connected across every reload."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.settimeout(5)
        while not stop.is_set():
            try:
                chunk = s.recv(65536)
            except OSError as error:
                state["dropped"] = f"{error}"
                return
            if not chunk:
                state["dropped"] = "closed by the server"
                return
            state["bytes"] = state.get("bytes", 0) + len(chunk)


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def descriptor_kinds(pid):
    """What each open descriptor is (socket:[inode], anon_inode:[eventpoll], a path), counted by kind."""
    kinds = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        kind = "socket" if target.startswith("socket:") else target
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--demo", required=True, help="an MP3 file for the stations' upstream")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--socket-activate", action="store_true")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="reload-bench-")
    path = os.path.join(work, "radio-relay.conf")
    log_path = os.path.join(work, "server.log")
    ports = [free_port(), free_port()]
    status = free_port()
    with open(path, "w") as f:
        f.write(config(ports, status, args.demo, "96k", 2))
    command = [args.binary, "--config", path]
    if args.socket_activate:
        command = ["systemd-socket-activate", "-l", f"127.0.0.1:{ports[1]}"] + command
    log = open(log_path, "w")
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    failures = []
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                # `remixed` first: under systemd-socket-activate its port is what starts the server.
                socket.create_connection(("127.0.0.1", ports[1]), timeout=1).close()
                socket.create_connection(("127.0.0.1", ports[0]), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(2)
        fds_before, rss_before = descriptors(proc.pid), proc_status_kb(proc.pid)
        kinds_before = descriptor_kinds(proc.pid)
        stop = threading.Event()
        results = [{}, {}]
        kept = {}
        threads = [threading.Thread(target=probe, args=(ports[i], results[i], stop)) for i in range(2)]
        threads.append(threading.Thread(target=kept_listener, args=(ports[0], kept, stop)))
        for t in threads:
            t.start()
        moved = None
        for round_ in range(1, args.rounds + 1):
            last = round_ == args.rounds
            if last and args.socket_activate:
                # The old port goes away with this reload: its probe stops first (a refusal there is right).
                stop.set()
                for t in threads:
                    t.join(10)
                stop.clear()
                moved = free_port()
            remixed_ports = [ports[0], moved or ports[1]]
            with open(path, "w") as f:
                f.write(config(remixed_ports, status, args.demo, "64k" if round_ % 2 else "96k",
                               1 if round_ % 2 else 2))
            proc.send_signal(signal.SIGHUP)
            time.sleep(args.interval)
        if moved:
            moved_results = {}
            t = threading.Thread(target=probe, args=(moved, moved_results, stop))
            t.start()
            time.sleep(1)
            stop.set()
            t.join(10)
            if moved_results.get("ok", 0) == 0:
                failures.append(f"the moved port {moved} was not served: {moved_results}")
            print(f"port moved under socket activation: {moved_results}")
        else:
            stop.set()
            for t in threads:
                t.join(10)
        time.sleep(2)
        fds_after, rss_after = descriptors(proc.pid), proc_status_kb(proc.pid)
        kinds_after = descriptor_kinds(proc.pid)
        with open(log_path, errors="replace") as f:
            text = f.read()
        reloads = text.count("reload: ")
        restarted = text.count("reload: restarted remixed on its listening sockets")
        failed = text.count("failed ") + text.count("cannot")
        print(f"rounds {args.rounds}, every {args.interval} s; restarts of remixed logged: {restarted}; "
              f"failed/cannot lines: {failed}")
        for name, r in zip(["tuned (bitrate, in place)", "remixed (channels, restart)"], results):
            print(f"  {name:<30} ok {r.get('ok', 0):>5}  refused {r.get('refused', 0):>3}  hung {r.get('hung', 0):>3}")
            if r.get("refused", 0) or r.get("hung", 0):
                failures.append(f"{name}: {r}")
        print(f"  kept listener on tuned: {kept.get('bytes', 0)} bytes, "
              f"{'dropped: ' + kept['dropped'] if 'dropped' in kept else 'never dropped'}")
        if "dropped" in kept:
            failures.append("the listener on the retuned station was dropped")
        print(f"  descriptors {fds_before} -> {fds_after}; RSS {rss_before} -> {rss_after} KiB "
              f"({(rss_after - rss_before) / max(1, rss_before) * 100:+.1f} %)")
        changed = {k: (kinds_before.get(k, 0), kinds_after.get(k, 0))
                   for k in set(kinds_before) | set(kinds_after) if kinds_before.get(k, 0) != kinds_after.get(k, 0)}
        if changed:
            print(f"  descriptors that changed (before, after): {changed}")
        if fds_after > fds_before * 1.05 or rss_after > rss_before * 1.05:
            failures.append("descriptors or RSS grew by more than 5 %")
        if failed or restarted < (args.rounds - (1 if moved else 0)):
            failures.append(f"{restarted} restarts logged of {args.rounds}, {failed} failure lines")
    finally:
        stop_process(proc)
        log.close()
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"log: {log_path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
