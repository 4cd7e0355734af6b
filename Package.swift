// swift-tools-version:6.0
import PackageDescription

/// One system-library target per C library, found through pkg-config, with the Debian package that provides it.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

/// Swift 6 features that are opt-in on this toolchain: `any` spelled out for existentials, and a member usable only
/// where its module is imported.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "radio-relay",
    products: [
        .executable(name: "radio-relay", targets: ["radio-relay"]),
        .library(name: "RadioRelay", targets: ["RadioRelay"]),
    ],
    targets: [
        systemLibrary("CCurl", pkgConfig: "libcurl", apt: "libcurl4-openssl-dev"),
        systemLibrary("CMPG123", pkgConfig: "libmpg123", apt: "libmpg123-dev"),
        systemLibrary("CSoxr", pkgConfig: "soxr", apt: "libsoxr-dev"),
        systemLibrary("COpus", pkgConfig: "opus", apt: "libopus-dev"),
        systemLibrary("COgg", pkgConfig: "ogg", apt: "libogg-dev"),
        systemLibrary("CSystemd", pkgConfig: "libsystemd", apt: "libsystemd-dev"),
        systemLibrary("CMaxMindDB", pkgConfig: "libmaxminddb", apt: "libmaxminddb-dev"),
        systemLibrary("CEbur128", pkgConfig: "libebur128", apt: "libebur128-dev"),
        systemLibrary("CCrypt", pkgConfig: "libxcrypt", apt: "libcrypt-dev"),
        systemLibrary("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        .target(name: "CLinux", cSettings: [.define("_GNU_SOURCE")]),
        // The layers, each importing only those below it (docs/ARCHITECTURE.md, "Layers"). System: descriptors,
        // syscalls, epoll, threads, logging, addresses, time, redaction, the process's exit statuses.
        .target(name: "RadioRelaySystem", dependencies: ["CSystemd", "CLinux"], swiftSettings: swiftSettings),
        // Media: pure transforms, no sockets and no threads: ICY demuxing, Parser, Reader, resampler, Encoder, Ogg
        // pages and demuxer, the Opus relay chain, the stage chain.
        .target(
            name: "RadioRelayMedia",
            dependencies: ["RadioRelaySystem", "CMPG123", "CSoxr", "COpus", "COgg", "CEbur128"],
            swiftSettings: swiftSettings
        ),
        // Net: upstream transports (libcurl, files, raw TCP), the station network loops and page rings, the HTTP
        // front end and the connection loop the status endpoint shares, PROXY, who may listen (libmaxminddb for
        // countries, libcrypt for htpasswd hashes).
        .target(
            name: "RadioRelayNet",
            dependencies: ["RadioRelaySystem", "RadioRelayMedia", "CCurl", "CLinux", "CMaxMindDB", "CCrypt"],
            swiftSettings: swiftSettings
        ),
        // Service: stations and pipelines, the server and reload, the status endpoint, configuration, pushes, the
        // command line, transcode, listening reports (zlib for rotated access logs that were gzipped).
        .target(
            name: "RadioRelay",
            dependencies: [
                "RadioRelaySystem", "RadioRelayMedia", "RadioRelayNet", "CCurl", "CSystemd", "CLinux", "CZlib",
            ],
            exclude: ["Resources/make-demo.sh"],
            resources: [.copy("Resources/demo.mp3")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "radio-relay", dependencies: ["RadioRelay"], swiftSettings: swiftSettings),
        // Test-only code shared by the tests, the load tool and the fuzzer: a real HTTP server and raw-TCP client
        // for 127.0.0.1, libopus decoding of what listeners receive, signal measurements, gzip compression (zlib).
        .target(
            name: "RadioRelayTestSupport", dependencies: ["RadioRelay", "COpus", "CLinux", "CZlib"],
            swiftSettings: swiftSettings
        ),
        // Load tool for bench/: N raw-TCP (or HTTP) listeners that validate every byte as Ogg and time it.
        .executableTarget(
            name: "radio-relay-load",
            dependencies: ["RadioRelay", "RadioRelayTestSupport", "CLinux"],
            swiftSettings: swiftSettings
        ),
        // libFuzzer entry point for the Parser; without -DFUZZING it replays a corpus (see CONTRIBUTING.md).
        .executableTarget(
            name: "ParserFuzz",
            dependencies: ["RadioRelay", "RadioRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        // libFuzzer entry point for the upstream response headers (ResponseHeaders) and the HTTP servers' request heads
        // (HTTPRequestHead); replays its corpus without -DFUZZING.
        .executableTarget(
            name: "HeaderFuzz",
            dependencies: ["RadioRelay", "RadioRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        // libFuzzer entry point for the ICY demuxer and its title parsing; replays its corpus without -DFUZZING.
        .executableTarget(
            name: "ICYFuzz",
            dependencies: ["RadioRelay", "RadioRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        // libFuzzer entry point for the edge relay's Ogg demuxer (OggDemuxer); replays its corpus without -DFUZZING.
        .executableTarget(
            name: "OggFuzz",
            dependencies: ["RadioRelay", "RadioRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        // libFuzzer entry point for the edge relay's whole chain (OggDemuxer → OpusRelayChain → pages); replays its
        // corpus without -DFUZZING.
        .executableTarget(
            name: "RelayFuzz",
            dependencies: ["RadioRelay", "RadioRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        // libFuzzer entry point for the PROXY protocol header (ProxyHeader); replays its corpus without -DFUZZING.
        .executableTarget(
            name: "ProxyFuzz",
            dependencies: ["RadioRelay", "RadioRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        // Unit, virtual-time and in-process tests (loopback sockets allowed), in debug; the threaded suites also run
        // under ThreadSanitizer.
        .testTarget(
            name: "RadioRelayTests",
            dependencies: ["RadioRelay", "RadioRelayTestSupport", "COpus", "CLinux"],
            swiftSettings: swiftSettings
        ),
        // End-to-end tests: the binary as shipped (RADIO_RELAY_BINARY, CI's static release build) run as a process
        // with its real peers. No @testable import: they see the server only from outside (the media layer's Ogg
        // reader checks what listeners receive; `/status.json` is decoded into the server's own schema).
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["RadioRelay", "RadioRelayMedia", "RadioRelayTestSupport", "CLinux"],
            swiftSettings: swiftSettings
        ),
    ]
)
