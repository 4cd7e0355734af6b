#!/usr/bin/env bash
# A relay tree over real links, in network namespaces (bench/netlab.py): blackholed, lossy and slow paths between a
# studio Icecast, two roots, two edges and their listeners, and what the listeners hear. Needs root.
#
#   bench/links.sh                 # every outcome once: edge (hot and cold), transcode, loss (10 min), slow, crowd,
#                                  #   push (5 min): about 25 minutes
#   bench/links.sh MODE [ARGS…]    # one mode: edge [--standby cold], transcode, loss [--minutes M], slow, crowd [-n N],
#                                  #   push [--minutes M], soak [--minutes M] [--seed S]
#   bench/links.sh soak            # the 30-minute soak of seeded random faults on every link
#
# Environment: RADIO_RELAY (the build; default the static release build), LOAD (radio-relay-load), PYTHON. What
# each mode does and prints: bench/links.py's header. Every namespace the run made is gone when it ends, however it
# ends (bench/netlab.py's guard); `bench/netlab.py sweep` removes what a run of another owner left.
set -euo pipefail
export LC_ALL=C
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_tools icecast2 ffmpeg ip nft tc
require_tools "icecast2 ffmpeg iproute2 nftables" icecast2 ffmpeg ip nft tc
[ "$(id -u)" -eq 0 ] || die "network namespaces need root"
RADIO_RELAY="$(relay_binary)"
LOAD="${LOAD:-$(load_binary)}"
export RADIO_RELAY LOAD
require_binaries "radio-relay:$RADIO_RELAY" "radio-relay-load:$LOAD"
PYTHON=${PYTHON:-python3}
require_python "$PYTHON" 9
exec "$PYTHON" "$REPO_ROOT/bench/links.py" "${@:-all}"
