import Testing

@testable import RadioRelay
@testable import RadioRelayMedia
@testable import RadioRelayNet
@testable import RadioRelaySystem

/// Which socket systemd passed goes to which station: by name, by address, or one to one.
@Suite struct SocketActivationTests {
    typealias Passed = SocketActivation.Passed
    typealias Listener = SocketActivation.Listener

    @Test func aSingleSocketGoesToTheOnlyStationWhateverItsAddress() throws {
        let sockets = [Passed(descriptor: 3, name: nil, host: "127.0.0.1", port: 9000)]
        let result = try SocketActivation.assign(sockets, to: [Listener(name: "main", bind: "0.0.0.0", port: 8000)])
        #expect(result.stations == ["main": 3] && result.status == nil)
    }

    /// systemd names a passed socket after its unit unless FileDescriptorName= says otherwise: that name is no
    /// station's, so the socket goes by address (or to the only station), as an unnamed one does.
    @Test func aNameThatIsNoStationsCountsAsUnnamed() throws {
        let one = [Passed(descriptor: 3, name: "radio-relay.socket", host: "0.0.0.0", port: 8000)]
        let single = try SocketActivation.assign(one, to: [Listener(name: "jazz", bind: "0.0.0.0", port: 8000)])
        #expect(single.stations == ["jazz": 3])
        let two = [
            Passed(descriptor: 3, name: "radio-relay.socket", host: "0.0.0.0", port: 8001),
            Passed(descriptor: 4, name: "radio-relay.socket", host: "127.0.0.1", port: 8080),
            Passed(descriptor: 5, name: "radio-relay.socket", host: "0.0.0.0", port: 8000),
        ]
        let stations = [
            Listener(name: "jazz", bind: "0.0.0.0", port: 8000), Listener(name: "news", bind: "0.0.0.0", port: 8001),
        ]
        let result = try SocketActivation.assign(two, to: stations, status: ("127.0.0.1", 8080))
        #expect(result.stations == ["jazz": 5, "news": 3] && result.status == 4)
    }

    @Test func namedSocketsGoToTheirStationsAndStatus() throws {
        let sockets = [
            Passed(descriptor: 3, name: "jazz", host: "0.0.0.0", port: 8001),
            Passed(descriptor: 4, name: "status", host: "127.0.0.1", port: 8080),
            Passed(descriptor: 5, name: "rock", host: "0.0.0.0", port: 8002),
        ]
        let stations = [
            Listener(name: "rock", bind: "0.0.0.0", port: 9999), Listener(name: "jazz", bind: "::", port: 1),
        ]
        let result = try SocketActivation.assign(sockets, to: stations)
        #expect(result.stations == ["jazz": 3, "rock": 5] && result.status == 4)
    }

    @Test func unnamedSocketsGoByAddress() throws {
        let sockets = [
            Passed(descriptor: 3, name: nil, host: "127.0.0.1", port: 8080),
            Passed(descriptor: 4, name: nil, host: "::", port: 8002),
            Passed(descriptor: 5, name: nil, host: "192.0.2.7", port: 8001),
        ]
        let stations = [Listener(name: "a", bind: "0.0.0.0", port: 8001), Listener(name: "b", bind: "::", port: 8002)]
        let result = try SocketActivation.assign(sockets, to: stations, status: ("127.0.0.1", 8080))
        #expect(result.stations == ["a": 5, "b": 4] && result.status == 3)
    }

    @Test func theHTTPSocketGoesByNameOrAddress() throws {
        let named = [
            Passed(descriptor: 3, name: "http", host: "0.0.0.0", port: 8090),
            Passed(descriptor: 4, name: nil, host: "0.0.0.0", port: 8000),
        ]
        let stations = [Listener(name: "main", bind: "0.0.0.0", port: 8000)]
        let byName = try SocketActivation.assign(named, to: stations, http: ("0.0.0.0", 8090))
        #expect(byName.http == 3 && byName.stations == ["main": 4] && byName.status == nil)
        let unnamed = [
            Passed(descriptor: 3, name: nil, host: "0.0.0.0", port: 8000),
            Passed(descriptor: 4, name: nil, host: "127.0.0.1", port: 8090),
            Passed(descriptor: 5, name: nil, host: "127.0.0.1", port: 8080),
        ]
        let byAddress = try SocketActivation.assign(
            unnamed, to: stations, status: ("127.0.0.1", 8080), http: ("0.0.0.0", 8090))
        #expect(byAddress.http == 4 && byAddress.status == 5 && byAddress.stations == ["main": 3])
    }

    @Test func aSocketNobodyServesIsAClearError() {
        let sockets = [
            Passed(descriptor: 3, name: nil, host: "0.0.0.0", port: 8001),
            Passed(descriptor: 4, name: "gone", host: "0.0.0.0", port: 8009),
        ]
        #expect {
            _ = try SocketActivation.assign(sockets, to: [Listener(name: "a", bind: "0.0.0.0", port: 8001)])
        } throws: { error in
            "\(error)".contains("socket activation passed \"gone\" 0.0.0.0:8009 (fd 4), which no station serves")
        }
    }

    @Test func noSocketsMeansEveryStationBindsItself() throws {
        #expect(try SocketActivation.assign([], to: [Listener(name: "a", bind: "::", port: 1)]) == .init())
        // Not socket-activated here: nothing passed.
        #expect(try SocketActivation.passed().isEmpty)
    }
}
