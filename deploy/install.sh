#!/usr/bin/env bash
# Installs radio-relay as a systemd service (run from the repository, as root):
#   deploy/install.sh               release build; binary and its resource bundle to /usr/local/bin, the units to
#                                   /etc/systemd/system, the config to /etc/radio-relay (kept if present), the docs to
#                                   /usr/local/share/doc/radio-relay, radio-relay(8) to /usr/local/share/man/man8;
#                                   then systemctl daemon-reload
#   deploy/install.sh --uninstall   removes all of that except the config (disabling and stopping the units first)
#   DESTDIR=/tmp/stage deploy/install.sh   installs under a staging root instead; no systemctl
# Then: systemctl enable --now radio-relay.socket radio-relay.service
# systemctl is skipped where systemd is not running (a container, a chroot).
#
# The Debian package (deploy/build-deb.sh) installs the same units in /lib/systemd/system instead, with ExecStart=
# /usr/bin/radio-relay. Units in /etc/systemd/system take precedence over those: run --uninstall before installing
# the package, or the package's units (and binary) are never used.
set -euo pipefail
cd "$(dirname "$0")/.."
DESTDIR=${DESTDIR:-}
bin="$DESTDIR/usr/local/bin"
units="$DESTDIR/etc/systemd/system"
config="$DESTDIR/etc/radio-relay"
docs="$DESTDIR/usr/local/share/doc/radio-relay"
man="$DESTDIR/usr/local/share/man/man8"
systemd_running() { [[ -z $DESTDIR && -d /run/systemd/system ]] && command -v systemctl >/dev/null; }

if [[ ${1:-} == --uninstall ]]; then
    # Disabled first, so that no enablement link is left pointing at the removed units (offline with --root where
    # systemd is not running). Drop-ins (radio-relay.service.d) are the operator's and stay, like the config.
    if systemd_running; then
        systemctl disable --now radio-relay.socket radio-relay.service 2>/dev/null || true
    elif [[ -e $units/radio-relay.service || -e $units/radio-relay.socket ]] && command -v systemctl >/dev/null; then
        systemctl --root="${DESTDIR:-/}" disable radio-relay.socket radio-relay.service >/dev/null 2>&1 || true
    fi
    rm -f "$bin/radio-relay" "$units/radio-relay.service" "$units/radio-relay.socket" "$man/radio-relay.8"
    rm -rf "$bin/radio-relay_RadioRelay.resources" "$docs"
    if systemd_running; then systemctl daemon-reload; fi
    echo "removed radio-relay (kept $config)"
    if [[ -z $DESTDIR && -f /lib/systemd/system/radio-relay.service ]]; then
        echo "the radio-relay package's units are in use now; enable them with:" \
            "systemctl enable --now radio-relay.socket radio-relay.service"
    fi
    exit 0
fi
[[ $# -eq 0 ]] || { echo "usage: $0 [--uninstall]" >&2; exit 64; }

if [[ -z $DESTDIR ]] && dpkg-query -W -f='${Status}' radio-relay 2>/dev/null | grep -q 'ok installed'; then
    echo "note: the radio-relay package is installed; the units this installs in $units override its units" \
        "(deploy/install.sh --uninstall undoes that)" >&2
fi

export PATH="/opt/swift/usr/bin:$PATH"
.ci/deps
# Self-contained: the Swift runtime and Foundation are linked in (a server needs no Swift toolchain to run it).
swift build -c release --static-swift-stdlib --product radio-relay 2>&1 | tail -n 1
release=$(swift build -c release --static-swift-stdlib --show-bin-path)
install -d -m 0755 "$bin" "$units" "$config" "$docs" "$man"
install -m 0755 "$release/radio-relay" "$bin/radio-relay"
rm -rf "$bin/radio-relay_RadioRelay.resources"
cp -R "$release/radio-relay_RadioRelay.resources" "$bin/"
install -m 0644 deploy/radio-relay.service deploy/radio-relay.socket "$units/"
install -m 0644 deploy/radio-relay.8 "$man/radio-relay.8"
if [[ -e $config/radio-relay.conf ]]; then
    echo "kept $config/radio-relay.conf"
else
    install -m 0644 config/radio-relay.conf "$config/radio-relay.conf"
fi
install -m 0644 README.md "$docs/"
[[ -d docs ]] && cp -R docs/. "$docs/"
"$bin/radio-relay" check-config "$config/radio-relay.conf" || echo "edit $config/radio-relay.conf, then check it"
if systemd_running; then
    systemctl daemon-reload
    echo "installed; start with: systemctl enable --now radio-relay.socket radio-relay.service"
else
    echo "installed under ${DESTDIR:-/}; systemd is not running here, so no unit was loaded"
fi
