#!/usr/bin/env bash
# Builds the Debian package radio-relay_VERSION_ARCH.deb with dpkg-deb (no debhelper), from the repository:
#   deploy/build-deb.sh                          release build (swift build -c release --static-swift-stdlib), then
#                                                the package in .build/deb/
#   RELEASE_DIR=DIR deploy/build-deb.sh          packages a prebuilt DIR/radio-relay and its resources,
#                                                DIR/radio-relay_RadioRelay.resources
#   OUT=DIR deploy/build-deb.sh                  writes the .deb to DIR instead of .build/deb
#   LINTIAN=0 deploy/build-deb.sh                skips the lintian run at the end (run when lintian is installed)
# Optional: MAINTAINER="Name <address>", SOURCE_DATE_EPOCH (default: the last commit's time; file times and the
# changelog date, so two builds of one binary give the same package).
# VERSION is what `radio-relay --version` prints (0.1.0); ARCH is dpkg's (amd64).
#
# Needs: dpkg-dev (dpkg-shlibdeps), binutils (strip), gzip; lintian to check the result.
#
# The package:
#   /usr/bin/radio-relay                      the static-stdlib binary, stripped (dpkg-shlibdeps computes Depends:
#                                             from the C libraries it links: libcurl4, libmpg123-0, libsoxr0, …)
#   /usr/share/radio-relay/demo.mp3           the resources (BundledSample looks there after a folder beside the binary)
#   /lib/systemd/system/radio-relay.{service,socket}
#                                             deploy/'s units with /usr/local/ rewritten to /usr/ in their settings
#                                             (the one template deploy/install.sh installs as it is)
#   /etc/radio-relay/radio-relay.conf         config/radio-relay.conf, a conffile (DEBIAN/conffiles)
#   /etc/logrotate.d/radio-relay              deploy/radio-relay.logrotate (the access log), a conffile
#   /usr/share/man/man8/radio-relay.8.gz      deploy/radio-relay.8
#   /usr/share/doc/radio-relay/               copyright (machine-readable), changelog.gz, README.Debian, README.md
#                                             (the project's; uncompressed: the unit's Documentation= link)
#   DEBIAN/postinst, prerm, postrm            deploy/debian/: daemon-reload where systemd runs; nothing is enabled or
#                                             started (an upgrade try-restarts a running service, removal stops the
#                                             units, purge removes the enablement links to the package's units)
#
# The changelog is changelog.gz, not changelog.Debian.gz: the version has no Debian revision (0.1.0, not 0.1.0-1), so
# this is a native package, whose Debian changelog is its only changelog (Policy 12.7; lintian warns
# wrong-name-for-changelog-of-native-package otherwise).
#
# lintian (Debian 12's 2.116, with --display-info and --pedantic) reports no error and no warning; the
# informational tags left, and why:
#   I: hardening-no-bindnow [usr/bin/radio-relay]
#       The release build links without -z now (full RELRO). Building with `-Xlinker -z -Xlinker now` would add it;
#       the binary is not setuid and runs with no capabilities under the unit's sandbox.
#   I: hardening-no-fortify-functions [usr/bin/radio-relay]
#       swiftc has no _FORTIFY_SOURCE: Swift code calls no fortifiable libc function through the checked wrappers.
#   I: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/radio-relay.service]
#       No sysvinit script: the server depends on systemd's socket passing, watchdog and credentials.
#   I: spelling-error-in-binary … [usr/bin/radio-relay] (about 20)
#       Strings of the statically linked Swift runtime, Foundation and ICU (ADDRES, Portugese, overriden, …), none
#       of radio-relay's own.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
umask 022
export LC_ALL=C.UTF-8

die() { echo "build-deb: $*" >&2; exit 1; }
for c in dpkg-deb dpkg-shlibdeps dpkg strip readelf gzip sed awk md5sum; do
    command -v "$c" >/dev/null || die "$c not found (apt-get install dpkg-dev binutils gzip)"
done

out=${OUT:-$repo/.build/deb}
maintainer=${MAINTAINER:-radio-relay maintainers <maintainers@users.noreply.a-seed-84248833.example>}

# The binary and its resources: prebuilt, or a release build here.
if [[ -n ${RELEASE_DIR:-} ]]; then
    release=$(realpath -e "$RELEASE_DIR") || die "RELEASE_DIR=$RELEASE_DIR does not exist"
else
    export PATH="/opt/swift/usr/bin:$PATH"
    .ci/deps
    # Self-contained: the Swift runtime and Foundation are linked in (a server needs no Swift toolchain).
    swift build -c release --static-swift-stdlib --product radio-relay 2>&1 | tail -n 1
    release=$(swift build -c release --static-swift-stdlib --show-bin-path)
fi
binary=$release/radio-relay
resources=$release/radio-relay_RadioRelay.resources
[[ -f $binary && -x $binary ]] || die "no executable radio-relay in $release"
[[ -f $resources/demo.mp3 ]] || die "no radio-relay_RadioRelay.resources/demo.mp3 in $release"
# A server has no Swift toolchain: a binary that needs the toolchain's libraries (built without
# --static-swift-stdlib) cannot start there (libswiftCore.so missing, status 127), and is refused here.
command -v readelf >/dev/null || die "readelf not found (apt-get install binutils)"
needed=$(readelf -d "$binary") || die "readelf cannot read $binary"
toolchain=$(grep -oE 'Shared library: \[(libswift[^]]*|libFoundation[^]]*|libdispatch[^]]*|libBlocksRuntime[^]]*)\]' \
    <<<"$needed" | sed -E 's/.*\[(.*)\]/\1/' | sort -u | tr '\n' ' ' || true)
[[ -z $toolchain ]] || die "$binary needs the Swift toolchain's libraries (${toolchain% }): build it with swift build -c release --static-swift-stdlib"

version_line=$("$binary" --version) || die "$binary --version failed"
version=$(awk 'NR == 1 && $1 == "radio-relay" { print $2 }' <<<"$version_line")
# A native version (no Debian revision): digits first, then letters, digits and . + ~ only.
[[ $version =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || die "cannot read a version from '$version_line'"
arch=$(dpkg --print-architecture)
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
    SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH
deb=$out/radio-relay_${version}_${arch}.deb

scratch=$(mktemp -d /tmp/build-deb.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
root=$scratch/root
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/radio-relay" "$root/lib/systemd/system" \
    "$root/etc/radio-relay" "$root/usr/share/man/man8" "$root/usr/share/doc/radio-relay" "$root/etc/logrotate.d"

# The binary, stripped of its symbol tables and debug info (about half its size; Swift's metadata is in its own
# sections and stays), then run once to be sure it still is the same program.
strip --strip-unneeded --remove-section=.comment -o "$root/usr/bin/radio-relay" "$binary"
chmod 0755 "$root/usr/bin/radio-relay"
[[ $("$root/usr/bin/radio-relay" --version) == "$version_line" ]] || die "the stripped binary's --version differs"

# The resources: the folder's contents, where BundledSample looks for them (Sources/RadioRelay/Service/
# BundledSample.swift: beside the binary, then /usr/local/share/radio-relay, then /usr/share/radio-relay).
cp -R "$resources/." "$root/usr/share/radio-relay/"

# The units: one template for both installs. deploy/install.sh installs them as they are (/usr/local/bin); the
# package has /usr/bin and /usr/share/doc, so /usr/local/ becomes /usr/ in every setting (comments untouched).
for unit in radio-relay.service radio-relay.socket; do
    sed -e '/^[[:space:]]*#/!s|/usr/local/|/usr/|g' "deploy/$unit" > "$root/lib/systemd/system/$unit"
    if grep -v '^[[:space:]]*#' "$root/lib/systemd/system/$unit" | grep -q '/usr/local/'; then
        die "$unit still names /usr/local/ after the rewrite"
    fi
done
grep -qx 'ExecStart=/usr/bin/radio-relay --config /etc/radio-relay/radio-relay.conf' \
    "$root/lib/systemd/system/radio-relay.service" || die "radio-relay.service: ExecStart= is not /usr/bin/radio-relay"

install -m 0644 config/radio-relay.conf "$root/etc/radio-relay/radio-relay.conf"
install -m 0644 deploy/radio-relay.logrotate "$root/etc/logrotate.d/radio-relay"
gzip -9n < deploy/radio-relay.8 > "$root/usr/share/man/man8/radio-relay.8.gz"

# Docs. The changelog's date is SOURCE_DATE_EPOCH's.
doc=$root/usr/share/doc/radio-relay
date_r=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
render() {  # render TEMPLATE: @VERSION@, @ARCH@, @MAINTAINER@, @DATE@ replaced (| never occurs in them)
    sed -e "s|@VERSION@|$version|g" -e "s|@ARCH@|$arch|g" -e "s|@MAINTAINER@|$maintainer|g" -e "s|@DATE@|$date_r|g" "$1"
}
render deploy/debian/copyright > "$doc/copyright"
render deploy/debian/changelog.in | gzip -9n > "$doc/changelog.gz"
install -m 0644 deploy/debian/README.Debian README.md "$doc/"

# Maintainer scripts and conffiles.
install -m 0755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm "$root/DEBIAN/"
printf '%s\n' /etc/radio-relay/radio-relay.conf /etc/logrotate.d/radio-relay > "$root/DEBIAN/conffiles"

# Depends: from the libraries the binary links, by dpkg-shlibdeps (which wants a debian/control to read).
install -d "$scratch/shlibdeps/debian"
printf 'Source: radio-relay\n\nPackage: radio-relay\nArchitecture: any\n' > "$scratch/shlibdeps/debian/control"
depends=$(cd "$scratch/shlibdeps" && dpkg-shlibdeps -O -e"$root/usr/bin/radio-relay") \
    || die "dpkg-shlibdeps failed"
depends=${depends#shlibs:Depends=}
[[ -n $depends ]] || die "dpkg-shlibdeps found no dependency"

# Every file's mode and time fixed; Installed-Size as dpkg-gencontrol counts it (KiB, each file rounded up).
find "$root" -type d -exec chmod 0755 {} +
find "$root" -type f ! -path "$root/DEBIAN/*" ! -path "$root/usr/bin/*" -exec chmod 0644 {} +
installed_size=$(find "$root" -path "$root/DEBIAN" -prune -o \( -type f -o -type l \) -printf '%s\n' |
    awk '{ kib += int(($1 + 1023) / 1024) } END { print kib + 0 }')
render deploy/debian/control.in | sed -e "s|@INSTALLED_SIZE@|$installed_size|" -e "s|@DEPENDS@|$depends|" \
    > "$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "built $deb ($(du -h "$deb" | cut -f1); installed size $((installed_size / 1024)) MiB)"
echo "Version: $version, Architecture: $arch"
echo "Depends: $depends"

if [[ ${LINTIAN:-1} != 0 ]] && command -v lintian >/dev/null; then
    echo "lintian:"
    # --fail-on error: an error fails the build; what else it says is explained at the top of this script.
    allow_root=()
    [[ $(id -u) -eq 0 ]] && allow_root=(--allow-root)
    lintian "${allow_root[@]}" --fail-on error --display-info --pedantic --tag-display-limit 0 "$deb" |
        sed 's/^/  /' || die "lintian found errors in $deb"
fi
