#!/usr/bin/env bash
# Checks the Debian package (deploy/build-deb.sh) under a real systemd: extracts it with dpkg-deb, boots the host's
# systemd (Debian 12: systemd 252) in systemd-nspawn with the package's files at the package's own paths, and checks
# the shipped units with the shipped example config, as an operator would use them.
#
#   deploy/systemd-check.sh DEB       e.g. deploy/systemd-check.sh .build/deb/radio-relay_0.1.0_amd64.deb
#
# Prints one line per check, "PASS name: figures" or "FAIL name: why" (and "INFO" lines: the boot, the package, the
# watchdog's timeline from the container's journal), then "N passed, N failed"; exits 1 when a check failed, 2 on a
# usage or setup error. Takes about 20 s; every wait has a deadline (well under 2 minutes whatever happens).
#
# The package's files: the container's /usr is an overlay of the package's usr/ (its lib/ merged into usr/lib, as
# Debian 12's merged /usr has it) over the host's /usr, read-only, so /usr/bin/radio-relay, /usr/share/radio-relay and
# /lib/systemd/system/radio-relay.* are where the package puts them; its /etc/radio-relay and /etc/logrotate.d (the
# conffiles) are copied to /etc, and its maintainer scripts are run as dpkg would run them.
#
# Boot 1, a fresh install:
#   package          (before booting) the files at their paths, ExecStart=/usr/bin/radio-relay, the conffile, Depends
#   postinst         `postinst configure`: exit 0, systemd reloaded its units, nothing enabled and nothing started
#   units-active     `systemctl enable --now radio-relay.socket radio-relay.service` (the operator's step): both active
#   ogg-socket-port  Ogg on the socket unit's port (8000, station jazz), that socket held by systemd and the service
#   ogg-service-port Ogg on the config's other station's port (news, 8001), bound by the service itself
#   access-log       the two clients above left a line each in the access log, in the combined format
#   logrotate        /etc/logrotate.d/radio-relay passes `logrotate -d`; `logrotate -f` and its postrotate reload:
#                    the old lines in access.log.1, the next listener's line in a new access.log
#   health           /health answers 200 on the status address (the upstreams, example.org, cannot resolve: the
#                    stations serve silence and are healthy)
#   sandbox          /proc/MAINPID/status: NoNewPrivs 1, Seccomp 2, CapEff 0; in the service's mount namespace
#                    (nsenter -t MAINPID -m): /etc, /usr and /var read-only, /home empty and inaccessible, /tmp private
#   security         systemd-analyze security radio-relay.service: exposure at most 1.2
#   self-contained   ldd names no Swift runtime; in the container (no /opt) --version runs and `radio-relay` alone
#                    plays the demo sample from /usr/share/radio-relay
#   reload           `systemctl reload radio-relay` after a bitrate edit: same MainPID, /status.json shows the new
#                    bitrate, a listener connected before it keeps receiving
#   credential       a drop-in LoadCredential=jazz-upstream:/etc/radio-relay/jazz-upstream and
#                    `upstream = @credential:jazz-upstream`: /status.json shows the credential's URL redacted, the
#                    password is in no status, metric or log line
#   watchdog         SIGSTOP: systemd's watchdog aborts and restarts the service within WatchdogSec + RestartSec + 1 s,
#                    and no connection to the socket's port is refused meanwhile (a connect every 50 ms)
#   socket-keeps-port  `systemctl restart` under connections every 50 ms: none refused, the listening socket stays
#   stop             `systemctl stop radio-relay` (SIGTERM): Result=success, exit status 0
# Boot 2, a reboot (the units stay enabled), with a drop-in clearing the socket's FileDescriptorName=:
#   enabled-at-boot  both units come up at boot; the socket named radio-relay.socket (systemd's default) goes to the
#                    station on its address, Ogg on 8000
#   maintainer-scripts  postinst configure OLD (an upgrade) restarts the running service; prerm remove stops both
#                    units (the port closes); postrm remove, then postrm purge removes the enablement links
# Then:
#   cleanup          no process, mount or cgroup of the check left
#
# A drop-in sets WatchdogSec=3 so that the watchdog check takes seconds, not half a minute.
#
# Needs: root, systemd-nspawn (apt-get install systemd-container), dpkg-deb, nsenter and unshare (util-linux),
# python3 in /usr/bin, overlayfs, a merged-/usr host (Debian 12). The container: a tmpfs root (--volatile=yes), its own
# network namespace (loopback only), a fresh machine id; /opt (a Swift toolchain) is not visible there.
#
# SDCHECK_KEEP=1 keeps the scratch directory (/tmp/sdcheck/run.*: the extracted package, each container's console log
# and the units' journal).
set -uo pipefail
umask 022

usage() { echo "usage: $0 DEB   (a radio-relay .deb, from deploy/build-deb.sh)" >&2; exit 2; }
[[ $# -eq 1 ]] || usage
die() { echo "systemd-check: $*" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "must run as root (it boots a container)"
DEB=$(realpath -e "$1" 2>/dev/null) || die "no package at $1"
for c in systemd-nspawn dpkg-deb nsenter unshare systemctl ldd timeout awk findmnt mount logrotate; do
    command -v "$c" >/dev/null || die "$c not found (systemd-nspawn: apt-get install systemd-container)"
done
[[ -x /usr/bin/python3 ]] || die "/usr/bin/python3 not found (the clients run inside the container from the host's /usr)"
[[ -e /usr/lib/os-release ]] || die "/usr/lib/os-release missing: the host's /usr is not a bootable merged /usr"
[[ $(readlink /lib) == usr/lib || $(readlink /lib) == /usr/lib ]] || die "/lib is not a link to usr/lib (merged /usr)"
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || die "no overlayfs"

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
# A field of a one-line JSON answer (a dotted path: outputs.0.listen).
jget() {
    /usr/bin/python3 -c '
import json, sys
try:
    v = json.loads(sys.argv[1] or "{}")
    for k in sys.argv[2].split("."):
        v = v[int(k)] if isinstance(v, list) else v.get(k, "")
except (ValueError, LookupError, AttributeError):
    v = ""
print("" if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else v))' "$1" "$2" 2>/dev/null
}

# ---------------------------------------------------------------------------------------------------------------
# Containers. Each boot gets: a cgroup of its own (the host is hybrid: a named systemd v1 hierarchy plus cgroup2 at
# /sys/fs/cgroup/unified; the container gets a unified hierarchy), a private mount namespace in which ROOT/usr is the
# package's usr over the host's /usr, read-only (so nothing is left mounted on the host when nspawn exits).
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
NSPAWN_PIDS=()  # every nspawn process started, for the cleanup check

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
# A maintainer script of the package, run in the container as dpkg runs it.
maint() {
    local script=$1; shift
    cx 30 env DPKG_MAINTSCRIPT_PACKAGE=radio-relay DPKG_MAINTSCRIPT_NAME="$script" DPKG_MAINTSCRIPT_ARCH=amd64 \
        DPKG_ROOT= /srv/rrcheck/DEBIAN/"$script" "$@" 2>&1
}

# ---------------------------------------------------------------------------------------------------------------
# The package, extracted. PKG: its files as dpkg-deb -x lays them out; USR_LAYER: its usr/ with its lib/ in usr/lib
# (merged /usr), the overlay's upper layer; DEBIAN: its control files.
PKG=$WORK/pkg
USR_LAYER=$WORK/usr-layer
dpkg-deb -x "$DEB" "$PKG" 2>"$WORK/extract.err" || die "dpkg-deb -x $DEB failed: $(head -n 3 "$WORK/extract.err")"
dpkg-deb -e "$DEB" "$WORK/DEBIAN" 2>>"$WORK/extract.err" || die "dpkg-deb -e $DEB failed"
mkdir -p "$USR_LAYER/lib"
[[ -d $PKG/usr ]] && cp -al "$PKG/usr/." "$USR_LAYER/"
[[ -d $PKG/lib ]] && cp -al "$PKG/lib/." "$USR_LAYER/lib/"
# This host's /usr/sbin/policy-rc.d (Docker's: "exit 101", no service actions) would stop deb-systemd-invoke in the
# maintainer scripts; a server has none. An overlay whiteout hides it in the container.
POLICY_HIDDEN=""
if [[ -e /usr/sbin/policy-rc.d && ! -e $USR_LAYER/sbin/policy-rc.d ]]; then
    mkdir -p "$USR_LAYER/sbin" && mknod "$USR_LAYER/sbin/policy-rc.d" c 0 0 && POLICY_HIDDEN=1
fi
BIN=$PKG/usr/bin/radio-relay
SERVICE_UNIT=$PKG/lib/systemd/system/radio-relay.service
SOCKET_UNIT=$PKG/lib/systemd/system/radio-relay.socket
CONF=$PKG/etc/radio-relay/radio-relay.conf

check_package() {
    local why="" f
    for f in usr/bin/radio-relay usr/share/radio-relay/demo.mp3 lib/systemd/system/radio-relay.service \
        lib/systemd/system/radio-relay.socket etc/radio-relay/radio-relay.conf usr/share/man/man8/radio-relay.8.gz \
        usr/share/doc/radio-relay/copyright etc/logrotate.d/radio-relay; do
        [[ -f $PKG/$f ]] || why+="no /$f; "
    done
    [[ -x $BIN ]] || why+="/usr/bin/radio-relay is not executable; "
    local exec
    exec=$(grep -m1 '^ExecStart=' "$SERVICE_UNIT" 2>/dev/null)
    [[ $exec == ExecStart=/usr/bin/radio-relay\ * ]] || why+="radio-relay.service: '$exec', not ExecStart=/usr/bin/radio-relay; "
    grep -v '^[[:space:]]*#' "$SERVICE_UNIT" "$SOCKET_UNIT" 2>/dev/null | grep -q /usr/local/ &&
        why+="a unit names /usr/local/; "
    for f in /etc/radio-relay/radio-relay.conf /etc/logrotate.d/radio-relay; do
        grep -qx "$f" "$WORK/DEBIAN/conffiles" 2>/dev/null || why+="DEBIAN/conffiles does not list $f; "
    done
    for f in postinst prerm postrm; do [[ -x $WORK/DEBIAN/$f ]] || why+="no DEBIAN/$f; "; done
    local nfiles version depends
    nfiles=$(find "$PKG" -type f | wc -l)
    version=$(dpkg-deb -f "$DEB" Version)
    depends=$(dpkg-deb -f "$DEB" Depends)
    if [[ -z $why ]]; then
        pass package "$(basename "$DEB"): version $version, $nfiles files at their paths ($exec; conffiles /etc/radio-relay/radio-relay.conf, /etc/logrotate.d/radio-relay; postinst, prerm, postrm); Depends: $depends"
    else
        fail package "${why%; }"
    fi
}

# What the shipped config and socket unit say: the socket's port and station, another station bound by the service,
# the status address. Shell assignments.
eval "$(/usr/bin/python3 - "$CONF" "$SOCKET_UNIT" <<'PYEOF'
import re, shlex, sys
conf, sock = sys.argv[1], sys.argv[2]
stations, server, section = {}, {}, None
for raw in open(conf, encoding="utf-8"):
    line = raw.strip()
    if not line or line[0] in "#;":
        continue
    m = re.fullmatch(r"\[(\w+)(?:\s+([^\]]+))?\]", line)
    if m:
        section = (m.group(1), m.group(2))
        if section[0] == "station":
            stations[section[1]] = {}
        continue
    k, _, v = line.partition("=")
    k, v = k.strip(), v.strip().strip('"')
    if section and section[0] == "station":
        stations[section[1]][k] = v
    elif section and section[0] == "server":
        server[k] = v
listen = fdname = ""
for raw in open(sock, encoding="utf-8"):
    k, _, v = raw.strip().partition("=")
    if k == "ListenStream" and not listen:
        listen = v
    elif k == "FileDescriptorName":
        fdname = v
sock_port = int(listen.rsplit(":", 1)[-1]) if listen else 0
sock_station = fdname if fdname in stations else next(
    (n for n, s in stations.items() if int(s.get("port", 8000)) == sock_port), "")
other = next(((n, int(s.get("port", 8000))) for n, s in stations.items()
              if n != sock_station and int(s.get("port", 8000)) != sock_port), ("", 0))
status = server.get("status", "127.0.0.1:8080")
print("SOCK_PORT=%d SOCK_STATION=%s OTHER_STATION=%s OTHER_PORT=%d STATUS_ADDR=%s SOCK_FDNAME=%s" % (
    sock_port, shlex.quote(sock_station), shlex.quote(other[0]), other[1], shlex.quote(status), shlex.quote(fdname)))
print("OTHER_BITRATE=%s" % shlex.quote(stations.get(other[0], {}).get("bitrate", "96k")))
PYEOF
)" || die "cannot read the shipped config $CONF or socket unit"
[[ $SOCK_PORT -gt 0 && -n $SOCK_STATION && -n $OTHER_STATION && $STATUS_ADDR != off ]] ||
    die "the shipped config needs a station on the socket's port, another station and a status address"
STATUS_PORT=${STATUS_ADDR##*:}

# The credential the check passes: a URL with a password and a query token, none of which may be shown.
SECRET_PW=pw-$RANDOM$RANDOM
SECRET_TOKEN=tok-$RANDOM$RANDOM
CRED_URL="http://relay:$SECRET_PW@icecast.example.org:8000/jazz.mp3?token=$SECRET_TOKEN"
CRED_SHOWN="http://***@icecast.example.org:8000/jazz.mp3?token=***"

# stage DIR: /etc for the container. etc/radio-relay: the package's (the conffile as shipped) plus the credential
# file; etc/systemd/system (bound writable: `systemctl enable` writes its links there): the check's drop-ins.
stage() {
    local s=$1
    install -d "$s/etc/radio-relay" "$s/etc/systemd/system/radio-relay.service.d" "$s/etc/logrotate.d"
    cp -a "$PKG/etc/radio-relay/." "$s/etc/radio-relay/"
    cp -a "$PKG/etc/logrotate.d/." "$s/etc/logrotate.d/"
    (umask 077 && printf '%s\n' "$CRED_URL" > "$s/etc/radio-relay/jazz-upstream")
    printf '[Service]\nWatchdogSec=%s\n' "$WATCHDOG_SEC" > "$s/etc/systemd/system/radio-relay.service.d/watchdog.conf"
    printf '[Service]\nLoadCredential=jazz-upstream:/etc/radio-relay/jazz-upstream\n' \
        > "$s/etc/systemd/system/radio-relay.service.d/credential.conf"
    # A fresh machine id bound read-only: not a first boot (whose presets would enable every unit of the host's
    # /usr, and this package's too), and nothing tries to commit it.
    ln -s /dev/null "$s/etc/systemd/system/systemd-machine-id-commit.service"
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
            mount -t overlay overlay -o "ro,lowerdir=$4:/usr" "$1/usr" || exit 1
            exec systemd-nspawn --quiet --register=no --keep-unit --machine="$2" --volatile=yes --private-network \
                --link-journal=no --console=passive --boot -D "$1" \
                --bind-ro="$3/machine-id:/etc/machine-id" \
                --bind-ro="$3/etc/radio-relay:/etc/radio-relay" \
                --bind-ro="$3/etc/logrotate.d/radio-relay:/etc/logrotate.d/radio-relay" \
                --bind="$3/etc/systemd/system:/etc/systemd/system" \
                --bind-ro="$5:/srv/rrcheck/DEBIAN"' sh "$root" "$MACHINE" "$s" "$USR_LAYER" "$WORK/DEBIAN"
    ) > "$log" 2>&1 < /dev/null &
    NSPAWN_PID=$!
    NSPAWN_PIDS+=("$NSPAWN_PID")
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


def show(*props, unit=UNIT):
    out = subprocess.run(["systemctl", "show", unit, "-p", ",".join(props)],
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


def journal(since_realtime=None, unit=UNIT, everything=False):
    cmd = ["journalctl", "-b", "-o", "json", "--no-pager"]
    if not everything:
        cmd += ["-u", unit]
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


def client(port, timeout, keep=None):
    """Connects to 127.0.0.1:port; waits up to timeout s for 4 bytes. result: ok (OggS), refused, hung (nothing in
    time), closed (closed before 4 bytes), bad (not OggS), error. keep: a list the open socket is appended to."""
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
            if keep is not None and r["result"] == "ok":
                keep.append(s)
                s = None
        return r
    finally:
        if s is not None:
            s.close()


def rounded(d):
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in d.items()}


def http_get(port, path, timeout=3.0):
    """GET http://127.0.0.1:port/path: (status, body) or (None, error)."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError as e:
        return None, str(e)
    try:
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError as e:
        return None, str(e)
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None, "no HTTP status line"
    return status, body.decode("utf-8", "replace")


def status_json(port):
    code, body = http_get(port, "/status.json")
    if code != 200:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def station(doc, name):
    for s in (doc or {}).get("stations", []):
        if s.get("name") == name:
            return s
    return {}


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


def holders(inodes):
    """The processes holding any of these socket inodes: ['1 (systemd)', '34 (radio-relay)']."""
    want = {"socket:[%s]" % i for i in inodes}
    found = []
    for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
        try:
            fds = os.listdir("/proc/%s/fd" % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink("/proc/%s/fd/%s" % (pid, fd)) in want:
                    with open("/proc/%s/comm" % pid) as f:
                        found.append("%s (%s)" % (pid, f.read().strip()))
                    break
            except OSError:
                continue
    return found


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
    sock = show("ActiveState", "SubState", "Listen", "FileDescriptorName", "UnitFileState", "FragmentPath",
                unit="radio-relay.socket")
    svc = show("UnitFileState", "FragmentPath")
    isact = subprocess.run(["systemctl", "is-active", UNIT], capture_output=True, text=True).stdout.strip()
    out = {"is_active": isact, "waited": round(time.monotonic() - t0, 2), "state": describe(s),
           "mainpid": s.get("MainPID"), "socket": "%s/%s" % (sock.get("ActiveState"), sock.get("SubState")),
           "listen": sock.get("Listen"), "fdname": sock.get("FileDescriptorName"),
           "socket_enabled": sock.get("UnitFileState"), "service_enabled": svc.get("UnitFileState"),
           "service_path": svc.get("FragmentPath"), "socket_path": sock.get("FragmentPath")}
    if isact != "active":
        out["log"] = last_process_line()
    return out


def cmd_client(port, timeout):
    r = client(port, timeout)
    r.pop("start", None)
    inodes = listening(port)
    r["holders"] = holders(inodes)
    r["mainpid"] = show("MainPID").get("MainPID")
    return rounded(r)


def cmd_health(port):
    code, body = http_get(port, "/health")
    doc = status_json(port)
    return {"code": code, "body": body.strip().replace("\n", "; ") if isinstance(body, str) else body,
            "stations": ["%s: %s (%s)" % (s.get("name"), s.get("upstream_state"), s.get("upstream_reason") or "")
                         for s in (doc or {}).get("stations", [])]}


def cmd_reload(status_port, name, field, want, listen_port):
    """systemctl reload; waits for /status.json's station NAME to show FIELD == WANT. A listener on LISTEN_PORT,
    connected before the reload, must keep receiving after it."""
    before = show(*STATE)
    doc = status_json(status_port)
    was = station(doc, name).get(field)
    kept = []
    lr = client(listen_port, 5, keep=kept)
    t0r = time.time()
    t0 = time.monotonic()
    p = subprocess.run(["systemctl", "reload", UNIT], capture_output=True, text=True, timeout=20)
    t_reload = time.monotonic() - t0
    now = None
    t_seen = None
    while time.monotonic() - t0 < 5:
        now = station(status_json(status_port), name).get(field)
        if str(now) == want:
            t_seen = time.monotonic() - t0
            break
        time.sleep(0.05)
    after_bytes = 0
    if kept:
        s = kept[0]
        s.settimeout(0.2)
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            if not chunk:
                break
            after_bytes += len(chunk)
        s.close()
    after = show(*STATE)
    line = ""
    for e in journal(t0r):
        if e.get("MESSAGE", "").startswith("reload"):
            line = e["MESSAGE"].strip()
    return {"rc": p.returncode, "err": p.stderr.strip(), "secs": round(t_reload, 2), "was": was, "now": now,
            "seen": round(t_seen, 2) if t_seen is not None else None, "oldpid": before.get("MainPID"),
            "newpid": after.get("MainPID"), "state": describe(after), "listener": lr.get("result"),
            "after_bytes": after_bytes, "log": line}


def cmd_secret(status_port, *secrets):
    """Where the secrets appear: /status.json, /metrics, the journal of this boot."""
    places = []
    for path in ("/status.json", "/metrics"):
        code, body = http_get(status_port, path)
        if any(x in (body or "") for x in secrets):
            places.append(path)
    text = subprocess.run(["journalctl", "-b", "--no-pager", "-o", "cat"], capture_output=True, text=True,
                          timeout=10).stdout
    if any(x in text for x in secrets):
        places.append("the journal")
    return {"found_in": places}


def cmd_demo(port):
    """Runs `radio-relay --port PORT` (the demo: no upstream) for a moment: a client gets OggS; its first log line
    names the sample it plays."""
    p = subprocess.Popen(["/usr/bin/radio-relay", "--port", str(port)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    r = {"result": "refused"}
    t0 = time.monotonic()
    while time.monotonic() - t0 < 5 and p.poll() is None:
        r = client(port, 3)
        if r["result"] != "refused":
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    try:
        out, _ = p.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    lines = [l for l in out.splitlines() if l.strip()]
    return {"result": r.get("result"), "t_first": round(time.monotonic() - t0, 2), "rc": p.returncode,
            "first_line": lines[0] if lines else "", "sample": next(
                (w for l in lines for w in l.split() if w.endswith("demo.mp3")), "")}


PROBE = r'''
import json, os, stat
def write(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        os.unlink(path)
        return "writable"
    except OSError as e:
        return "read-only" if e.errno == 30 else os.strerror(e.errno)
r = {d: write(d + "/.rrcheck-probe") for d in ("/etc", "/usr", "/var")}
st = os.stat("/home")
r["home_mode"] = "%04o" % stat.S_IMODE(st.st_mode)
r["home_entries"] = len(os.listdir("/home"))
r["home_secret_visible"] = os.path.exists("/home/rrcheck/secret")
r["tmp_marker_visible"] = os.path.exists("/tmp/rrcheck-marker")
r["tmp"] = write("/tmp/.rrcheck-probe")
r["tmp_ino"] = "%d:%d" % (os.stat("/tmp").st_dev, os.stat("/tmp").st_ino)
print(json.dumps(r))
'''


def cmd_sandbox():
    s = show("MainPID", "ActiveState")
    pid = s.get("MainPID", "0")
    if s.get("ActiveState") != "active" or pid in ("", "0"):
        return {"error": "service not active (%s)" % describe(show(*STATE))}
    fields = {}
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.strip()
    p = subprocess.run(["nsenter", "-t", pid, "-m", "/usr/bin/python3", "-c", PROBE], capture_output=True,
                       text=True, timeout=10)
    try:
        probe = json.loads(p.stdout)
    except ValueError:
        return {"error": "the probe in the service's mount namespace failed: %s" % p.stderr.strip()[-300:]}
    out = {k: fields.get(k, "") for k in ("NoNewPrivs", "Seccomp", "CapEff", "CapPrm", "CapBnd", "Uid")}
    out["Uid"] = out["Uid"].split()[0] if out["Uid"] else ""
    out["mainpid"] = pid
    out["host_tmp_ino"] = "%d:%d" % (os.stat("/tmp").st_dev, os.stat("/tmp").st_ino)
    out.update(probe)
    return out


def cmd_watchdog(limit_s, port, interval, client_timeout):
    """SIGSTOP to the main process; a client every INTERVAL s on PORT until the new process is active (each waits
    up to CLIENT_TIMEOUT s for OggS); the timeline from the journal."""
    s = show(*STATE)
    if s.get("ActiveState") != "active" or s.get("MainPID") in ("", "0"):
        return {"error": "service not active before SIGSTOP (%s)%s" % (
            describe(s), ("; log: " + last_process_line()) if last_process_line() else "")}
    old = int(s["MainPID"])
    results = []
    lock = threading.Lock()
    done = threading.Event()

    def one():
        r = client(port, client_timeout)
        with lock:
            results.append(r)

    threads = []

    def loop():
        n = 0
        t = time.monotonic()
        while not done.is_set():
            th = threading.Thread(target=one)
            th.start()
            threads.append(th)
            n += 1
            time.sleep(max(0.0, t + n * interval - time.monotonic()))

    subprocess.run(["systemd-cat", "-t", "systemd-check", "echo", "SIGSTOP to radio-relay PID %d" % old],
                   timeout=5)
    t0r = time.time()
    t0 = time.monotonic()
    os.kill(old, signal.SIGSTOP)
    lt = threading.Thread(target=loop)
    lt.start()
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
    time.sleep(0.5)   # a few connections after the new process is up, too
    done.set()
    lt.join(5)
    if alive(old):
        os.kill(old, signal.SIGCONT)  # give it back as found
    for th in threads:
        th.join(client_timeout + 2)
    counts = {}
    slowest = 0.0
    for r in results:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
        if r["result"] == "ok":
            slowest = max(slowest, r.get("t_first", 0))
    fire = exited = None
    exit_msg = ""
    timeline = []
    for _ in range(20):
        timeline = []
        fire = exited = None
        for e in journal(t0r - 1, everything=True):
            msg = e.get("MESSAGE", "").strip()
            ident = e.get("SYSLOG_IDENTIFIER", "")
            unit = e.get("_SYSTEMD_UNIT", "") == UNIT or e.get("UNIT", "") == UNIT
            t = int(e.get("__MONOTONIC_TIMESTAMP", 0)) / 1e6 - t0
            if ident == "systemd-check" or (unit and ident == "systemd"):
                timeline.append("%+7.3f s  %s" % (t, msg))
            if unit and ident == "systemd":
                if fire is None and "Watchdog timeout" in msg:
                    fire = t
                elif fire is not None and exited is None and "Main process exited" in msg:
                    exited = t
                    exit_msg = msg.split(": ", 1)[-1]
        if (fire is not None and any("Started " in l for l in timeline)) or new is None:
            break
        time.sleep(0.1)
    r = {"oldpid": old, "newpid": newpid, "gone": gone, "new": new, "fire": fire, "exited": exited,
         "exit_msg": exit_msg, "state": describe(show(*STATE)), "connections": len(results), "counts": counts,
         "slowest": slowest, "timeline": timeline}
    return rounded(r)


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
    out["probe_n"] = probe["n"]
    out["probe_refused"] = probe["refused"]
    out["listen_before"] = ",".join(sorted(first)) or "none"
    out["listen_after"] = ",".join(sorted(listening(port))) or "none"
    out["listen_changes"] = len(sock_changes)
    rs = restart.get("start")
    if rs is not None:
        bad = sorted(r["start"] - rs for r in results if r["result"] != "ok")
        if bad:
            out["not_ok_window"] = [round(bad[0], 2), round(bad[-1], 2)]
    return out


def cmd_stop():
    before = show(*STATE)
    t0r = time.time()
    t0 = time.monotonic()
    p = subprocess.run(["systemctl", "stop", UNIT], capture_output=True, text=True, timeout=30)
    secs = time.monotonic() - t0
    s = show(*STATE)
    own = [e["MESSAGE"].strip() for e in journal(t0r) if e.get("SYSLOG_IDENTIFIER") == "radio-relay"]
    return {"rc": p.returncode, "secs": round(secs, 2), "oldpid": before.get("MainPID"), "state": describe(s),
            "active": s.get("ActiveState"), "result": s.get("Result"), "code": s.get("ExecMainCode"),
            "status": s.get("ExecMainStatus"), "first": own[0] if own else "", "last": own[-1] if own else ""}


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "active":
        out = cmd_active(float(args[0]))
    elif cmd == "client":
        out = cmd_client(int(args[0]), float(args[1]))
    elif cmd == "health":
        out = cmd_health(int(args[0]))
    elif cmd == "reload":
        out = cmd_reload(int(args[0]), args[1], args[2], args[3], int(args[4]))
    elif cmd == "secret":
        out = cmd_secret(int(args[0]), *args[1:])
    elif cmd == "demo":
        out = cmd_demo(int(args[0]))
    elif cmd == "sandbox":
        out = cmd_sandbox()
    elif cmd == "watchdog":
        out = cmd_watchdog(float(args[0]), int(args[1]), float(args[2]), float(args[3]))
    elif cmd == "restart":
        out = cmd_restart(int(args[0]), float(args[1]), float(args[2]), float(args[3]), float(args[4]))
    elif cmd == "stop":
        out = cmd_stop()
    else:
        raise SystemExit("unknown command " + cmd)
    print(json.dumps(out))


main()
PYEOF

# Edits a key of a station in the staged config (the container sees the file at once; the service on a reload).
set_station_key() {  # FILE STATION KEY VALUE
    /usr/bin/python3 - "$@" <<'PYEOF'
import re, sys
path, name, key, value = sys.argv[1:]
lines = open(path, encoding="utf-8").read().split("\n")
out, inside, done = [], False, False
for line in lines:
    m = re.match(r"\s*\[(\w+)(?:\s+([^\]]+))?\]", line)
    if m:
        if inside and not done:
            out.append("%s = %s" % (key, value))
            done = True
        inside = m.group(1) == "station" and m.group(2) == name
        out.append(line)
        continue
    if inside and re.match(r"\s*%s\s*=" % re.escape(key), line):
        out.append("%s = %s" % (key, value))
        done = True
        continue
    out.append(line)
if inside and not done:
    out.append("%s = %s" % (key, value))
    done = True
if not done:
    sys.exit("no [station %s] in %s" % (name, path))
open(path, "w", encoding="utf-8").write("\n".join(out))
PYEOF
}

# ---------------------------------------------------------------------------------------------------------------
# Checks.

# The service's state after `enable --now` or a boot: both units active, where they come from.
check_units_active() {
    local name=$1 a isact sock
    a=$(helper 15 active 10)
    isact=$(jget "$a" is_active)
    sock=$(jget "$a" socket)
    local figures="service $isact ($(jget "$a" state), MainPID $(jget "$a" mainpid), $(jget "$a" service_enabled), $(jget "$a" service_path)); socket $sock ($(jget "$a" listen), FileDescriptorName=$(jget "$a" fdname), $(jget "$a" socket_enabled), $(jget "$a" socket_path))"
    if [[ $isact == active && $sock == active/* ]]; then
        pass "$name" "$figures; active $(jget "$a" waited) s after the command"
    else
        local log=$(jget "$a" log)
        fail "$name" "$figures${log:+; service log: $log}"
    fi
}

# check_ogg NAME PORT WHAT: a client gets OggS on PORT within 5 s; who holds the listening socket.
check_ogg() {
    local name=$1 port=$2 what=$3 c res held mainpid
    c=$(helper 10 client "$port" 5)
    res=$(jget "$c" result)
    held=$(jget "$c" holders | tr -d '[]"')
    mainpid=$(jget "$c" mainpid)
    local figures="client on 127.0.0.1:$port ($what) got $(jget "$c" head) after $(jget "$c" t_first) s ($(jget "$c" bytes) bytes in the first reads); listening socket held by: ${held:-nobody}"
    local why=""
    [[ $res == ok ]] || why+="client: ${res:-no answer} $(jget "$c" why); "
    case $name in
        ogg-socket-port)
            [[ $held == *"1 (systemd)"* ]] || why+="the socket is not systemd's (not socket-activated); "
            [[ $held == *"$mainpid (radio-relay)"* ]] || why+="the service (MainPID $mainpid) does not hold it; " ;;
        ogg-service-port)
            [[ $held == "$mainpid (radio-relay)" ]] || why+="not bound by the service alone (MainPID $mainpid); " ;;
    esac
    if [[ -z $why ]]; then pass "$name" "$figures"; else fail "$name" "${why}$figures"; fi
}

# check_access_log: the two clients of the ogg checks left a line each in the access log the example config names,
# in the directory the unit's LogsDirectory= made (the only path the sandbox lets the service write).
check_access_log() {
    local path=/var/log/radio-relay/access.log lines="" i why="" owner
    for i in $(seq 50); do
        lines=$(cx 5 cat "$path" 2>/dev/null) || lines=""
        (($(grep -c . <<<"$lines") >= 2)) && break
        sleep 0.1
    done
    owner=$(cx 5 stat -L -c '%U %a' "$path" 2>/dev/null)
    local n=$(grep -c ' "TCP /[^"]*" 200 ' <<<"$lines")
    ((n >= 2)) || why+="$path has $n raw listeners' lines (2 expected); "
    grep -qvE '^[0-9a-f.:]+ [0-9a-f]{8}-[1-9][0-9]* - \[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9:]{8} \+0000\] "[^"]*" [0-9]{3} [0-9]+ "[^"]*" "[^"]*" [0-9]+$' <<<"$lines" &&
        why+="a line is not in the combined format; "
    local figures="$path ($(cx 5 readlink -f "$path" 2>/dev/null), owner and mode $owner): $n lines, the first: $(head -n 1 <<<"$lines")"
    if [[ -z $why ]]; then pass access-log "$figures"; else fail access-log "${why}$figures"; fi
}

# check_logrotate: the package's /etc/logrotate.d/radio-relay passes `logrotate -d`; a forced rotation moves the access
# log away and its postrotate `systemctl reload` makes the service open a new one (it creates it: no `create`, the
# user is dynamic), where the next listener's line lands, the old lines staying in access.log.1.
check_logrotate() {
    local conf=/etc/logrotate.d/radio-relay log=/var/log/radio-relay/access.log why="" dry status out i fresh old
    dry=$(cx 20 logrotate -d "$conf" 2>&1)
    status=$?
    ((status == 0)) || why+="logrotate -d exited $status: $(tail -n 3 <<<"$dry" | tr '\n' ' '); "
    grep -q "rotating pattern: $log" <<<"$dry" || why+="logrotate -d did not take the pattern $log; "
    old=$(cx 5 grep -c . "$log" 2>/dev/null)
    out=$(cx 30 logrotate -f -s /run/rrcheck-logrotate.state "$conf" 2>&1) || why+="logrotate -f failed: $out; "
    # The reload opens the file again, creating it: once it exists, the next listener's line goes there.
    for i in $(seq 50); do cx 5 test -e "$log" && break; sleep 0.1; done
    cx 5 test -e "$log" || why+="no new $log after the reload; "
    helper 10 client "$SOCK_PORT" 2 >/dev/null
    for i in $(seq 50); do
        fresh=$(cx 5 cat "$log" 2>/dev/null) || fresh=""
        (($(grep -c . <<<"$fresh") >= 1)) && break
        sleep 0.1
    done
    local moved=$(cx 5 grep -c . "$log.1" 2>/dev/null) owner=$(cx 5 stat -L -c '%U %a' "$log" 2>/dev/null)
    (($(grep -c ' "TCP /[^"]*" 200 ' <<<"$fresh") == 1)) || why+="the new $log has not the next listener's one line; "
    [[ $moved == "$old" ]] || why+="$log.1 has ${moved:-no} lines, the log had $old before; "
    local figures="logrotate -d $conf: exit $status; logrotate -f then its postrotate reload: $log.1 with $moved lines (was $old), a new $log (owner and mode $owner) with the next listener's line: $(head -n 1 <<<"$fresh")"
    if [[ -z $why ]]; then pass logrotate "$figures"; else fail logrotate "${why}$figures"; fi
}

check_health() {
    local h code
    h=$(helper 10 health "$STATUS_PORT")
    code=$(jget "$h" code)
    local figures="GET http://$STATUS_ADDR/health: ${code:-no answer} '$(jget "$h" body)'; /status.json: $(jget "$h" stations | tr -d '[]"')"
    if [[ $code == 200 ]]; then pass health "$figures"; else fail health "$figures"; fi
}

check_sandbox() {
    local s err why=""
    cx 5 sh -c 'mkdir -p /home/rrcheck && echo secret > /home/rrcheck/secret && echo x > /tmp/rrcheck-marker' ||
        true
    s=$(helper 20 sandbox)
    err=$(jget "$s" error)
    if [[ -z $s || -n $err ]]; then fail sandbox "${err:-no answer}"; return; fi
    local nnp=$(jget "$s" NoNewPrivs) sec=$(jget "$s" Seccomp) capeff=$(jget "$s" CapEff) capbnd=$(jget "$s" CapBnd)
    [[ $nnp == 1 ]] || why+="NoNewPrivs $nnp; "
    [[ $sec == 2 ]] || why+="Seccomp $sec (not a filter); "
    [[ $capeff =~ ^0+$ ]] || why+="CapEff $capeff; "
    local d
    for d in etc usr var; do [[ $(jget "$s" "/$d") == read-only ]] || why+="/$d: $(jget "$s" "/$d"); "; done
    [[ $(jget "$s" home_mode) == 0000 && $(jget "$s" home_entries) == 0 && $(jget "$s" home_secret_visible) == False ]] ||
        why+="/home is accessible (mode $(jget "$s" home_mode), $(jget "$s" home_entries) entries); "
    [[ $(jget "$s" tmp_marker_visible) == False && $(jget "$s" tmp) == writable && $(jget "$s" tmp_ino) != "$(jget "$s" host_tmp_ino)" ]] ||
        why+="/tmp is not private (marker visible: $(jget "$s" tmp_marker_visible), $(jget "$s" tmp)); "
    local figures="/proc/$(jget "$s" mainpid)/status: NoNewPrivs $nnp, Seccomp $sec, CapEff $capeff, CapBnd $capbnd, Uid $(jget "$s" Uid) (dynamic); nsenter -t MAINPID -m (as root): /etc $(jget "$s" /etc), /usr $(jget "$s" /usr), /var $(jget "$s" /var), /home mode $(jget "$s" home_mode) with $(jget "$s" home_entries) entries (the container's /home/rrcheck/secret not visible), /tmp $(jget "$s" tmp) and private (device:inode $(jget "$s" tmp_ino), the container's $(jget "$s" host_tmp_ino); its /tmp/rrcheck-marker not visible)"
    if [[ -z $why ]]; then pass sandbox "$figures"; else fail sandbox "${why}$figures"; fi
}

check_security() {
    local out level
    out=$(cx 20 systemd-analyze security radio-relay.service --no-pager 2>&1)
    level=$(grep -m1 'Overall exposure level' <<<"$out" | sed 's/^[^O]*//')
    local n=$(awk '/Overall exposure level/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) { print $i; exit } }' <<<"$out")
    if [[ -n $n ]] && awk -v n="$n" 'BEGIN { exit !(n <= 1.2) }'; then
        pass security "systemd-analyze security radio-relay.service (the loaded unit, drop-ins included): ${level} (limit 1.2)"
    else
        fail security "${level:-no rating: $(tail -n 2 <<<"$out" | tr '\n' ' ')} (limit 1.2)"
    fi
}

# self-contained: ldd on the host names no Swift runtime; in the container (no /opt) --version runs and the demo
# plays the sample installed in /usr/share/radio-relay.
check_self_contained() {
    local lddout swiftlibs ver rc why="" d
    lddout=$(ldd "$BIN" 2>&1)
    swiftlibs=$(awk '$1 ~ /^(libswift|libFoundation|lib_FoundationICU|libicu|libdispatch|libBlocksRuntime)/ || $3 ~ /^\/opt\// { printf "%s ", $1 }' <<<"$lddout")
    local nlibs=$(grep -c '=>' <<<"$lddout")
    ver=$(cx 10 /usr/bin/radio-relay --version 2>&1)
    rc=$?
    ver=$(tr '\n' ' ' <<<"$ver" | sed 's/ *$//')
    d=$(helper 20 demo 8123)
    [[ -n $swiftlibs ]] && why+="ldd lists the Swift toolchain's runtime: $swiftlibs; "
    [[ $rc != 0 ]] && why+="in the container (no /opt) --version exits $rc: $ver; "
    [[ $(jget "$d" result) == ok ]] || why+="the demo (radio-relay --port 8123): client ${d:+$(jget "$d" result)}, log: $(jget "$d" first_line); "
    [[ $(jget "$d" sample) == /usr/share/radio-relay/demo.mp3 ]] ||
        why+="the demo does not play /usr/share/radio-relay/demo.mp3 ('$(jget "$d" sample)'); "
    if [[ -z $why ]]; then
        pass self-contained "ldd: $nlibs libraries, none from /opt nor libswift*/libFoundation*/libicu*; in the container without /opt: $ver; 'radio-relay --port 8123' (no upstream) served OggS within $(jget "$d" t_first) s, playing $(jget "$d" sample)"
    else
        fail self-contained "${why%; }"
    fi
}

# check_reload NAME STATION FIELD WANT LISTEN_PORT DESCRIPTION
check_reload() {
    local name=$1 st=$2 field=$3 want=$4 port=$5 what=$6 r why=""
    r=$(helper 30 reload "$STATUS_PORT" "$st" "$field" "$want" "$port")
    if [[ -z $r ]]; then fail "$name" "the measurement gave no answer"; return; fi
    [[ $(jget "$r" rc) == 0 ]] || why+="systemctl reload failed: $(jget "$r" err); "
    [[ $(jget "$r" oldpid) == "$(jget "$r" newpid)" ]] || why+="MainPID changed ($(jget "$r" oldpid) -> $(jget "$r" newpid)); "
    [[ -n $(jget "$r" seen) ]] || why+="/status.json never showed $st $field = $want (still '$(jget "$r" now)'); "
    [[ $(jget "$r" listener) == ok && $(jget "$r" after_bytes) -gt 0 ]] ||
        why+="the listener on $port connected before the reload: $(jget "$r" listener), $(jget "$r" after_bytes) bytes in the second after it; "
    RELOAD_FIGURES="$what; systemctl reload: rc $(jget "$r" rc) in $(jget "$r" secs) s, MainPID $(jget "$r" oldpid) -> $(jget "$r" newpid); /status.json $st $field: '$(jget "$r" was)' -> '$(jget "$r" now)' after $(jget "$r" seen) s; a listener on :$port connected before it got $(jget "$r" after_bytes) bytes in the second after; log: $(jget "$r" log)"
    RELOAD_WHY=$why
}

check_watchdog() {
    local w err gone fire new
    w=$(helper 45 watchdog 20 "$SOCK_PORT" 0.05 8)
    err=$(jget "$w" error)
    if [[ -z $w ]]; then fail watchdog "the measurement gave no answer"; return; fi
    if [[ -n $err ]]; then fail watchdog "$err"; return; fi
    /usr/bin/python3 -c 'import json, sys; [print("INFO timeline: " + l) for l in json.loads(sys.argv[1])["timeline"]]' "$w"
    gone=$(jget "$w" gone) fire=$(jget "$w" fire) new=$(jget "$w" new)
    local limit=$((WATCHDOG_SEC + RESTART_SEC + 1))
    local refused=$(jget "$w" counts.refused) ok=$(jget "$w" counts.ok) total=$(jget "$w" connections)
    refused=${refused:-0} ok=${ok:-0}
    local figures="SIGSTOP to PID $(jget "$w" oldpid); watchdog fired at ${fire:-never} s, old process gone at ${gone:-never} s ($(jget "$w" exit_msg)), new PID $(jget "$w" newpid) active at ${new:-never} s (limit ${limit} s = WatchdogSec $WATCHDOG_SEC + RestartSec $RESTART_SEC + 1); connections to :$SOCK_PORT every 50 ms meanwhile: $total, refused $refused, OggS $ok (the slowest after $(jget "$w" slowest) s, waiting in the socket's backlog)"
    local verdict
    verdict=$(awk -v n="$new" -v f="$fire" -v g="$gone" -v lim="$limit" 'BEGIN {
        if (n == "") { print "no new process became active within 20 s; "; exit }
        if (f == "" || g == "") { print "no \"Watchdog timeout\" in the journal or the old process never went away; "; exit }
        if (n + 0 > lim) printf "new process active after %.2f s > %d s; ", n, lim
        if (g - f >= 2) printf "old process lingered %.2f s after the watchdog (>= 2 s); ", g - f }')
    [[ $refused != 0 ]] && verdict+="$refused connections refused; "
    [[ $ok != "$total" ]] && verdict+="$((total - ok)) connections without OggS ($(jget "$w" counts)); "
    if [[ -z $verdict ]]; then pass watchdog "$figures"; else fail watchdog "${verdict}$figures"; fi
}

check_restart() {
    local r err refused hung ok total other
    r=$(helper 60 restart "$SOCK_PORT" 4 0.05 5 1)
    if [[ -z $r ]]; then fail socket-keeps-port "the measurement gave no answer"; return; fi
    err=$(jget "$r" error)
    if [[ -n $err ]]; then fail socket-keeps-port "$err"; return; fi
    read -r total ok refused hung other < <(/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1]); c = d["counts"]
print(d["connections"], c.get("ok", 0), c.get("refused", 0), c.get("hung", 0),
      sum(v for k, v in c.items() if k not in ("ok", "refused", "hung")))' "$r")
    local figures="$total connections every 50 ms for 4 s around 'systemctl restart' (rc $(jget "$r" restart_rc), $(jget "$r" restart_secs) s): refused $refused, hung $hung, ok $ok"
    [[ $other != 0 ]] && figures+=", other $other ($(jget "$r" counts))"
    figures+="; MainPID $(jget "$r" oldpid) -> $(jget "$r" newpid)"
    local pn=$(jget "$r" probe_n) pr=$(jget "$r" probe_refused)
    figures+="; fast probe (a connect every 1 ms during the restart): $pr of $pn refused"
    local changes=$(jget "$r" listen_changes)
    if [[ $changes == 0 ]]; then
        figures+="; the listening socket stayed open (inode $(jget "$r" listen_before), sampled every 2 ms)"
    else
        figures+="; the listening socket was closed and reopened (inode $(jget "$r" listen_before) -> $(jget "$r" listen_after))"
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
    if [[ -z $why ]]; then pass socket-keeps-port "$figures"; else fail socket-keeps-port "${why}$figures"; fi
}

check_stop() {
    local s why=""
    s=$(helper 30 stop)
    if [[ -z $s ]]; then fail stop "the measurement gave no answer"; return; fi
    [[ $(jget "$s" rc) == 0 ]] || why+="systemctl stop exited $(jget "$s" rc); "
    [[ $(jget "$s" active) == inactive ]] || why+="the service is $(jget "$s" active); "
    [[ $(jget "$s" result) == success ]] || why+="Result=$(jget "$s" result); "
    [[ $(jget "$s" code) == 1 && $(jget "$s" status) == 0 ]] || why+="the process did not exit 0 (code $(jget "$s" code), status $(jget "$s" status)); "
    local figures="systemctl stop radio-relay (SIGTERM to PID $(jget "$s" oldpid)): $(jget "$s" secs) s, $(jget "$s" state), Result=$(jget "$s" result); log: '$(jget "$s" first)' ... '$(jget "$s" last)'"
    if [[ -z $why ]]; then pass stop "$figures"; else fail stop "${why}$figures"; fi
}

# The maintainer scripts' fresh install: `postinst configure` reloads systemd and enables and starts nothing.
check_postinst() {
    local cursor reloads out rc why="" states
    cursor=$(cx 5 journalctl -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
    out=$(maint postinst configure)
    rc=$?
    # systemd's own "Reloading." (252; later versions add "Reloading finished in N ms.") after the script started.
    reloads=$(cx 5 journalctl --no-pager -o cat --after-cursor="$cursor" _PID=1 | grep -m1 '^Reloading')
    states=$(cx 5 sh -c 'for u in radio-relay.service radio-relay.socket; do
        printf "%s %s %s %s\n" "$u" "$(systemctl is-enabled $u 2>&1)" "$(systemctl is-active $u 2>&1)" \
            "$(systemctl show -p FragmentPath --value $u)"; done')
    [[ $rc == 0 ]] || why+="postinst configure exited $rc: $out; "
    [[ -n $reloads ]] || why+="systemd did not reload its units (no 'Reloading' in its journal); "
    grep -q ' enabled' <<<"$states" && why+="a unit was enabled; "
    grep -Eq ' (active|activating)' <<<"$states" && why+="a unit was started; "
    local n=0
    while read -r u en ac path; do
        [[ $path == /lib/systemd/system/$u ]] || why+="$u is loaded from '$path', not /lib/systemd/system; "
        n=$((n + 1))
    done <<<"$states"
    local figures="postinst configure: exit $rc${out:+ ($out)}, systemd: '${reloads:-no reload}'; $(sed 's/$/;/' <<<"$states" | tr '\n' ' ')"
    if [[ -z $why ]]; then pass postinst "${figures%; } (nothing enabled, nothing started)"; else fail postinst "${why}$figures"; fi
}

# Boot 2: an upgrade's postinst restarts the running service; prerm remove stops both units; postrm purge removes
# the enablement links `systemctl enable` made.
check_maintainer_scripts() {
    local why="" out rc pid0 pid1 states links_before links_after
    pid0=$(cx 5 systemctl show -p MainPID --value radio-relay.service)
    out=$(maint postinst configure 0.0.0)
    rc=$?
    pid1=$(cx 5 systemctl show -p MainPID --value radio-relay.service)
    [[ $rc == 0 ]] || why+="postinst configure 0.0.0 exited $rc: $out; "
    [[ $pid1 != 0 && $pid1 != "$pid0" ]] || why+="the upgrade did not restart the running service (MainPID $pid0 -> $pid1); "
    local figures="upgrade (postinst configure 0.0.0): exit $rc, MainPID $pid0 -> $pid1"
    out=$(maint prerm remove)
    rc=$?
    states=$(cx 5 sh -c 'echo "service $(systemctl is-active radio-relay.service), socket $(systemctl is-active radio-relay.socket)"')
    local c=$(helper 10 client "$SOCK_PORT" 2)
    [[ $rc == 0 ]] || why+="prerm remove exited $rc: $out; "
    [[ $states == "service inactive, socket inactive" ]] || why+="after prerm remove: $states; "
    [[ $(jget "$c" result) == refused ]] || why+="port $SOCK_PORT still open after prerm remove ($(jget "$c" result)); "
    figures+="; prerm remove: exit $rc, $states, :$SOCK_PORT $(jget "$c" result)"
    out=$(maint postrm remove)
    rc=$?
    [[ $rc == 0 ]] || why+="postrm remove exited $rc: $out; "
    figures+="; postrm remove: exit $rc"
    links_before=$(find "$STAGE2/etc/systemd/system" -name 'radio-relay.*' -type l -path '*.wants/*' -printf '%P -> %l, ' 2>/dev/null)
    out=$(maint postrm purge)
    rc=$?
    links_after=$(find "$STAGE2/etc/systemd/system" -name 'radio-relay.*' -type l -path '*.wants/*' -printf '%P ' 2>/dev/null)
    [[ $rc == 0 ]] || why+="postrm purge exited $rc: $out; "
    [[ -n $links_before ]] || why+="no enablement link before the purge (the operator's enable made none?); "
    [[ -z $links_after ]] || why+="links left after postrm purge: $links_after; "
    local dropins=$(find "$STAGE2/etc/systemd/system/radio-relay.service.d" -name '*.conf' -printf '%f ' 2>/dev/null)
    figures+="; postrm purge: exit $rc, removed ${links_before%, }; left ${links_after:-no link}, the drop-ins (${dropins% }) and /etc/radio-relay/jazz-upstream kept"
    if [[ -z $why ]]; then pass maintainer-scripts "$figures"; else fail maintainer-scripts "${why}$figures"; fi
}

check_cleanup() {
    local why="" p
    for p in "${NSPAWN_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && why+="nspawn $p still runs; "; done
    local left
    left=$(pgrep -f "systemd-nspawn .*--machine=rrcheck-$$-" 2>/dev/null | tr '\n' ' ')
    [[ -n $left ]] && why+="nspawn processes left: $left; "
    local mounts=$(findmnt -rn -o TARGET | grep -c "^$WORK")
    [[ $mounts == 0 ]] || why+="$mounts mounts under $WORK; "
    local cgs=""
    for p in "${CG_ROOTS[@]}"; do cgs+=$(find "$p" -maxdepth 1 -name "rrcheck-$$-*" -printf '%p ' 2>/dev/null); done
    [[ -z $cgs ]] || why+="cgroups left: $cgs; "
    local prop=$(find /run/systemd/nspawn/propagate -maxdepth 1 -name "rrcheck-$$-*" 2>/dev/null | wc -l)
    [[ $prop == 0 ]] || why+="$prop nspawn propagation directories left; "
    if [[ -z $why ]]; then
        pass cleanup "${#NSPAWN_PIDS[@]} containers stopped: no process, no mount under $WORK, no cgroup rrcheck-$$-* in ${CG_ROOTS[*]}"
    else
        fail cleanup "${why%; }"
    fi
}

# ---------------------------------------------------------------------------------------------------------------
check_package

# Boot 1: a fresh install, as the operator then uses it, with the example config's access log turned on.
STAGE1=$WORK/stage1
stage "$STAGE1"
sed -i 's|^# access_log = |access_log = |' "$STAGE1/etc/radio-relay/radio-relay.conf"
if boot install "$STAGE1"; then
    info boot "systemd $(cx 5 systemctl --version | awk 'NR == 1 { print $2 }') in systemd-nspawn is $BOOT_STATE after ${BOOT_SECS} s; /usr: the package over the host's, read-only; drop-ins: WatchdogSec=$WATCHDOG_SEC, LoadCredential=jazz-upstream${POLICY_HIDDEN:+; the /usr/sbin/policy-rc.d of the host hidden}"
    check_postinst
    enable_out=$(cx 30 systemctl enable --now radio-relay.socket radio-relay.service 2>&1)
    info enable "systemctl enable --now radio-relay.socket radio-relay.service: $(tr '\n' ' ' <<<"$enable_out" | sed 's/ *$//')"
    check_units_active units-active
    check_ogg ogg-socket-port "$SOCK_PORT" "station $SOCK_STATION, socket unit"
    check_ogg ogg-service-port "$OTHER_PORT" "station $OTHER_STATION, bound by the service"
    check_access_log
    check_logrotate
    check_health
    check_sandbox
    check_security
    check_self_contained

    # reload: the other station's bitrate, edited in the config.
    old_kbps=${OTHER_BITRATE%k}
    [[ $old_kbps =~ ^[0-9]+$ ]] || old_kbps=96
    new_kbps=$((old_kbps == 64 ? 56 : 64))
    set_station_key "$STAGE1/etc/radio-relay/radio-relay.conf" "$OTHER_STATION" bitrate "${new_kbps}k"
    check_reload reload "$OTHER_STATION" opus_bitrate "$((new_kbps * 1000))" "$OTHER_PORT" \
        "config: [station $OTHER_STATION] bitrate = ${OTHER_BITRATE} -> ${new_kbps}k"
    if [[ -z $RELOAD_WHY ]]; then pass reload "$RELOAD_FIGURES"; else fail reload "${RELOAD_WHY}$RELOAD_FIGURES"; fi

    # credential: the socket station's upstream from the credential, by a reload.
    set_station_key "$STAGE1/etc/radio-relay/radio-relay.conf" "$SOCK_STATION" upstream "@credential:jazz-upstream"
    check_reload credential "$SOCK_STATION" upstream_url "$CRED_SHOWN" "$SOCK_PORT" \
        "drop-in LoadCredential=jazz-upstream:/etc/radio-relay/jazz-upstream (a URL with a password and a token), config: [station $SOCK_STATION] upstream = @credential:jazz-upstream"
    seen=$(helper 15 secret "$STATUS_PORT" "$SECRET_PW" "$SECRET_TOKEN")
    found=$(jget "$seen" found_in | tr -d '[]"')
    [[ -z $seen ]] && RELOAD_WHY+="could not look for the password; "
    [[ -n $found ]] && RELOAD_WHY+="the password or token is shown in: $found; "
    if [[ -z $RELOAD_WHY ]]; then
        pass credential "$RELOAD_FIGURES; the password and token appear in none of /status.json, /metrics, the journal"
    else
        fail credential "${RELOAD_WHY}$RELOAD_FIGURES"
    fi

    check_watchdog
    check_restart
    check_stop
else
    for n in postinst units-active ogg-socket-port ogg-service-port access-log logrotate health sandbox security self-contained reload \
        credential watchdog socket-keeps-port stop; do
        fail "$n" "container did not boot: $BOOT_ERR"
    done
fi
stop_container

# Boot 2: a reboot with the units enabled (the links boot 1's `systemctl enable` wrote), the shipped config again, and
# a drop-in clearing the socket's FileDescriptorName= (systemd then names it radio-relay.socket).
STAGE2=$WORK/stage2
mkdir -p "$STAGE2"
cp -a "$STAGE1/etc" "$STAGE2/"
cp -a "$PKG/etc/radio-relay/radio-relay.conf" "$STAGE2/etc/radio-relay/radio-relay.conf"
/usr/bin/python3 -c 'import uuid; print(uuid.uuid4().hex)' > "$STAGE2/machine-id"
mkdir -p "$STAGE2/etc/systemd/system/radio-relay.socket.d"
printf '[Socket]\nFileDescriptorName=\n' > "$STAGE2/etc/systemd/system/radio-relay.socket.d/default-name.conf"
if boot reboot "$STAGE2"; then
    a=$(helper 15 active 10)
    c=$(helper 10 client "$SOCK_PORT" 5)
    figures="after boot ($BOOT_SECS s): service $(jget "$a" is_active) ($(jget "$a" service_enabled)), socket $(jget "$a" socket) ($(jget "$a" socket_enabled)), FileDescriptorName=$(jget "$a" fdname); client on :$SOCK_PORT got $(jget "$c" head) after $(jget "$c" t_first) s; socket held by $(jget "$c" holders | tr -d '[]"')"
    why=""
    [[ $(jget "$a" is_active) == active && $(jget "$a" socket) == active/* ]] || why+="not both active at boot; "
    [[ $(jget "$a" fdname) == radio-relay.socket ]] || why+="the drop-in did not clear FileDescriptorName=; "
    [[ $(jget "$c" result) == ok ]] || why+="client: $(jget "$c" result); "
    if [[ -z $why ]]; then pass enabled-at-boot "$figures"; else fail enabled-at-boot "${why}$figures${a:+; $(jget "$a" log)}"; fi
    check_maintainer_scripts
else
    fail enabled-at-boot "container did not boot: $BOOT_ERR"
    fail maintainer-scripts "container did not boot: $BOOT_ERR"
fi
stop_container
check_cleanup

echo "$PASSED passed, $FAILED failed"
echo "systemd-check: $(since "$T_START") s" >&2
[[ $FAILED -eq 0 ]]
