#!/usr/bin/env python3
"""A network of Linux network namespaces for tests over real links: each node (a studio, roots, edges, listeners)
is a namespace of its own, joined to one bridge in a hub namespace by a veth pair, addressed from 198.18.0.0/15 (the
range set aside for benchmark networks) as 198.18.0.N/24. Each node's link has its own shaping, in both directions:

  rate KBIT     tc tbf on both ends' egress (the node's veth and the hub's end of it); queue 200 ms at that rate
  loss PCT      nftables (netdev family, ingress) drops PCT % of the packets arriving at each end, at random
  blackhole     everything arriving at either end is dropped: no FIN, no RST, no ICMP; the sockets on both sides stay
                "established" and see nothing (what a dead NAT, a pulled cable or a frozen host looks like)

The drops are at the receiving end's ingress, so the sender's stack sees its packets leave (a drop in OUTPUT would
give the sender EPERM at once, which no real path does). There is no delay emulation (this kernel has no sch_netem):
the links have loopback's latency plus the queues the rate limits build.

Cleanup: every name a lab makes starts with `rrl-LAB-`. `up` starts a guard process (its own session) that tears the
lab down as soon as the process that owns it (`--owner`, default the caller's parent) is gone, however it ended
(SIGKILL included): the namespaces are deleted after every process still in them is killed, which removes their
veths, qdiscs and nftables tables with them; nothing is made in the host's namespace. `down` does it at once,
`sweep` for every lab whose owner is gone.

CLI (also what the Swift tests' NetworkLab calls):
  netlab.py up LAB NODE... [--owner PID]  -> prints {"NODE": "198.18.0.N", ...}
  netlab.py link LAB NODE [--rate KBIT|0] [--loss PCT] [--blackhole|--restore]
  netlab.py exec LAB NODE -- CMD...      (runs CMD in NODE's namespace; exec, so the PID is CMD's)
  netlab.py down LAB | sweep | list

As a module: Lab(name, nodes, owner) with .address, .link(...), .blackhole(node), .restore(node), .popen(node, argv),
.argv(node, argv), .down().
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

PREFIX = "rrl-"
STATE_DIR = "/run/radio-relay-netlab"
SUBNET = "198.18.0."
NAME_LIMIT = 8  # a lab's name, so that namespace and interface names stay short


def run(argv, check=True, quiet=False):
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {result.returncode}: {result.stderr.strip()}")
    if not quiet and result.returncode != 0:
        print(f"netlab: {' '.join(argv)}: {result.stderr.strip()}", file=sys.stderr)
    return result


def namespace(lab, node):
    return f"{PREFIX}{lab}-{node}"


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def state_path(lab):
    return os.path.join(STATE_DIR, lab + ".json")


def labs_on_host():
    """Labs named by their namespaces (whatever their state files say)."""
    names = set()
    for line in run(["ip", "netns", "list"]).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(PREFIX) and "-" in name[len(PREFIX):]:
            names.add(name[len(PREFIX):].rsplit("-", 1)[0])
    if os.path.isdir(STATE_DIR):
        names.update(f[:-5] for f in os.listdir(STATE_DIR) if f.endswith(".json"))
    return names


def lab_namespaces(lab):
    out = []
    for line in run(["ip", "netns", "list"]).stdout.splitlines():
        parts = line.split()
        if parts and parts[0].startswith(f"{PREFIX}{lab}-"):
            out.append(parts[0])
    return out


def down(lab):
    """Kills every process in the lab's namespaces (SIGKILL: they are the lab's by construction), then deletes the
    namespaces (their veths, qdiscs and nftables tables go with them) and the state file."""
    spaces = lab_namespaces(lab)
    for ns in spaces:
        pids = run(["ip", "netns", "pids", ns], check=False, quiet=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
    deadline = time.time() + 5
    for ns in spaces:
        while run(["ip", "netns", "pids", ns], check=False, quiet=True).stdout.split() and time.time() < deadline:
            time.sleep(0.05)
        run(["ip", "netns", "delete", ns], check=False)
    try:
        os.unlink(state_path(lab))
    except FileNotFoundError:
        pass


def sweep():
    """Tears down every lab whose owner is gone (a run killed before its guard could act)."""
    for lab in labs_on_host():
        owner = None
        try:
            with open(state_path(lab)) as f:
                owner = json.load(f).get("owner")
        except (OSError, ValueError):
            pass
        if owner is None or not alive(owner):
            down(lab)


class Lab:
    def __init__(self, name, nodes, owner=None, guard=True):
        if not (name.isalnum() and len(name) <= NAME_LIMIT):
            raise ValueError(f"lab name {name!r}: letters and digits, at most {NAME_LIMIT}")
        if os.geteuid() != 0:
            raise RuntimeError("network namespaces need root (CI runs as root)")
        for tool in ("ip", "tc", "nft"):
            if run(["sh", "-c", f"command -v {tool}"], check=False, quiet=True).returncode != 0:
                raise RuntimeError(f"{tool} is missing: .ci/deps --test installs iproute2 and nftables")
        self.name = name
        self.nodes = list(nodes)
        self.owner = owner or os.getpid()
        self.address = {node: f"{SUBNET}{10 + i}" for i, node in enumerate(self.nodes)}
        self.index = {node: i for i, node in enumerate(self.nodes)}
        self.shaping = {node: {"rate": 0, "loss": 0, "blackhole": False} for node in self.nodes}
        os.makedirs(STATE_DIR, exist_ok=True)
        sweep()
        if lab_namespaces(name):
            down(name)
        with open(state_path(name), "w") as f:
            json.dump({"owner": self.owner, "nodes": self.nodes}, f)
        try:
            self._build()
        except Exception:
            down(name)
            raise
        if guard:
            subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "guard", name, str(self.owner)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)

    def ns(self, node):
        return namespace(self.name, node)

    def _build(self):
        hub = self.ns("hub")
        run(["ip", "netns", "add", hub])
        run(["ip", "-n", hub, "link", "add", "br0", "type", "bridge"])
        run(["ip", "-n", hub, "link", "set", "br0", "up"])
        run(["ip", "-n", hub, "link", "set", "lo", "up"])
        for node in self.nodes:
            ns = self.ns(node)
            port = f"p{self.index[node]}"
            run(["ip", "netns", "add", ns])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
            run(["ip", "-n", ns, "link", "add", "v0", "type", "veth", "peer", "name", port, "netns", hub])
            run(["ip", "-n", hub, "link", "set", port, "master", "br0"])
            run(["ip", "-n", hub, "link", "set", port, "up"])
            run(["ip", "-n", ns, "addr", "add", self.address[node] + "/24", "dev", "v0"])
            run(["ip", "-n", ns, "link", "set", "v0", "up"])
            for space, device in ((ns, "v0"), (hub, port)):
                table = f"lab{self.index[node]}"
                run(["ip", "netns", "exec", space, "nft", "add", "table", "netdev", table])
                run(["ip", "netns", "exec", space, "nft", "add", "chain", "netdev", table, "rx",
                     f"{{ type filter hook ingress device \"{device}\" priority 0; policy accept; }}"])

    def _ends(self, node):
        return ((self.ns(node), "v0"), (self.ns("hub"), f"p{self.index[node]}"))

    def link(self, node, rate=None, loss=None, blackhole=None):
        """Sets a node's link: rate in kbit/s (0: none), loss in percent, blackhole on or off."""
        shaping = self.shaping[node]
        if rate is not None:
            shaping["rate"] = int(rate)
        if loss is not None:
            shaping["loss"] = int(loss)
        if blackhole is not None:
            shaping["blackhole"] = bool(blackhole)
        chain = f"lab{self.index[node]}"
        for space, device in self._ends(node):
            run(["ip", "netns", "exec", space, "tc", "qdisc", "del", "dev", device, "root"], check=False, quiet=True)
            if shaping["rate"] > 0:
                rate_bytes = shaping["rate"] * 1000 // 8
                burst = max(3200, rate_bytes // 50)
                run(["ip", "netns", "exec", space, "tc", "qdisc", "add", "dev", device, "root", "tbf", "rate",
                     f"{shaping['rate']}kbit", "burst", str(burst), "latency", "200ms"])
            run(["ip", "netns", "exec", space, "nft", "flush", "chain", "netdev", chain, "rx"])
            if shaping["blackhole"]:
                run(["ip", "netns", "exec", space, "nft", "add", "rule", "netdev", chain, "rx", "drop"])
            elif shaping["loss"] > 0:
                run(["ip", "netns", "exec", space, "nft", "add", "rule", "netdev", chain, "rx", "numgen", "random",
                     "mod", "100", "<", str(shaping["loss"]), "drop"])

    def blackhole(self, node):
        self.link(node, blackhole=True)

    def restore(self, node):
        self.link(node, blackhole=False)

    def argv(self, node, argv):
        return ["ip", "netns", "exec", self.ns(node)] + list(argv)

    def popen(self, node, argv, **kwargs):
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.Popen(self.argv(node, argv), **kwargs)

    def run(self, node, argv, timeout=30):
        return subprocess.run(self.argv(node, argv), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)

    def down(self):
        down(self.name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.down()


def guard(lab, owner):
    """Waits for the owner to end (or the lab to be taken down), then takes the lab down."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    while alive(owner) and os.path.exists(state_path(lab)):
        time.sleep(0.25)
    if os.path.exists(state_path(lab)) or lab_namespaces(lab):
        down(lab)


def main():
    parser = argparse.ArgumentParser(description="network namespaces for tests over real links")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up")
    up.add_argument("lab")
    up.add_argument("nodes", nargs="+")
    up.add_argument("--owner", type=int, default=os.getppid())
    link = sub.add_parser("link")
    link.add_argument("lab")
    link.add_argument("node")
    link.add_argument("--rate", type=int)
    link.add_argument("--loss", type=int)
    link.add_argument("--blackhole", action="store_true")
    link.add_argument("--restore", action="store_true")
    ex = sub.add_parser("exec")
    ex.add_argument("lab")
    ex.add_argument("node")
    ex.add_argument("argv", nargs=argparse.REMAINDER)
    dn = sub.add_parser("down")
    dn.add_argument("lab")
    sub.add_parser("sweep")
    sub.add_parser("list")
    g = sub.add_parser("guard")
    g.add_argument("lab")
    g.add_argument("owner", type=int)
    args = parser.parse_args()
    if args.command == "up":
        lab = Lab(args.lab, args.nodes, owner=args.owner)
        print(json.dumps(lab.address))
    elif args.command == "link":
        lab = attach(args.lab)
        lab.link(args.node, rate=args.rate, loss=args.loss,
                 blackhole=True if args.blackhole else (False if args.restore else None))
        save(lab)
    elif args.command == "exec":
        argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        os.execvp("ip", ["ip", "netns", "exec", namespace(args.lab, args.node)] + argv)
    elif args.command == "down":
        down(args.lab)
    elif args.command == "sweep":
        sweep()
    elif args.command == "list":
        print("\n".join(sorted(labs_on_host())))
    elif args.command == "guard":
        guard(args.lab, args.owner)


def attach(name):
    """The lab of a state file (for the CLI's link command, a process of its own)."""
    with open(state_path(name)) as f:
        state = json.load(f)
    lab = Lab.__new__(Lab)
    lab.name = name
    lab.nodes = state["nodes"]
    lab.owner = state["owner"]
    lab.address = {node: f"{SUBNET}{10 + i}" for i, node in enumerate(lab.nodes)}
    lab.index = {node: i for i, node in enumerate(lab.nodes)}
    lab.shaping = state.get("shaping") or {node: {"rate": 0, "loss": 0, "blackhole": False} for node in lab.nodes}
    return lab


def save(lab):
    with open(state_path(lab.name), "w") as f:
        json.dump({"owner": lab.owner, "nodes": lab.nodes, "shaping": lab.shaping}, f)


if __name__ == "__main__":
    main()
