#!/usr/bin/env bash
# Checks the shipped systemd units under a real systemd: boots the host's systemd (Debian 12: systemd 252) in
# systemd-nspawn with a staged install of radio-relay and the units, then checks socket activation, the watchdog,
# the socket keeping the port through a restart, and that the binary runs without a Swift toolchain.
#
#   deploy/systemd-check.sh BINARY RESOURCES_DIR UNITS_DIR
#     BINARY         a radio-relay release binary (.build/release/radio-relay)
#     RESOURCES_DIR  its radio-relay_RadioRelay.resources folder (holds demo.mp3)
#     UNITS_DIR      a folder holding radio-relay.service and radio-relay.socket
#
# Prints one line per check, "PASS name: figures" or "FAIL name: why" (and a few "INFO" lines), then
# "N passed, N failed"; exits 1 when a check failed, 2 on a usage or setup error. Takes about 15 s (every wait has a
# deadline; well under 2 minutes whatever happens). Two boots: the units as shipped (checks socket-activation,
# watchdog, socket-keeps-port, self-contained), then the socket unit without FileDescriptorName=
# (socket-activation-default-name).
#
# Needs: root, systemd-nspawn (apt-get install systemd-container), nsenter, python3 in /usr/bin, a merged-/usr host
# (Debian 12). The container: a tmpfs root (--volatile=yes) with the host's /usr read-only, its own network namespace
# (loopback only), a fresh machine id, and only the staged install bound in (/usr/local, /etc/radio-relay,
# /etc/systemd/system); /opt (a Swift toolchain) is not visible there, as on a server without Swift.
# The checks use a config with one station, jazz on port 8000, playing the bundled demo sample, and a drop-in
# WatchdogSec=3 so the watchdog check takes seconds, not half a minute.
#
# SDCHECK_KEEP=1 keeps the scratch directory (/tmp/sdcheck/run.*: the staged installs, each container's console log
# and the units' journal).
set -uo pipefail
umask 022

usage() { echo "usage: $0 BINARY RESOURCES_DIR UNITS_DIR" >&2; exit 2; }
[[ $# -eq 3 ]] || usage
die() { echo "systemd-check: $*" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "must run as root (it boots a container)"
BIN=$(realpath -e "$1" 2>/dev/null) || die "no binary at $1"
RES=$(realpath -e "$2" 2>/dev/null) || die "no resources folder at $2"
UNITS=$(realpath -e "$3" 2>/dev/null) || die "no units folder at $3"
[[ -f $BIN && -x $BIN ]] || die "$BIN is not an executable file"
[[ -f $RES/demo.mp3 ]] || die "$RES has no demo.mp3"
for u in radio-relay.service radio-relay.socket; do [[ -f $UNITS/$u ]] || die "$UNITS has no $u"; done
for c in systemd-nspawn nsenter unshare systemctl ldd timeout awk; do
    command -v "$c" >/dev/null || die "$c not found (systemd-nspawn: apt-get install systemd-container)"
done
[[ -x /usr/bin/python3 ]] || die "/usr/bin/python3 not found (the clients run inside the container from the host's /usr)"
[[ -e /usr/lib/os-release ]] || die "/usr/lib/os-release missing: the host's /usr is not a bootable merged /usr"

PORT=8000
WATCHDOG_SEC=3
RESTART_SEC=2
PASSED=0
FAILED=0
T_START=$EPOCHREALTIME
mkdir -p /tmp/sdcheck
WORK=$(mktemp -d /tmp/sdcheck/run.XXXXXX) || die "cannot create a scratch directory under /tmp/sdcheck"

pass() { echo "PASS $1: $2"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $1: $2"; FAILED=$((FAILED + 1)); }
info() { echo "INFO $1: $2"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
# A JSON field of the helper's one-line answer.
jget() { /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1] or "{}"); v=d.get(sys.argv[2], ""); print(v if v is not None else "")' "$1" "$2" 2>/dev/null; }

# ---------------------------------------------------------------------------------------------------------------
# Containers. Each boot gets: a cgroup of its own (the host is hybrid: a named systemd v1 hierarchy plus cgroup2 at
# /sys/fs/cgroup/unified; the container gets a unified hierarchy), a private mount namespace in which ROOT/usr is the
# host's /usr read-only (so nothing is left mounted on the host when nspawn exits), and the staged install.
CG_ROOTS=()
if [[ -e /sys/fs/cgroup/unified/cgroup.controllers ]]; then
    CG_ROOTS=(/sys/fs/cgroup/unified /sys/fs/cgroup/systemd)
elif [[ -e /sys/fs/cgroup/cgroup.controllers ]]; then
    CG_ROOTS=(/sys/fs/cgroup)
else
    die "no cgroup2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified"
fi

NSPAWN_PID=""   # the running container's nspawn process (started by this script)
CPID=""         # its PID 1, seen from the host
MACHINE=""
CGROUPS=()      # cgroups this script created

remove_cgroup() {  # depth first; a cgroup with processes left is killed first (cgroup.kill) where possible
    local top=$1 d
    [[ -d $top ]] || return 0
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        while IFS= read -r d; do rmdir "$d" 2>/dev/null; done < <(find "$top" -depth -type d 2>/dev/null)
        [[ -d $top ]] || return 0
        [[ -e $top/cgroup.kill ]] && echo 1 > "$top/cgroup.kill" 2>/dev/null
        sleep 0.2
    done
    echo "systemd-check: could not remove cgroup $top" >&2
}

stop_container() {
    local pid=$NSPAWN_PID i
    # The units' journal, kept with the scratch directory (SDCHECK_KEEP=1).
    [[ -n $CPID && -n $MACHINE ]] && cx 10 journalctl -b --no-pager -o short-monotonic -u radio-relay.service \
        -u radio-relay.socket > "$WORK/${MACHINE##*-}.journal" 2>&1
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null   # nspawn asks the container's systemd to halt (SIGRTMIN+3)
        for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null   # a second SIGTERM: immediate termination
            for ((i = 0; i < 30; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
        if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null; fi
        wait "$pid" 2>/dev/null
    fi
    NSPAWN_PID="" CPID=""
    local cg
    for cg in "${CGROUPS[@]}"; do remove_cgroup "$cg"; done
    CGROUPS=()
    [[ -n $MACHINE ]] && rmdir "/run/systemd/nspawn/propagate/$MACHINE" 2>/dev/null
    MACHINE=""
}

cleanup() {
    trap - EXIT INT TERM HUP
    stop_container
    if [[ ${SDCHECK_KEEP:-0} == 1 ]]; then
        echo "systemd-check: kept $WORK" >&2
    elif [[ -d $WORK ]]; then
        # ROOT/usr is only ever mounted inside nspawn's private mount namespace; never descend into a mount anyway.
        if ! findmnt -rn -o TARGET | grep -q "^$WORK"; then rm -rf --one-file-system "$WORK"; fi
    fi
}
trap cleanup EXIT
trap 'echo "systemd-check: interrupted" >&2; exit 130' INT TERM HUP

# Runs a command inside the container (all its namespaces), with a clean environment and a time limit.
cx() {
    local t=$1; shift
    timeout -k 2 "$((t + 5))" nsenter -t "$CPID" -a \
        env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin LANG=C.UTF-8 SYSTEMD_PAGER= SYSTEMD_COLORS=0 \
        timeout -k 1 "$t" "$@"
}
# The checking clients (python3 from the host's /usr, inside the container): helper.py below, fed on stdin.
helper() { local t=$1; shift; cx "$t" python3 - "$@" < "$WORK/helper.py"; }

# stage DIR SOCKET_UNIT_FILE: the install as deploy/install.sh lays it out, plus the check's config and drop-in.
stage() {
    local s=$1 sock=$2
    install -d "$s/usr/local/bin" "$s/etc/radio-relay" "$s/etc/systemd/system/radio-relay.service.d"
    install -m 0755 "$BIN" "$s/usr/local/bin/radio-relay"
    cp -R "$RES" "$s/usr/local/bin/radio-relay_RadioRelay.resources"
    chmod -R a+rX "$s/usr/local/bin/radio-relay_RadioRelay.resources"
    install -m 0644 "$RES/demo.mp3" "$s/etc/radio-relay/demo.mp3"
    cat > "$s/etc/radio-relay/radio-relay.conf" <<EOF
# systemd-check.sh: one station on port $PORT playing a copy of the bundled demo sample.
[server]
status = 127.0.0.1:8080

[station jazz]
upstream = /etc/radio-relay/demo.mp3
port = $PORT
EOF
    chmod 0644 "$s/etc/radio-relay/radio-relay.conf"
    install -m 0644 "$UNITS/radio-relay.service" "$s/etc/systemd/system/radio-relay.service"
    install -m 0644 "$sock" "$s/etc/systemd/system/radio-relay.socket"
    printf '[Service]\nWatchdogSec=%s\n' "$WATCHDOG_SEC" > "$s/etc/systemd/system/radio-relay.service.d/override.conf"
    # A fresh machine id bound read-only: not a first boot (whose presets would enable every unit of the host's
    # /usr), and nothing tries to commit it.
    ln -s /dev/null "$s/etc/systemd/system/systemd-machine-id-commit.service"
    systemctl --root="$s" enable radio-relay.service radio-relay.socket >/dev/null 2>&1 || return 1
    [[ -L $s/etc/systemd/system/multi-user.target.wants/radio-relay.service &&
        -L $s/etc/systemd/system/sockets.target.wants/radio-relay.socket ]] || return 1
    /usr/bin/python3 -c 'import uuid; print(uuid.uuid4().hex)' > "$s/machine-id"
}

# boot NAME STAGE_DIR: starts the container, waits until its systemd has finished booting. Sets NSPAWN_PID, CPID,
# BOOT_SECS, BOOT_STATE; on failure returns 1 with BOOT_ERR.
boot() {
    local name=$1 s=$2 root=$WORK/$1.root log=$WORK/$1.console.log t0=$EPOCHREALTIME i cg
    BOOT_ERR="" BOOT_STATE="" BOOT_SECS=""
    MACHINE="rrcheck-$$-$name"
    mkdir -p "$root/usr"
    CGROUPS=()
    for i in "${CG_ROOTS[@]}"; do
        cg=$i/$MACHINE
        mkdir "$cg" || { BOOT_ERR="cannot create cgroup $cg"; return 1; }
        CGROUPS+=("$cg")
    done
    (
        for cg in "${CGROUPS[@]}"; do echo "$BASHPID" > "$cg/cgroup.procs" || exit 1; done
        export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
        exec unshare --mount --propagation private /bin/sh -c '
            mount --bind /usr "$1/usr" && mount -o remount,bind,ro "$1/usr" || exit 1
            exec systemd-nspawn --quiet --register=no --keep-unit --machine="$2" --volatile=yes --private-network \
                --link-journal=no --console=passive --boot -D "$1" \
                --bind-ro="$3/machine-id:/etc/machine-id" \
                --bind-ro="$3/usr/local:/usr/local" \
                --bind-ro="$3/etc/radio-relay:/etc/radio-relay" \
                --bind-ro="$3/etc/systemd/system:/etc/systemd/system"' sh "$root" "$MACHINE" "$s"
    ) > "$log" 2>&1 < /dev/null &
    NSPAWN_PID=$!
    # PID 1 of the container: nspawn's child that is PID 1 in its own PID namespace.
    for ((i = 0; i < 100; i++)); do
        kill -0 "$NSPAWN_PID" 2>/dev/null || break
        CPID=$(/usr/bin/python3 -c '
import glob, sys
for f in glob.glob("/proc/[0-9]*/status"):
    try:
        fields = dict(l.split(":", 1) for l in open(f) if ":" in l)
    except OSError:
        continue
    ns = fields.get("NSpid", "").split()
    if fields.get("PPid", "").strip() == sys.argv[1] and len(ns) > 1 and ns[-1] == "1":
        print(f.split("/")[2]); break' "$NSPAWN_PID" 2>/dev/null)
        [[ -n $CPID ]] && break
        sleep 0.1
    done
    if [[ -z $CPID ]]; then
        BOOT_ERR="systemd-nspawn did not start a container in 10 s: $(tail -n 3 "$log" | tr '\n' ' ')"
        return 1
    fi
    for ((i = 0; i < 150; i++)); do
        [[ -S /proc/$CPID/root/run/systemd/private ]] && break
        kill -0 "$CPID" 2>/dev/null || break
        sleep 0.1
    done
    if [[ ! -S /proc/$CPID/root/run/systemd/private ]]; then
        BOOT_ERR="the container's systemd did not come up in 15 s: $(tail -n 3 "$log" | tr '\n' ' ')"
        return 1
    fi
    BOOT_STATE=$(cx 20 systemctl is-system-running --wait 2>/dev/null)
    BOOT_SECS=$(since "$t0")
    case $BOOT_STATE in
        running | degraded) return 0 ;;
        *) BOOT_ERR="the container's systemd did not finish booting in 20 s (state '${BOOT_STATE:-none}')"; return 1 ;;
    esac
}

# ---------------------------------------------------------------------------------------------------------------
# The clients and measurements, run inside the container with the container's python3 (the host's /usr).
cat > "$WORK/helper.py" <<'PYEOF'
import errno, json, os, signal, socket, struct, subprocess, sys, threading, time

UNIT = "radio-relay.service"


def show(*props):
    out = subprocess.run(["systemctl", "show", UNIT, "-p", ",".join(props)],
                         capture_output=True, text=True, timeout=10).stdout
    d = {}
    for line in out.splitlines():
        k, _, v = line.partition("=")
        d[k] = v
    return d


STATE = ("ActiveState", "SubState", "Result", "MainPID", "NRestarts", "ExecMainCode", "ExecMainStatus")


def describe(s):
    code = {"1": "exited", "2": "killed", "3": "dumped"}.get(s.get("ExecMainCode", ""), "")
    text = "%s/%s, result %s" % (s.get("ActiveState"), s.get("SubState"), s.get("Result"))
    if code:
        text += ", last exit: %s %s" % (code, s.get("ExecMainStatus"))
    if s.get("NRestarts", "0") not in ("", "0"):
        text += ", %s restarts" % s["NRestarts"]
    return text


def journal(since_realtime=None, unit=UNIT):
    cmd = ["journalctl", "-b", "-o", "json", "--no-pager", "-u", unit]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
    entries = []
    for line in out.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e.get("MESSAGE"), list):
            e["MESSAGE"] = bytes(e["MESSAGE"]).decode("utf-8", "replace")
        if since_realtime is not None and int(e.get("__REALTIME_TIMESTAMP", 0)) < since_realtime * 1e6 - 50000:
            continue
        entries.append(e)
    return entries


def last_process_line():
    """The service's own last log line (its stderr or the dynamic loader's error), for a failure's reason."""
    own = [e for e in journal() if e.get("SYSLOG_IDENTIFIER") == "radio-relay" or e.get("_COMM") == "radio-relay"]
    return own[-1]["MESSAGE"].strip() if own else ""


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def client(port, timeout):
    """Connects to 127.0.0.1:port; waits up to timeout s for 4 bytes. result: ok (OggS), refused, hung (nothing in
    time), closed (closed before 4 bytes), bad (not OggS), error."""
    t0 = time.monotonic()
    r = {"start": t0}
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        try:
            s.connect(("127.0.0.1", port))
        except ConnectionRefusedError:
            r["result"] = "refused"
            return r
        except socket.timeout:
            r["result"] = "hung"
            r["why"] = "connect timed out"
            return r
        except OSError as e:
            r["result"] = "error"
            r["why"] = str(e)
            return r
        r["t_connect"] = time.monotonic() - t0
        data = b""
        while len(data) < 4:
            rem = t0 + timeout - time.monotonic()
            if rem <= 0:
                break
            s.settimeout(rem)
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError as e:
                r["why"] = str(e)
                chunk = b""
            if not chunk:
                r["result"] = "closed"
                r["bytes"] = len(data)
                return r
            if "t_first" not in r:
                r["t_first"] = time.monotonic() - t0
            data += chunk
        r["bytes"] = len(data)
        r["head"] = data[:4].decode("latin-1")
        if len(data) < 4:
            r["result"] = "hung"
        else:
            r["result"] = "ok" if data[:4] == b"OggS" else "bad"
        return r
    finally:
        s.close()


def cmd_active(deadline_s):
    """Waits for the service to be active; gives up early once it has failed or restarted."""
    t0 = time.monotonic()
    while True:
        s = show(*STATE)
        failed = s.get("ActiveState") == "failed" or s.get("SubState") == "auto-restart" or \
            s.get("NRestarts", "0") not in ("", "0")
        if s.get("ActiveState") == "active" or failed or time.monotonic() - t0 > deadline_s:
            break
        time.sleep(0.05)
    isact = subprocess.run(["systemctl", "is-active", UNIT], capture_output=True, text=True).stdout.strip()
    out = {"is_active": isact, "waited": round(time.monotonic() - t0, 2), "state": describe(s),
           "mainpid": s.get("MainPID")}
    if isact != "active":
        out["log"] = last_process_line()
    return out


def cmd_client(port, timeout):
    r = client(port, timeout)
    r.pop("start", None)
    for k in ("t_connect", "t_first"):
        if k in r:
            r[k] = round(r[k], 3)
    return r


def cmd_watchdog(limit_s):
    s = show(*STATE)
    if s.get("ActiveState") != "active" or s.get("MainPID") in ("", "0"):
        return {"error": "service not active before SIGSTOP (%s)%s" % (
            describe(s), ("; log: " + last_process_line()) if last_process_line() else "")}
    old = int(s["MainPID"])
    t0r = time.time()
    t0 = time.monotonic()
    os.kill(old, signal.SIGSTOP)
    gone = new = None
    newpid = None
    while time.monotonic() - t0 < limit_s:
        now = time.monotonic()
        if gone is None and not alive(old):
            gone = now - t0
        if gone is not None:
            s = show("ActiveState", "MainPID")
            if s.get("ActiveState") == "active" and s.get("MainPID") not in ("", "0", str(old)):
                new = time.monotonic() - t0
                newpid = int(s["MainPID"])
                break
        time.sleep(0.02)
    if alive(old):
        os.kill(old, signal.SIGCONT)  # give it back as found
    fire = exited = None
    exit_msg = ""
    for _ in range(20):
        for e in journal(t0r):
            t = int(e.get("__MONOTONIC_TIMESTAMP", 0)) / 1e6 - t0
            msg = e.get("MESSAGE", "")
            if fire is None and "Watchdog timeout" in msg:
                fire = t
            elif fire is not None and exited is None and "Main process exited" in msg:
                exited = t
                exit_msg = msg.split(": ", 1)[-1]
        if fire is not None or new is None:
            break
        time.sleep(0.1)
    r = {"oldpid": old, "newpid": newpid, "gone": gone, "new": new, "fire": fire, "exited": exited,
         "exit_msg": exit_msg, "state": describe(show(*STATE))}
    return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()}


def listening(port):
    """The inodes of the sockets listening on port in this network namespace."""
    inodes = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            p = line.split()
            if len(p) > 9 and p[3] == "0A" and int(p[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(p[9])
    return frozenset(inodes)


def cmd_restart(port, duration, interval, timeout, restart_at):
    s = show(*STATE)
    if s.get("ActiveState") != "active":
        return {"error": "service not active before the restart (%s)%s" % (
            describe(s), ("; log: " + last_process_line()) if last_process_line() else "")}
    old = s.get("MainPID")
    results = []
    lock = threading.Lock()
    # The listening socket itself, sampled every 2 ms: the same socket throughout means the port never closed
    # (a refusal window of a millisecond can fall between two clients 50 ms apart; this cannot miss it).
    sock_changes = []
    sampling = threading.Event()
    first = listening(port)

    def sample():
        last = first
        while not sampling.is_set():
            cur = listening(port)
            now = time.monotonic()
            if cur != last:
                sock_changes.append((now, sorted(cur)))
                last = cur
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()

    def one():
        r = client(port, timeout)
        with lock:
            results.append(r)

    threads = []
    restart = {}

    # A fast probe besides the 50 ms clients: a bare connect every 1 ms from the restart until 0.3 s after it, each
    # closed at once with a reset, counting refusals (the port may be closed for only a few milliseconds).
    probe = {"n": 0, "refused": 0}
    probing = threading.Event()

    def fast_probe():
        while not probing.is_set():
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            c.settimeout(0.5)
            err = c.connect_ex(("127.0.0.1", port))
            c.close()
            probe["n"] += 1
            if err == errno.ECONNREFUSED:
                probe["refused"] += 1
            time.sleep(0.001)

    def do_restart():
        t = time.monotonic()
        pt = threading.Thread(target=fast_probe)
        pt.start()
        p = subprocess.run(["systemctl", "restart", UNIT], capture_output=True, text=True, timeout=30)
        restart.update(rc=p.returncode, secs=time.monotonic() - t, start=t, err=p.stderr.strip())
        time.sleep(0.3)
        probing.set()
        pt.join(2)

    t0r = time.time()
    t0 = time.monotonic()
    rt = None
    n = 0
    while time.monotonic() - t0 < duration:
        if rt is None and time.monotonic() - t0 >= restart_at:
            rt = threading.Thread(target=do_restart)
            rt.start()
        th = threading.Thread(target=one)
        th.start()
        threads.append(th)
        n += 1
        nxt = t0 + n * interval
        time.sleep(max(0.0, nxt - time.monotonic()))
    if rt is not None:
        rt.join(35)
    for th in threads:
        th.join(timeout + 2)
    sampling.set()
    sampler.join(5)
    counts = {}
    for r in results:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    s = show(*STATE)
    out = {"connections": len(results), "counts": counts, "restart_rc": restart.get("rc"),
           "restart_secs": round(restart.get("secs", 0), 2), "restart_err": restart.get("err", ""),
           "oldpid": old, "newpid": s.get("MainPID"), "after": describe(s)}
    rs = restart.get("start")
    out["probe_n"] = probe["n"]
    out["probe_refused"] = probe["refused"]
    out["listen_before"] = ",".join(sorted(first)) or "none"
    out["listen_after"] = ",".join(sorted(listening(port))) or "none"
    out["listen_changes"] = len(sock_changes)
    # systemd's own account: "Closed radio-relay.socket" ... "Listening on radio-relay.socket".
    closed_j = None
    for e in journal(t0r, "radio-relay.socket"):
        t = int(e.get("__MONOTONIC_TIMESTAMP", 0)) / 1e6
        msg = e.get("MESSAGE", "")
        if closed_j is None and msg.startswith("Closed "):
            closed_j = t
            out["journal_closed_at"] = round(t - (rs if rs is not None else t0), 3)
        elif closed_j is not None and msg.startswith("Listening on "):
            out["journal_closed_ms"] = round((t - closed_j) * 1000, 1)
            break
    if sock_changes:
        base = rs if rs is not None else t0
        closed = [t for t, cur in sock_changes if not cur]
        reopened = [t for t, cur in sock_changes if cur]
        out["listen_closed_at"] = round(closed[0] - base, 3) if closed else None
        if closed and reopened and reopened[-1] > closed[0]:
            out["listen_gap_ms"] = round((reopened[-1] - closed[0]) * 1000, 1)
    if rs is not None:
        bad = sorted(r["start"] - rs for r in results if r["result"] != "ok")
        if bad:
            out["not_ok_window"] = [round(bad[0], 2), round(bad[-1], 2)]
    return out


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "active":
        out = cmd_active(float(args[0]))
    elif cmd == "client":
        out = cmd_client(int(args[0]), float(args[1]))
    elif cmd == "watchdog":
        out = cmd_watchdog(float(args[0]))
    elif cmd == "restart":
        out = cmd_restart(int(args[0]), float(args[1]), float(args[2]), float(args[3]), float(args[4]))
    else:
        raise SystemExit("unknown command " + cmd)
    print(json.dumps(out))


main()
PYEOF

# ---------------------------------------------------------------------------------------------------------------
# Checks.

# check_activation NAME: after boot the service is active and a client gets OggS within 5 s.
check_activation() {
    local name=$1 a c isact state client_res why
    a=$(helper 15 active 10)
    isact=$(jget "$a" is_active)
    state=$(jget "$a" state)
    c=$(helper 10 client "$PORT" 5)
    client_res=$(jget "$c" result)
    if [[ $isact == active && $client_res == ok ]]; then
        pass "$name" "is-active: active $(jget "$a" waited) s after boot finished (${BOOT_SECS} s from nspawn start); client on 127.0.0.1:$PORT got OggS after $(jget "$c" t_first) s ($(jget "$c" bytes) bytes in the first read)"
    else
        why="is-active: ${isact:-?} ($state)"
        [[ -n $(jget "$a" log) ]] && why+="; service log: $(jget "$a" log)"
        case $client_res in
            ok) why+="; client got OggS after $(jget "$c" t_first) s" ;;
            hung) why+="; client on 127.0.0.1:$PORT: no OggS within 5 s ($(jget "$c" bytes) bytes)" ;;
            closed) why+="; client on 127.0.0.1:$PORT: connection closed after $(jget "$c" bytes) bytes" ;;
            refused) why+="; client on 127.0.0.1:$PORT: connection refused" ;;
            bad) why+="; client on 127.0.0.1:$PORT: got '$(jget "$c" head)', not OggS" ;;
            *) why+="; client: ${client_res:-no answer} $(jget "$c" why)" ;;
        esac
        fail "$name" "$why"
    fi
}

check_watchdog() {
    local w err gone fire new exited verdict
    w=$(helper 40 watchdog 20)
    err=$(jget "$w" error)
    if [[ -z $w ]]; then fail watchdog "the measurement gave no answer"; return; fi
    if [[ -n $err ]]; then fail watchdog "$err"; return; fi
    gone=$(jget "$w" gone) fire=$(jget "$w" fire) new=$(jget "$w" new) exited=$(jget "$w" exited)
    local limit=$((WATCHDOG_SEC + RESTART_SEC + 1))
    local figures="SIGSTOP to PID $(jget "$w" oldpid); watchdog fired at ${fire:-never} s, old process gone at ${gone:-never} s"
    local linger=""
    if [[ -n $fire && -n $gone ]]; then
        linger=$(awk -v g="$gone" -v f="$fire" 'BEGIN { printf "%.2f", g - f }')
        figures+=" (${linger} s after the watchdog; journal: $(jget "$w" exit_msg) at ${exited:-?} s)"
    fi
    figures+=", new PID $(jget "$w" newpid) active at ${new:-never} s (limit ${limit} s = WatchdogSec $WATCHDOG_SEC + RestartSec $RESTART_SEC + 1)"
    verdict=$(awk -v n="$new" -v l="$linger" -v lim="$limit" 'BEGIN {
        if (n == "") { print "no new process became active within 20 s"; exit }
        if (l == "") { print "no \"Watchdog timeout\" in the journal or the old process never went away"; exit }
        r = ""
        if (n + 0 > lim) r = r sprintf("new process active after %.2f s > %d s; ", n, lim)
        if (l + 0 >= 2) r = r sprintf("old process lingered %.2f s after the watchdog (>= 2 s); ", l)
        print r }')
    if [[ -z $verdict ]]; then pass watchdog "$figures"; else fail watchdog "${verdict%; }; $figures"; fi
}

check_restart() {
    local r err counts refused hung ok total other
    r=$(helper 60 restart "$PORT" 5 0.05 5 1)
    if [[ -z $r ]]; then fail socket-keeps-port "the measurement gave no answer"; return; fi
    err=$(jget "$r" error)
    if [[ -n $err ]]; then fail socket-keeps-port "$err"; return; fi
    read -r total ok refused hung other < <(/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1]); c = d["counts"]
print(d["connections"], c.get("ok", 0), c.get("refused", 0), c.get("hung", 0),
      sum(v for k, v in c.items() if k not in ("ok", "refused", "hung")))' "$r")
    local figures="$total connections every 50 ms for 5 s around 'systemctl restart' (rc $(jget "$r" restart_rc), $(jget "$r" restart_secs) s): refused $refused, hung $hung, ok $ok"
    [[ $other != 0 ]] && figures+=", other $other ($(jget "$r" counts))"
    figures+="; MainPID $(jget "$r" oldpid) -> $(jget "$r" newpid)"
    local pn=$(jget "$r" probe_n) pr=$(jget "$r" probe_refused)
    figures+="; fast probe (a connect every 1 ms during the restart): $pr of $pn refused"
    local changes=$(jget "$r" listen_changes)
    if [[ $changes == 0 ]]; then
        figures+="; the listening socket stayed open (inode $(jget "$r" listen_before), sampled every 2 ms)"
    else
        figures+="; the listening socket was closed and reopened (inode $(jget "$r" listen_before) -> $(jget "$r" listen_after)"
        [[ -n $(jget "$r" listen_closed_at) ]] && figures+=", closed $(jget "$r" listen_closed_at) s after the restart began"
        [[ -n $(jget "$r" listen_gap_ms) ]] && figures+=", no listener seen for $(jget "$r" listen_gap_ms) ms"
        [[ -n $(jget "$r" journal_closed_at) ]] && figures+="; journal: 'Closed radio-relay.socket' $(jget "$r" journal_closed_at) s after the restart began, 'Listening on' again $(jget "$r" journal_closed_ms) ms later"
        figures+=")"
    fi
    local win=$(jget "$r" not_ok_window)
    [[ -n $win ]] && figures+="; failures from ${win} s after the restart began"
    local why=""
    [[ $refused != 0 ]] && why+="$refused connections refused; "
    [[ $pr != 0 ]] && why+="$pr fast-probe connects refused; "
    [[ $hung != 0 ]] && why+="$hung connections hung; "
    [[ $other != 0 ]] && why+="$other connections closed or reset without OggS; "
    [[ $changes != 0 ]] && why+="the port was closed during the restart; "
    [[ $(jget "$r" restart_rc) != 0 ]] && why+="systemctl restart failed ($(jget "$r" restart_err)); "
    [[ $(jget "$r" newpid) == "$(jget "$r" oldpid)" || $(jget "$r" newpid) == 0 ]] && why+="no new process after the restart ($(jget "$r" after)); "
    if [[ -z $why ]]; then
        pass socket-keeps-port "$figures"
    else
        fail socket-keeps-port "${why}$figures"
    fi
}

# self-contained: ldd on the host names no Swift runtime, and the binary runs --version in the container.
check_self_contained() {
    local lddout swiftlibs ver rc why=""
    lddout=$(ldd "$BIN" 2>&1)
    # Toolchain runtime libraries by name (resolved or "not found"), or anything resolved under /opt.
    swiftlibs=$(awk '$1 ~ /^(libswift|libFoundation|lib_FoundationICU|libicu|libdispatch|libBlocksRuntime)/ || $3 ~ /^\/opt\// {
            n++; names = names (n > 1 ? ", " : "") $1
            dir = $3; sub(/[^\/]*$/, "", dir); if (dir != "" && !(dir in seen)) { seen[dir]; dirs = dirs (dirs != "" ? ", " : "") dir }
        } END { if (n) printf "%d libraries (%s) from %s", n, names, (dirs != "" ? dirs : "nowhere: not found") }' <<< "$lddout")
    local nlibs=$(grep -c '=>' <<< "$lddout")
    if [[ -n $CPID ]]; then
        ver=$(cx 10 /usr/local/bin/radio-relay --version 2>&1)
        rc=$?
    else
        ver="(no container: $BOOT_ERR)" rc=1
    fi
    ver=$(tr '\n' ' ' <<< "$ver" | sed 's/ *$//')
    [[ -n $swiftlibs ]] && why+="ldd lists the Swift toolchain's runtime: $swiftlibs; "
    [[ $rc != 0 ]] && why+="in the container (no /opt) --version exits $rc: $ver; "
    if [[ -z $why ]]; then
        pass self-contained "ldd: $nlibs libraries, none from /opt nor libswift*/libFoundation*/libicu*; in the container without /opt: $ver"
    else
        fail self-contained "${why%; }"
    fi
}

# ---------------------------------------------------------------------------------------------------------------
# Boot 1: the units as shipped (plus WatchdogSec=3): checks 1-4 and the security rating.
if ! stage "$WORK/stage1" "$UNITS/radio-relay.socket"; then die "could not stage the install (systemctl --root enable failed)"; fi
if boot shipped "$WORK/stage1"; then
    info boot "systemd $(cx 5 systemctl --version | awk 'NR == 1 { print $2 }') in systemd-nspawn is $BOOT_STATE after ${BOOT_SECS} s; socket unit: $(grep -m1 '^FileDescriptorName=' "$UNITS/radio-relay.socket" || echo 'no FileDescriptorName=')"
    check_activation socket-activation
    sec=$(cx 20 systemd-analyze security radio-relay.service --no-pager 2>&1 | grep -m1 'Overall exposure level' | sed 's/^[^O]*//')
    info security "${sec:-systemd-analyze security gave no rating}"
    check_watchdog
    check_restart
    check_self_contained
else
    for n in socket-activation watchdog socket-keeps-port; do fail "$n" "container did not boot: $BOOT_ERR"; done
    check_self_contained
fi
stop_container

# Boot 2: the socket unit without its FileDescriptorName= line (systemd names the socket radio-relay.socket).
grep -v '^[[:space:]]*FileDescriptorName[[:space:]]*=' "$UNITS/radio-relay.socket" > "$WORK/radio-relay.socket.noname"
if ! stage "$WORK/stage2" "$WORK/radio-relay.socket.noname"; then die "could not stage the install (systemctl --root enable failed)"; fi
if boot noname "$WORK/stage2"; then
    check_activation socket-activation-default-name
else
    fail socket-activation-default-name "container did not boot: $BOOT_ERR"
fi
stop_container

echo "$PASSED passed, $FAILED failed"
echo "systemd-check: $(since "$T_START") s" >&2
[[ $FAILED -eq 0 ]]
