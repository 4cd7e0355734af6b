#!/usr/bin/env bash
# Work per wake-up of the event-loop skeleton with 10 000 idle connections attached, against none: one radio-relay
# serves its demo station with --http and --status (and --max-lag 600, so that stalled listeners stay). loopwake.py
# makes REQUESTS requests that the HTTP front end's loop answers itself, first with no other connection, then with
# IDLE title event subscribers attached (open, idle, owed a keep-alive every 15 s); then holds HOLD seconds with no
# listener on the station, and again with IDLE raw listeners that never read (their sockets backed up). It prints
# each loop thread's CPU per wake-up (wake-ups counted by radio_relay_loop_wakeups_total and
# radio_relay_network_loop_wakeups_total) with the ratio idle/none.
#
#   bench/loopwake.sh                          # IDLE=10000 REQUESTS=3000
#   RADIO_RELAY=/tmp/old/radio-relay bench/loopwake.sh   # another build side by side (a build without the wake-up
#                                                        # count shows CPU per request only)
#
# Environment: IDLE, REQUESTS (per HTTP phase), HOLD (s per station phase), ROUNDS (0 idle, then IDLE idle;
# medians), RADIO_RELAY (default: the static release build the package ships, else
# .build/release), KEEP_TMP=1.
set -euo pipefail
export LC_ALL=C
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_defaults IDLE=10000 REQUESTS=20000 ROUNDS=3 HOLD=10
require_int --positive IDLE REQUESTS ROUNDS HOLD
RR=$(relay_binary)
require_binaries "radio-relay:$RR"
raise_nofile 20000
need_nofile $((IDLE + 200)) IDLE+200

bench_tmpdir --keepable loopwake
TMP=$BENCH_TMP
bench_traps

PORT=$(bench_free_port)
HTTP=$(bench_free_port)
STATUS=$(bench_free_port)
echo "== loop work per wake-up: 0 vs $IDLE idle connections, $REQUESTS requests each, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine); $(relay_version "$RR") ($RR)"
"$RR" serve --bind 127.0.0.1 --port "$PORT" --http "127.0.0.1:$HTTP" --status "127.0.0.1:$STATUS" \
    --max-lag 600 --network-threads 1 --log-level notice >"$TMP/server.log" 2>&1 &
RR_PID=$!
bench_track "$RR_PID"
wait_until 10 "$RR_PID" port_busy "$STATUS" || die "the server did not start: $(cat "$TMP/server.log")"
wait_until 10 "$RR_PID" port_busy "$HTTP" || die "no HTTP address: $(cat "$TMP/server.log")"
python3 "$REPO_ROOT/bench/loopwake.py" "$RR_PID" "$PORT" "$HTTP" "$STATUS" "$IDLE" "$REQUESTS" "$ROUNDS" "$HOLD"
kill -0 "$RR_PID" || die "the server died: $(cat "$TMP/server.log")"
