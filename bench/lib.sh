# Shared by the bench scripts, sourced first: source "$(dirname "${BASH_SOURCE[0]}")/lib.sh".
#
# It sets REPO_ROOT (the repository), BENCH_START_DIR (the directory the script was started from: relative paths in
# the environment are taken from there), BENCH_NAME (the script's name, the prefix of die and say) and CLK_TCK (clock
# ticks per second), and defines:
#   messages     die, say
#   options      bench_defaults (environment variables' defaults), require_int
#   binaries     abs_path, relay_binary ($RADIO_RELAY, else the static release build, else the release build),
#                load_binary (the same for radio-relay-load: $LOAD), require_binaries, relay_version
#   tools        install_bench_tools (.ci/deps --bench), need_tools, require_tools, require_python, raise_nofile,
#                need_nofile
#   processes    bench_track, bench_stop_pid, bench_stop, bench_tmpdir, bench_traps (the EXIT/INT/TERM traps that stop
#                every tracked process by its PID and remove the temporary directory)
#   waiting      wait_until (a condition with a deadline), port_busy, bench_free_port, icecast_mounted
#   /proc        process_ticks, process_sys_ticks, thread_ticks, thread_table, proc_status_kb
#   figures      calc, median, load_field (a figure of a radio-relay-load JSON report)
#   context      machine, cpu_model, loadavg
#   Icecast      bench_icecast_config, start_icecast
# Every process a script starts is tracked (or stopped by the script itself) and stopped by its PID, never by name.

REPO_ROOT=${REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BENCH_START_DIR=${BENCH_START_DIR:-$PWD}
BENCH_NAME=${BENCH_NAME:-$(basename "$0" .sh)}
CLK_TCK=$(getconf CLK_TCK)

# ---------------------------------------------------------------- messages

# die MESSAGE: "NAME: error: MESSAGE" on stderr, exit 1.
die() { echo "$BENCH_NAME: error: $*" >&2; exit 1; }

# say MESSAGE: "NAME: MESSAGE" on stderr.
say() { echo "$BENCH_NAME: $*" >&2; }

# bench_defaults NAME=VALUE...: each NAME that is unset or empty in the environment set to its VALUE.
bench_defaults() {
    local pair name
    for pair in "$@"; do
        name=${pair%%=*}
        [[ -n ${!name:-} ]] || printf -v "$name" '%s' "${pair#*=}"
    done
}

# require_int [--positive] NAME...: dies unless each variable NAME holds a whole number (--positive: above 0).
require_int() {
    local pattern='^[0-9]+$' what="a whole number" name
    if [[ $1 == --positive ]]; then pattern='^[1-9][0-9]*$' what="a positive integer"; shift; fi
    for name in "$@"; do
        [[ ${!name} =~ $pattern ]] || die "$name must be $what (got '${!name}')"
    done
}

# ---------------------------------------------------------------- binaries

# abs_path PATH: PATH, taken from the directory the script was started in when it is relative.
abs_path() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$BENCH_START_DIR/$1" ;; esac; }

# relay_binary: the radio-relay a bench runs: $RADIO_RELAY when set, else the static release build when there is one
# (what the package ships), else the plain release build.
relay_binary() {
    if [[ -n ${RADIO_RELAY:-} ]]; then
        abs_path "$RADIO_RELAY"
    elif [[ -x $REPO_ROOT/.build-static/release/radio-relay ]]; then
        echo "$REPO_ROOT/.build-static/release/radio-relay"
    else
        echo "$REPO_ROOT/.build/release/radio-relay"
    fi
}

# load_binary: the load tool, radio-relay-load: $LOAD when set, else the static release build when there is one, else
# the plain release build.
load_binary() {
    if [[ -n ${LOAD:-} ]]; then
        abs_path "$LOAD"
    elif [[ -x $REPO_ROOT/.build-static/release/radio-relay-load ]]; then
        echo "$REPO_ROOT/.build-static/release/radio-relay-load"
    else
        echo "$REPO_ROOT/.build/release/radio-relay-load"
    fi
}

# require_binaries PRODUCT:PATH ...: exits with the build command for each one that is missing.
require_binaries() {
    local missing=0 pair product path
    for pair in "$@"; do
        product=${pair%%:*} path=${pair#*:}
        if [[ ! -x $path ]]; then
            echo "error: $product not found or not executable: $path" >&2
            echo "    build it (from $REPO_ROOT): swift build -c release --product $product" >&2
            missing=1
        fi
    done
    ((missing == 0)) || exit 1
}

# relay_version BINARY: the first line of BINARY --version.
relay_version() { "$1" --version 2>&1 | head -1; }

# ---------------------------------------------------------------- tools and limits

# install_bench_tools: what every bench compares against or measures with (apt-get, only when missing).
install_bench_tools() {
    "$REPO_ROOT/.ci/deps" --bench
}

# need_tools TOOL...: install_bench_tools when one of them is not on PATH.
need_tools() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { install_bench_tools; return; }
    done
}

# require_tools PACKAGES TOOL...: dies when a TOOL is not on PATH, naming the Debian PACKAGES that hold them.
require_tools() {
    local packages=$1 tool
    shift
    for tool in "$@"; do
        command -v "$tool" >/dev/null || die "$tool is missing (Debian: $packages)"
    done
}

# require_python PYTHON MINOR: dies unless PYTHON is Python 3.MINOR or newer.
require_python() {
    "$1" -c "import sys; sys.exit(sys.version_info < (3, $2))" || die "$1 must be Python 3.$2 or newer"
}

# raise_nofile [LIMIT]: the open-file limit raised to LIMIT (default: the hard limit), or to the hard limit when
# LIMIT is above it.
raise_nofile() { ulimit -n "${1:-$(ulimit -Hn)}" 2>/dev/null || ulimit -n "$(ulimit -Hn)"; }

# need_nofile COUNT WHAT: dies when the open-file limit is below COUNT ("open-file limit L is below WHAT").
need_nofile() { (($(ulimit -n) >= $1)) || die "open-file limit $(ulimit -n) is below $2"; }

# ---------------------------------------------------------------- processes, by PID

BENCH_PIDS=()       # the processes started here that bench_traps stops on exit, in reverse order
BENCH_TMP=""        # a temporary directory removed on exit (bench_tmpdir)
BENCH_TMP_KEEP=0    # 1: KEEP_TMP=1 keeps it (bench_tmpdir --keepable)

# bench_track PID...: stopped by PID on exit unless bench_stop stopped it before.
bench_track() { BENCH_PIDS+=("$@"); }

# bench_stop_pid PID: stops a process this script started, by its PID: SIGTERM, up to 5 s, then SIGKILL.
bench_stop_pid() {
    local pid=$1
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}

# bench_stop PID...: each one stopped (bench_stop_pid), waited for and no longer tracked.
bench_stop() {
    local pid i
    for pid in "$@"; do
        [[ -n $pid ]] || continue
        bench_stop_pid "$pid"
        wait "$pid" 2>/dev/null || true
        for i in "${!BENCH_PIDS[@]}"; do [[ ${BENCH_PIDS[i]} != "$pid" ]] || unset 'BENCH_PIDS[i]'; done
    done
    BENCH_PIDS=("${BENCH_PIDS[@]}")
}

# bench_tmpdir [--keepable] PREFIX: BENCH_TMP=/tmp/PREFIX.XXXXXX, removed on exit (--keepable: kept with KEEP_TMP=1).
bench_tmpdir() {
    if [[ $1 == --keepable ]]; then BENCH_TMP_KEEP=1; shift; fi
    BENCH_TMP=$(mktemp -d "/tmp/$1.XXXXXX")
}

# bench_exit: the EXIT trap: every tracked process stopped by its PID (the last started first) and waited for, then
# bench_on_exit when the script defines one (what else it must stop), then the temporary directory is removed; exits
# with the script's status.
bench_exit() {
    local status=$? i
    trap - EXIT INT TERM
    for ((i = ${#BENCH_PIDS[@]} - 1; i >= 0; i--)); do bench_stop_pid "${BENCH_PIDS[i]}"; done
    for i in "${BENCH_PIDS[@]}"; do wait "$i" 2>/dev/null || true; done
    if declare -F bench_on_exit >/dev/null; then bench_on_exit || true; fi
    if [[ -n $BENCH_TMP ]]; then
        if ((BENCH_TMP_KEEP)) && [[ ${KEEP_TMP:-0} == 1 ]]; then say "kept $BENCH_TMP"; else rm -rf "$BENCH_TMP"; fi
    fi
    exit "$status"
}

# bench_traps: bench_exit on exit; INT exits 130, TERM 143 (through bench_exit).
bench_traps() {
    trap bench_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# ---------------------------------------------------------------- waiting and ports

# wait_until SECONDS PID COMMAND...: polls COMMAND every 0.1 s while PID lives; fails after SECONDS.
wait_until() {
    local deadline=$((SECONDS + $1)) pid=$2
    shift 2
    while ((SECONDS < deadline)); do
        kill -0 "$pid" 2>/dev/null || return 1
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# bench_free_port: a TCP port on 127.0.0.1 that nothing listens on right now.
bench_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# port_busy PORT: something listens on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# icecast_mounted PORT PASSWORD MOUNT: Icecast on 127.0.0.1:PORT lists MOUNT (/name) among its mounts.
icecast_mounted() {
    curl -fsS -m 2 -u "admin:$2" "http://127.0.0.1:$1/admin/listmounts" 2>/dev/null | grep -q "mount=\"$3\""
}

# ---------------------------------------------------------------- CPU and memory from /proc

# process_ticks PID: utime + stime of the whole process (every thread, ended ones included), in clock ticks.
process_ticks() {
    awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat"
}

# process_sys_ticks PID: stime alone (the kernel's part).
process_sys_ticks() {
    awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[13] }' "/proc/$1/stat"
}

# thread_ticks PID PATTERN: utime + stime of the threads whose name matches PATTERN (extglob), in clock ticks.
thread_ticks() {
    local sum=0 task name ticks
    for task in /proc/"$1"/task/*; do
        name=$(cat "$task/comm" 2>/dev/null) || continue
        # shellcheck disable=SC2053  # a pattern on purpose
        [[ $name == $2 ]] || continue
        ticks=$(awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "$task/stat" 2>/dev/null) \
            || continue
        sum=$((sum + ticks))
    done
    echo "$sum"
}

# thread_table PID: one line per thread, "TID NAME TICKS" (utime + stime; spaces in the name become _).
thread_table() {
    local task
    for task in /proc/"$1"/task/*; do
        awk -v tid="${task##*/}" '{ s = $0; n = $0; sub(/^[^(]*\(/, "", n); sub(/\) .*$/, "", n); gsub(/ /, "_", n)
            sub(/^.*\) /, "", s); split(s, f, " "); print tid, n, f[12] + f[13] }' "$task/stat" 2>/dev/null || true
    done
}

# proc_status_kb PID KEY: a kB figure of /proc/PID/status (VmRSS, VmHWM, ...).
proc_status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# ---------------------------------------------------------------- figures

# calc EXPRESSION [DECIMALS]: awk's value of EXPRESSION, with DECIMALS (2) decimals.
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }

# median [-f FORMAT] VALUE...: the middle value (the mean of the two middle ones for an even count, printed with
# FORMAT when given, else as awk prints a number); without a VALUE, the values on stdin, one a line.
median() {
    local format=""
    if [[ ${1:-} == -f ]]; then format=$2; shift 2; fi
    { if (($#)); then printf '%s\n' "$@"; else cat; fi; } | sort -g | awk -v fmt="$format" '{ a[NR] = $1 }
        END { if (NR % 2) print a[(NR + 1) / 2]; else if (fmt != "") printf fmt "\n", (a[NR / 2] + a[NR / 2 + 1]) / 2;
              else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# load_field FILE EXPRESSION: a figure of a radio-relay-load JSON report (jq), numbers rounded to 0.1; "-" when absent.
load_field() { jq -r "$2 | if . == null then \"-\" elif type == \"number\" then ((. * 10 | round) / 10) else . end" "$1"; }

# ---------------------------------------------------------------- context

# machine: "KERNEL RELEASE, N cores".
machine() { echo "$(uname -sr), $(nproc) cores"; }

# cpu_model: the CPU's model name.
cpu_model() { awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo; }

# loadavg: the load averages over 1, 5 and 15 minutes.
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# ---------------------------------------------------------------- Icecast

# start_icecast DIR PORT: Debian's icecast2 with DIR/icecast.xml (bench_icecast_config), tracked, its PID in ICE_PID;
# dies with its logs when it does not listen on 127.0.0.1:PORT within 15 s.
start_icecast() {
    icecast2 -c "$1/icecast.xml" >"$1/icecast.out" 2>&1 &
    ICE_PID=$!
    bench_track "$ICE_PID"
    wait_until 15 "$ICE_PID" port_busy "$2" || {
        cat "$1/icecast.out" "$1/icecast-log/error.log" >&2 2>/dev/null
        die "Icecast did not start listening on $2"
    }
}

# bench_icecast_config DIR PORT PASSWORD CLIENTS BURST_BYTES QUEUE_BYTES: writes DIR/icecast.xml, a config for Debian's
# icecast2 on 127.0.0.1:PORT (source and admin password PASSWORD, logs in DIR/icecast-log), readable by the icecast2
# user it switches to. DIR must be world-readable.
bench_icecast_config() {
    mkdir -p "$1/icecast-log"
    chown icecast2:icecast "$1/icecast-log"
    cat >"$1/icecast.xml" <<EOF
<icecast>
    <location>loopback bench</location>
    <admin>bench@localhost</admin>
    <limits>
        <clients>$4</clients>
        <sources>2</sources>
        <queue-size>$6</queue-size>
        <client-timeout>30</client-timeout>
        <header-timeout>15</header-timeout>
        <source-timeout>10</source-timeout>
        <burst-on-connect>1</burst-on-connect>
        <burst-size>$5</burst-size>
    </limits>
    <authentication>
        <source-password>$3</source-password>
        <relay-password>$3</relay-password>
        <admin-user>admin</admin-user>
        <admin-password>$3</admin-password>
    </authentication>
    <hostname>127.0.0.1</hostname>
    <listen-socket>
        <port>$2</port>
        <bind-address>127.0.0.1</bind-address>
    </listen-socket>
    <fileserve>1</fileserve>
    <paths>
        <basedir>/usr/share/icecast2</basedir>
        <logdir>$1/icecast-log</logdir>
        <webroot>/usr/share/icecast2/web</webroot>
        <adminroot>/usr/share/icecast2/admin</adminroot>
        <alias source="/" destination="/status.xsl"/>
    </paths>
    <logging>
        <accesslog>access.log</accesslog>
        <errorlog>error.log</errorlog>
        <loglevel>2</loglevel>
        <logsize>100000</logsize>
    </logging>
    <security>
        <chroot>0</chroot>
        <!-- Icecast refuses to run as root: it binds, then switches to Debian's icecast2 user. -->
        <changeowner>
            <user>icecast2</user>
            <group>icecast</group>
        </changeowner>
    </security>
</icecast>
EOF
    chmod 644 "$1/icecast.xml"
}
