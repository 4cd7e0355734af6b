#!/usr/bin/env bash
# HLS clients against Ogg listeners, and a cache in front: one radio-relay serving its demo station on an HTTP
# address, loaded in turn, in the same run, for RAMP + DURATION s each, with
#   ogg     N Ogg listeners over HTTP (radio-relay-load --http /main.opus);
#   hls     N HLS players straight to the relay (bench/hls.py: one kept connection each, the playlist reloaded every
#           target duration, each new segment fetched once, from 3 segments behind the live edge);
#   cached  the same N players through nginx, a plain caching reverse proxy in front of the relay (a fresh cache
#           per run, proxy_cache_lock on, the relay's Cache-Control honoured, upstream keep-alive).
# The relay's CPU (utime + stime, /proc/PID/stat; its network loops net/net-N, HTTP front end http and pipeline
# pipe-* apart, /proc/PID/task/*) is sampled SETTLE s after the ramp and at the end: that steady window is what the
# figures are over. It prints each run, then the three side by side (medians over ROUNDS) with the ratios HLS/Ogg
# and cached/direct: CPU per listener-second (also above the relay's idle CPU, measured once before the runs),
# nginx's CPU, the client tools' CPU, bytes per listener-second on the clients' sockets and on the relay's sockets
# (ss: TCP payload received / acked), how many times the relay served each segment that first appeared in the
# window (direct: hls.py's count of fetches; cached: nginx's access log, the requests that had an upstream
# address), and every error.
#
#   bench/hls.sh                               # N=1000, 10 s ramp + 120 s per run, 1 round: about 7.5 minutes
#   N=200 DURATION=30 RUNS="hls cached" bench/hls.sh      # a quick look at the cache
#
# Environment: N (listeners per run, 1000), DURATION (s after the ramp, 120), RAMP (s to open the N connections,
# 10), SETTLE (s after the ramp before the steady window starts, 2), ROUNDS (medians over them, 1), WARMUP (s before
# anything is measured, 4), IDLE (s of the idle relay measured before the runs, 20), RUNS (which runs and in what
# order, "ogg hls cached"), NGINX_WORKERS (1), RADIO_RELAY (default the static release binary when built, else
# .build/release/radio-relay), LOAD (the same for radio-relay-load), NGINX (/usr/sbin/nginx), PYTHON (python3),
# LOG_DIR (raw logs and JSON, default bench/out/hls-DATE). Loopback only; every process started here is stopped by
# its PID; each client run is cut off at RAMP + DURATION + 60 s. Needs jq, ss (iproute2) and nginx
# (apt-get install nginx-light or nginx); `ulimit -Hn` at least N + 100.
set -euo pipefail
shopt -s extglob
export LC_ALL=C
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_defaults N=1000 DURATION=120 RAMP=10 SETTLE=2 ROUNDS=1 WARMUP=4 IDLE=20 "RUNS=ogg hls cached" NGINX_WORKERS=1 \
    NGINX=/usr/sbin/nginx PYTHON=python3 "LOG_DIR=$REPO_ROOT/bench/out/hls-$(date -u +%Y%m%d-%H%M%S)"
LOAD=$(load_binary)
require_int --positive N DURATION RAMP ROUNDS WARMUP IDLE NGINX_WORKERS
[[ $SETTLE =~ ^[0-9]+$ ]] && ((SETTLE < DURATION)) || die "SETTLE must be an integer below DURATION"
for run in $RUNS; do [[ $run == @(ogg|hls|cached) ]] || die "RUNS: unknown run '$run' (ogg, hls, cached)"; done
RR=$(relay_binary)
require_binaries "radio-relay:$RR"
[[ " $RUNS " == *" ogg "* ]] && require_binaries "radio-relay-load:$LOAD"
if [[ " $RUNS " == *" cached "* ]]; then
    [[ -x $NGINX ]] || die "nginx not found at $NGINX (apt-get install nginx-light, or set NGINX)"
fi
need_tools jq
command -v ss >/dev/null || die "ss (iproute2) is needed"
require_python "$PYTHON" 11
raise_nofile
need_nofile $((N + 100)) N+100

mkdir -p "$LOG_DIR"
bench_tmpdir hls-bench
TMP=$BENCH_TMP
chmod 755 "$TMP" # nginx's workers (www-data) write their cache and temporary files under it
RR_PID= NGX_PID= CLIENT_PID= SLEEP_PID=
bench_on_exit() { bench_stop "$SLEEP_PID" "$CLIENT_PID" "$NGX_PID" "$RR_PID"; }
bench_traps

PORT_RAW=$(bench_free_port)
PORT_HTTP=$(bench_free_port)
NGX_PORT=$(bench_free_port)
[[ $PORT_RAW != "$PORT_HTTP" && $NGX_PORT != "$PORT_RAW" && $NGX_PORT != "$PORT_HTTP" ]] \
    || die "could not pick three different free ports (run again)"
# pause SECONDS: sleep, in the background and waited for, so that INT or TERM stops the script at once (bash runs a
# trap only once the foreground command is done, and the long sleeps here last minutes).
pause() {
    sleep "$1" &
    SLEEP_PID=$!
    wait "$SLEEP_PID" || true
    SLEEP_PID=
}
# sleep_until EPOCH: sleeps until that wall-clock time ($EPOCHREALTIME's clock).
sleep_until() { pause "$(awk -v t="$1" -v n="$EPOCHREALTIME" 'BEGIN { d = t - n; printf "%.3f", (d > 0 ? d : 0) }')"; }
# ss_sum FILTER FIELD: "COUNT SUM": established TCP sockets matching FILTER and the sum of FIELD (bytes_received,
# bytes_acked) over them.
ss_sum() {
    ss -tinH state established "( $1 )" | awk -v f="$2" '
        /^[^ \t]/ { n++ }
        { if (match($0, f ":[0-9]+")) s += substr($0, RSTART + length(f) + 1, RLENGTH - length(f) - 1) }
        END { printf "%d %.0f\n", n, s }'
}
# nginx_ticks: CPU ticks of nginx's master and its current children (workers, cache manager and loader).
nginx_ticks() {
    local total=0 child
    [[ -n $NGX_PID ]] || { echo 0; return; }
    total=$(process_ticks "$NGX_PID" 2>/dev/null || echo 0)
    for child in $(cat "/proc/$NGX_PID/task/$NGX_PID/children" 2>/dev/null); do
        total=$((total + $(process_ticks "$child" 2>/dev/null || echo 0)))
    done
    echo "$total"
}
NET_THREADS="net@(|-+([0-9])|-main)"
# sample CLIENT_FILTER: one line: time, relay ticks (all, network loops, http, pipeline), client ticks, nginx ticks,
# client-side sockets and bytes received on them, relay-side sockets (on the HTTP port) and bytes acked on them.
sample() {
    local t rr net http pipe client ngx
    t=$EPOCHREALTIME
    rr=$(process_ticks "$RR_PID")
    net=$(thread_ticks "$RR_PID" "$NET_THREADS")
    http=$(thread_ticks "$RR_PID" http)
    pipe=$(thread_ticks "$RR_PID" "pipe-*")
    client=$(process_ticks "$CLIENT_PID" 2>/dev/null || echo 0)
    ngx=$(nginx_ticks)
    echo "$t $rr $net $http $pipe $client $ngx $(ss_sum "$1" bytes_received)" \
        "$(ss_sum "sport = :$PORT_HTTP" bytes_acked)"
}

# start_nginx ROUND: nginx in the foreground (daemon off), its own prefix, config and cache under $TMP, logs in
# $LOG_DIR, in front of the relay on 127.0.0.1:$NGX_PORT.
start_nginx() {
    local dir=$TMP/nginx-$1 user_line=
    mkdir -p "$dir/cache" "$dir/temp"
    if ((EUID == 0)); then
        user_line="user www-data;"
        chown -R www-data "$dir"
    fi
    cat >"$LOG_DIR/nginx-$1.conf" <<EOF
# bench/hls.sh: a plain caching reverse proxy in front of radio-relay's HTTP address.
daemon off;
master_process on;
$user_line
worker_processes $NGINX_WORKERS;
worker_rlimit_nofile $((N + 1000));
pid $dir/nginx.pid;
error_log $LOG_DIR/nginx-error-$1.log notice;
events { worker_connections $((N + 500)); }
http {
    client_body_temp_path $dir/temp/client;
    proxy_temp_path $dir/temp/proxy;
    fastcgi_temp_path $dir/temp/fastcgi;
    uwsgi_temp_path $dir/temp/uwsgi;
    scgi_temp_path $dir/temp/scgi;
    # the cache honours the relay's Cache-Control (playlists 1 s, segments 26 s, init segments a day); a 404
    # (no-cache) is not kept
    proxy_cache_path $dir/cache levels=1:2 keys_zone=hls:10m max_size=256m inactive=10m use_temp_path=off;
    log_format hls '\$msec \$status \$upstream_cache_status \$request_uri \$body_bytes_sent "\$upstream_addr"';
    upstream relay {
        server 127.0.0.1:$PORT_HTTP;
        keepalive 16;
    }
    server {
        listen 127.0.0.1:$NGX_PORT backlog=4096;
        access_log $LOG_DIR/nginx-access-$1.log hls buffer=256k flush=1s;
        location / {
            proxy_pass http://relay;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache hls;
            proxy_cache_lock on;
            proxy_cache_use_stale updating;
            add_header X-Cache-Status \$upstream_cache_status;
        }
    }
}
EOF
    "$NGINX" -t -q -p "$dir" -c "$LOG_DIR/nginx-$1.conf" -e "$LOG_DIR/nginx-error-$1.log" \
        || die "nginx refused its config: $LOG_DIR/nginx-$1.conf (see $LOG_DIR/nginx-error-$1.log)"
    "$NGINX" -p "$dir" -c "$LOG_DIR/nginx-$1.conf" -e "$LOG_DIR/nginx-error-$1.log" \
        >"$LOG_DIR/nginx-$1.out" 2>&1 &
    NGX_PID=$!
    wait_until 10 "$NGX_PID" port_busy "$NGX_PORT" || die "nginx did not start (see $LOG_DIR/nginx-error-$1.log)"
    # the cache in front answers the playlist
    curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$NGX_PORT/main/live.m3u8" \
        || die "nginx does not answer /main/live.m3u8 (see $LOG_DIR/nginx-error-$1.log)"
}

# wait_client DEADLINE: waits for the client until the wall-clock DEADLINE, then stops it; sets CLIENT_RC.
wait_client() {
    while kill -0 "$CLIENT_PID" 2>/dev/null; do
        if awk -v t="$1" -v n="$EPOCHREALTIME" 'BEGIN { exit !(n > t) }'; then
            echo "hls: the client overran its time; stopping it (PID $CLIENT_PID)" >&2
            bench_stop_pid "$CLIENT_PID"
            break
        fi
        pause 0.5
    done
    CLIENT_RC=0
    wait "$CLIENT_PID" || CLIENT_RC=$?
    CLIENT_PID=
}

# run KIND ROUND: one run; writes "key value" lines to $LOG_DIR/KIND-ROUND.vals and prints a summary line.
run() {
    local kind=$1 round=$2 out=$LOG_DIR/$1-$2 filter t0 s0 s1 vals
    vals=$out.vals
    : >"$vals"
    case $kind in
    ogg) filter="dport = :$PORT_HTTP" ;;
    hls) filter="dport = :$PORT_HTTP" ;;
    cached)
        start_nginx "$round"
        filter="dport = :$NGX_PORT"
        ;;
    esac
    t0=$EPOCHREALTIME
    if [[ $kind == ogg ]]; then
        "$LOAD" --port "$PORT_HTTP" --http /main.opus -n "$N" --duration $((RAMP + DURATION + 2)) --ramp "$RAMP" \
            --json "$out.json" >"$out.txt" 2>&1 &
    else
        local port=$PORT_HTTP
        [[ $kind == cached ]] && port=$NGX_PORT
        "$PYTHON" "$REPO_ROOT/bench/hls.py" --port "$port" --path /main/live.m3u8 -n "$N" --ramp "$RAMP" \
            --duration "$DURATION" --settle "$SETTLE" --tail 2 --json "$out.json" >"$out.txt" 2>&1 &
    fi
    CLIENT_PID=$!
    sleep_until "$(calc "$t0 + $RAMP + $SETTLE" 6)"
    s0=$(sample "$filter")
    sleep_until "$(calc "$t0 + $RAMP + $DURATION" 6)"
    s1=$(sample "$filter")
    kill -0 "$CLIENT_PID" 2>/dev/null || echo "hls: warning: the $kind client had ended before the window did" >&2
    kill -0 "$RR_PID" 2>/dev/null || die "radio-relay died during the $kind run"
    local rss
    rss=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$RR_PID/status")
    wait_client "$(calc "$t0 + $RAMP + $DURATION + 60" 6)"
    [[ -s $out.json ]] || die "the $kind client wrote no JSON (see $out.txt)"
    echo "$s0" >"$out.samples"
    echo "$s1" >>"$out.samples"
    # shellcheck disable=SC2086  # split on purpose
    set -- $s0 $s1
    local w=$(calc "${12} - $1" 3) listeners cpu
    listeners=$(calc "(${8} + ${19}) / 2" 1)
    awk -v L="$listeners" 'BEGIN { exit !(L > 0) }' || die "no client connection held in the $kind window"
    cpu() { calc "1000 * ($1) / $CLK_TCK / $w / $listeners" 4; }
    {
        echo "window_s $w"
        echo "listeners $listeners"
        echo "relay_ms $(cpu "${13} - $2")"
        echo "relay_above_idle_ms $(calc "1000 * ((${13} - $2) / $CLK_TCK / $w - $IDLE_CORES) / $listeners" 4)"
        echo "net_ms $(cpu "${14} - $3")"
        echo "http_ms $(cpu "${15} - $4")"
        echo "pipe_ms $(cpu "${16} - $5")"
        echo "relay_cores $(calc "(${13} - $2) / $CLK_TCK / $w" 3)"
        echo "client_cores $(calc "(${17} - $6) / $CLK_TCK / $w" 3)"
        echo "client_bytes $(calc "(${20} - $9) / $w / $listeners" 0)"
        echo "relay_bytes $(calc "(${22} - ${11}) / $w / $listeners" 0)"
        echo "relay_sockets ${21}"
        echo "relay_rss_mb $rss"
    } >>"$vals"
    if [[ $kind == cached ]]; then
        echo "nginx_ms $(cpu "${18} - $7")" >>"$vals"
        echo "nginx_cores $(calc "(${18} - $7) / $CLK_TCK / $w" 3)" >>"$vals"
        echo "total_ms $(cpu "${13} - $2 + ${18} - $7")" >>"$vals"
        bench_stop_pid "$NGX_PID"
        wait "$NGX_PID" 2>/dev/null || true
        NGX_PID=
        # what reached the relay: requests with an upstream address. Whole run for the segments (each distinct
        # segment once is the goal), and for those first asked for in the window, the steady window for the rates.
        awk -v t0="$1" -v t1="${12}" '
            { up = ($6 != "\"-\"") }
            $4 ~ /\.m4s$/ {
                seg++; segup += up; status[$3]++
                if (!($4 in first)) first[$4] = $1
                ups[$4] += up
            }
            $4 ~ /\.m3u8$/ { pl++; plup += up }
            $4 ~ /\.mp4$/ { ini++; iniup += up }
            $2 != 200 { non200[$2]++ }
            $1 >= t0 && $1 <= t1 {
                winup += up
                if ($4 ~ /\.m3u8$/) winplup += up
                if ($4 ~ /\.m4s$/) { wseg++; wsegup += up }
            }
            END {
                nd = 0
                for (u in first) nd++
                print "cache_segment_requests", seg + 0
                print "cache_segment_upstream", segup + 0
                print "cache_distinct_segments", nd
                printf "cache_run_requests_per_segment %.3f\n", (nd ? segup / nd : 0)
                # the segments first asked for in the window, and how often each reached the relay in all
                wnd = 0; wnu = 0
                for (u in first) if (first[u] >= t0 && first[u] <= t1) { wnd++; wnu += ups[u] }
                print "cache_window_segment_requests", wseg + 0
                print "cache_window_segment_upstream", wsegup + 0
                print "cache_new_segments", wnd
                print "cache_new_segments_upstream", wnu
                printf "relay_requests_per_segment %.3f\n", (wnd ? wnu / wnd : 0)
                print "cache_playlist_requests", pl + 0
                print "cache_playlist_upstream", plup + 0
                print "cache_init_requests", ini + 0
                print "cache_init_upstream", iniup + 0
                printf "relay_requests_per_s %.2f\n", winup / (t1 - t0)
                printf "relay_playlists_per_s %.2f\n", winplup / (t1 - t0)
                s = ""
                for (k in status) s = s k "=" status[k] " "
                print "cache_segment_statuses", (s == "" ? "-" : s)
                s = ""
                for (k in non200) s = s k "=" non200[k] " "
                print "cache_non200", (s == "" ? "none" : s)
            }' "$LOG_DIR/nginx-access-$round.log" >>"$vals"
    fi
    local json=$out.json summary
    if [[ $kind == ogg ]]; then
        local errors served
        served=$(jq '.first_audio_ms.count' "$json")
        errors=$(jq '[.ogg.crc_errors, .ogg.framing_errors, .ogg.start_errors, .ogg.serial_changes,
                      .ogg.gaps_beyond_join, .ogg.granule_regressions, .unexpected_disconnects_normal,
                      .stuck_at_end, .connect_failures, .http_refused] | map(. // 0) | add' "$json")
        {
            echo "errors $errors"
            echo "reconnects -"
            echo "served $served"
            echo "segments_per_listener -"
            echo "segment_404 -"
            echo "stalls -"
        } >>"$vals"
        summary="$served of $N got audio, errors $errors (Ogg, disconnects, stuck, refused), exit $CLIENT_RC"
    else
        {
            echo "errors $(jq '.error_count' "$json")"
            echo "reconnects $(jq '.totals.reconnects' "$json")"
            echo "segments_per_listener $(jq '.window.median_per_client.segments' "$json")"
            echo "segment_404 $(jq '.totals.segment_404' "$json")"
            echo "stalls $(jq '.window.totals.stalls' "$json")"
            echo "client_body_bytes $(jq '.window.bytes_body_per_client_second' "$json")"
            echo "client_window_cores $(jq '.window.cpu_cores' "$json")"
            echo "segment_p99_ms $(jq '.window.response_ms.segment.p99 // 0' "$json")"
            echo "playlist_p99_ms $(jq '.window.response_ms.playlist.p99 // 0' "$json")"
        } >>"$vals"
        if [[ $kind == hls ]]; then
            echo "relay_requests_per_segment $(jq '.window.fetches_per_new_segment // 0' "$json")" >>"$vals"
            echo "relay_requests_per_s $(jq '.window.per_second.requests * 100 | round / 100' "$json")" >>"$vals"
        fi
        summary=$(jq -r '(.errors | to_entries | map(select(.value > 0)) | map("\(.key) \(.value)") | join(", ")) as $e
            | "\(.totals.requests) requests, \(.totals.segments) segments of \(.distinct_segments) distinct,"
            + " errors \(.error_count)\(if $e == "" then "" else " (\($e))" end), reconnects \(.totals.reconnects),"
            + " stalls \(.totals.stalls)"' "$json")
        summary+=", exit $CLIENT_RC"
    fi
    val() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$vals"; }
    printf '   round %d %-6s: window %s s, %s listeners held; relay %s cores, %s ms per listener-s' \
        "$round" "$kind" "$(val window_s)" "$(val listeners)" "$(val relay_cores)" "$(val relay_ms)"
    printf ' (net %s, http %s, pipe %s); client %s cores; %s B per listener-s\n' \
        "$(val net_ms)" "$(val http_ms)" "$(val pipe_ms)" "$(val client_cores)" "$(val client_bytes)"
    echo "                  $summary"
    if [[ $kind == cached ]]; then
        echo "                  nginx $(val nginx_cores) cores, $(val nginx_ms) ms per listener-s;" \
            "segments, whole run: $(val cache_segment_requests) requests, $(val cache_segment_upstream) to the" \
            "relay, $(val cache_distinct_segments) distinct ($(val cache_run_requests_per_segment) each)," \
            "statuses $(val cache_segment_statuses);"
        echo "                  segments, window: $(val cache_window_segment_requests) requests," \
            "$(val cache_window_segment_upstream) to the relay; $(val cache_new_segments) first asked for in the" \
            "window reached the relay $(val cache_new_segments_upstream) times" \
            "($(val relay_requests_per_segment) each);"
        echo "                  the relay got $(val relay_requests_per_s) requests/s" \
            "($(val relay_playlists_per_s) playlists/s) in the window; playlists $(val cache_playlist_requests)" \
            "($(val cache_playlist_upstream) to the relay), init $(val cache_init_requests)" \
            "($(val cache_init_upstream) to the relay); non-200 answers: $(val cache_non200)"
    fi
}

echo "== HLS vs Ogg listeners, and a cache in front: N=$N, ${RAMP} s ramp + ${DURATION} s per run (steady window from" \
    "${SETTLE} s after the ramp), $ROUNDS round(s), runs: $RUNS; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine); $(relay_version "$RR") ($RR)"
[[ " $RUNS " == *" cached "* ]] && echo "   $("$NGINX" -v 2>&1), $NGINX_WORKERS worker(s); $("$PYTHON" --version)"
"$RR" serve --bind 127.0.0.1 --port "$PORT_RAW" --http "127.0.0.1:$PORT_HTTP" --max-listeners 0 \
    --log-level notice >"$LOG_DIR/radio-relay.log" 2>&1 &
RR_PID=$!
hls_ready() { curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$PORT_HTTP/main/live.m3u8"; }
if ! wait_until 30 "$RR_PID" hls_ready; then
    cat "$LOG_DIR/radio-relay.log" >&2
    die "radio-relay's HLS playlist did not come up"
fi
# players start 3 segments behind the live edge: wait until the playlist lists 3 (6 s), or they start with less
# buffer and stall (by a few ms, every segment)
playlist_ready() {
    (($(curl -sf --max-time 2 "http://127.0.0.1:$PORT_HTTP/main/live.m3u8" | grep -c '\.m4s$') >= 3))
}
wait_until 30 "$RR_PID" playlist_ready || die "radio-relay's playlist did not reach 3 segments in 30 s"
pause "$WARMUP"
i0=$(process_ticks "$RR_PID") it0=$EPOCHREALTIME
pause "$IDLE"
i1=$(process_ticks "$RR_PID") it1=$EPOCHREALTIME
IDLE_CORES=$(calc "($i1 - $i0) / $CLK_TCK / ($it1 - $it0)" 4)
echo "   relay idle (no listener, HLS segments made all along): $IDLE_CORES cores over $IDLE s"

for round in $(seq "$ROUNDS"); do
    for kind in $RUNS; do
        run "$kind" "$round"
        pause 3
    done
done

# col KIND KEY: the median over the rounds ("-" when the run did not give it).
col() {
    local values=() f v
    for f in "$LOG_DIR/$1"-*.vals; do
        [[ -e $f ]] || continue
        v=$(awk -v k="$2" '$1 == k { print $2; exit }' "$f")
        [[ -n $v && $v != - ]] && values+=("$v")
    done
    if ((${#values[@]} == 0)); then echo -; else median "${values[@]}"; fi
}
# ratio A B: A / B; ">50" when B is below 2 % of A (a thread idle in one run and busy in the other).
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (a == "-" || b == "-" || b + 0 == 0) print "-"
        else if (b * 50 < a) print ">50"
        else if (a / b < 0.095) printf "%.3f\n", a / b
        else printf "%.2f\n", a / b
    }'
}
echo
echo "== ${ROUNDS} round(s), medians; N=$N; steady window $((DURATION - SETTLE)) s" \
    "(the ${RAMP} s ramp and ${SETTLE} s after it left out)"
printf '%-46s %12s %12s %12s %9s %13s\n' "" "Ogg (HTTP)" "HLS direct" "HLS cached" "HLS/Ogg" "cached/direct"
for row in "listeners:listeners held (client sockets)" \
    "relay_ms:relay CPU, ms per listener-s" \
    "relay_above_idle_ms:  the same above the idle relay" \
    "net_ms:  network loops (net-*)" \
    "http_ms:  HTTP front end (http)" \
    "pipe_ms:  pipeline (pipe-*)" \
    "relay_cores:relay CPU, cores" \
    "nginx_ms:nginx CPU, ms per listener-s" \
    "total_ms:relay + nginx, ms per listener-s" \
    "client_cores:client tool CPU, cores" \
    "client_bytes:bytes per listener-s, client side" \
    "relay_bytes:bytes per listener-s, relay side" \
    "relay_requests_per_s:requests to the relay per s" \
    "relay_requests_per_segment:relay answers per segment (new in window)" \
    "segments_per_listener:segments per listener in the window" \
    "segment_p99_ms:segment answer p99, ms (client side)" \
    "relay_rss_mb:relay RSS at the end, MB" \
    "errors:errors (see the runs)" \
    "segment_404:  of them 404 for a segment" \
    "reconnects:reconnects" \
    "stalls:playback stalls in the window"; do
    key=${row%%:*} label=${row#*:}
    o=$(col ogg "$key") h=$(col hls "$key") c=$(col cached "$key")
    printf '%-46s %12s %12s %12s %9s %13s\n' "$label" "$o" "$h" "$c" "$(ratio "$h" "$o")" "$(ratio "$c" "$h")"
done
echo
echo "CPU per listener-s: the process's CPU over the steady window / the window / the listeners held (mean of the"
echo "two ss counts); bytes: TCP payload received by the clients' sockets and acked on the relay's HTTP sockets."
echo "HLS/Ogg = HLS direct / Ogg; cached/direct = HLS cached / HLS direct. The relay idled at $IDLE_CORES cores."
echo "Raw logs: $LOG_DIR (per run: KIND-ROUND.txt, .json, .vals, .samples; radio-relay.log;" \
    "nginx-ROUND.conf, nginx-access-ROUND.log, nginx-error-ROUND.log)"
