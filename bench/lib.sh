# Shared by the bench scripts (sourced): the release binaries they need, and the packages (.ci/deps --bench).

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

# relay_binary: the radio-relay a bench runs: $RADIO_RELAY when set, else the static release build when there is one
# (what the package ships), else the plain release build.
relay_binary() {
    if [[ -n ${RADIO_RELAY:-} ]]; then
        echo "$RADIO_RELAY"
    elif [[ -x $REPO_ROOT/.build-static/release/radio-relay ]]; then
        echo "$REPO_ROOT/.build-static/release/radio-relay"
    else
        echo "$REPO_ROOT/.build/release/radio-relay"
    fi
}

# install_bench_tools: what every bench compares against or measures with (apt-get, only when missing).
install_bench_tools() {
    "$REPO_ROOT/.ci/deps" --bench
}

# bench_stop_pid PID: stops a process this script started, by its PID: SIGTERM, up to 5 s, then SIGKILL.
bench_stop_pid() {
    local pid=$1
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}

# bench_free_port: a TCP port on 127.0.0.1 that nothing listens on right now.
bench_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# port_busy PORT: something listens on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

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

# median VALUE...: the middle value (the mean of the two middle ones for an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# thread_ticks PID PATTERN: utime + stime of the threads whose name matches PATTERN, in clock ticks.
thread_ticks() {
    local sum=0 task name ticks
    for task in /proc/"$1"/task/*; do
        name=$(cat "$task/comm" 2>/dev/null) || continue
        [[ $name == $2 ]] || continue
        ticks=$(awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "$task/stat" 2>/dev/null) \
            || continue
        sum=$((sum + ticks))
    done
    echo "$sum"
}

# process_ticks PID: utime + stime of the whole process (every thread, ended ones included), in clock ticks.
process_ticks() {
    awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat"
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
