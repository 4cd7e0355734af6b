import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// One input: its state, why, since when (Unix seconds), its URL redacted, its format, and the live source's client
/// while one is connected.
extension InputState: Codable {
    enum CodingKeys: String, CodingKey {
        case name, kind, url, state, reason, since, connected, title
        case bytesIn = "bytes_in"
        case reconnects, format, source, loudness
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode(name, forKey: .name)
        try out.encode(kind, forKey: .kind)
        try out.encode(url, forKey: .url)
        try out.encode(state, forKey: .state)
        try out.encodeOrNull(reason, forKey: .reason)
        try out.encodeSeconds(since, forKey: .since)
        try out.encode(connected, forKey: .connected)
        try out.encodeOrNull(title, forKey: .title)
        try out.encode(bytesIn, forKey: .bytesIn)
        try out.encode(reconnects, forKey: .reconnects)
        try out.encodeOrNull(format, forKey: .format)
        try out.encodeOrNull(source, forKey: .source)
        try out.encodeOrNull(loudness, forKey: .loudness)
    }

    public init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try values.decode(String.self, forKey: .name), kind: try values.decode(InputKind.self, forKey: .kind),
            url: try values.decodeIfPresent(String.self, forKey: .url) ?? "",
            state: try values.decode(Phase.self, forKey: .state),
            reason: try values.decodeIfPresent(String.self, forKey: .reason),
            since: try values.decodeIfPresent(Double.self, forKey: .since) ?? 0,
            connected: try values.decodeIfPresent(Bool.self, forKey: .connected) ?? false,
            title: try values.decodeIfPresent(String.self, forKey: .title),
            bytesIn: try values.decodeIfPresent(Int.self, forKey: .bytesIn) ?? 0,
            reconnects: try values.decodeIfPresent(Int.self, forKey: .reconnects) ?? 0)
        format = try values.decodeIfPresent(String.self, forKey: .format)
        source = try values.decodeIfPresent(Source.self, forKey: .source)
        loudness = try values.decodeIfPresent(Loudness.self, forKey: .loudness)
    }
}

/// An input's loudness stage: its gated loudness (`null` before audio above the gates) and the gain applied, in dB,
/// both to a tenth.
extension InputState.Loudness: Codable {
    enum CodingKeys: String, CodingKey {
        case lufs
        case gain = "gain_db"
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encodeOrNull(lufs.map { ($0 * 10).rounded() / 10 }, forKey: .lufs)
        try out.encode((gain * 10).rounded() / 10, forKey: .gain)
    }

    public init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            lufs: try values.decodeIfPresent(Double.self, forKey: .lufs),
            gain: try values.decode(Double.self, forKey: .gain))
    }
}

/// The live source on the air: its address, client, method, since when (Unix seconds), bytes sent, and the DJ
/// account it authenticated as (`null`: the station's own user `source`).
extension InputState.Source: Codable {
    enum CodingKeys: String, CodingKey {
        case address
        case userAgent = "user_agent"
        case method, since, bytes, dj
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode(address, forKey: .address)
        try out.encodeOrNull(userAgent, forKey: .userAgent)
        try out.encode(method, forKey: .method)
        try out.encodeSeconds(since, forKey: .since)
        try out.encode(bytes, forKey: .bytes)
        try out.encodeOrNull(dj, forKey: .dj)
    }

    public init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            address: try values.decode(String.self, forKey: .address),
            userAgent: try values.decodeIfPresent(String.self, forKey: .userAgent),
            method: try values.decode(String.self, forKey: .method),
            since: try values.decodeIfPresent(Double.self, forKey: .since) ?? 0,
            bytes: try values.decodeIfPresent(Int.self, forKey: .bytes) ?? 0,
            dj: try values.decodeIfPresent(String.self, forKey: .dj))
    }
}

/// One switch: when (Unix seconds), from which input to which, why.
extension InputSwitch: Codable {
    enum CodingKeys: String, CodingKey {
        case at, from, to, reason, detail
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encodeSeconds(at, forKey: .at)
        try out.encode(from, forKey: .from)
        try out.encode(to, forKey: .to)
        try out.encode(reason, forKey: .reason)
        try out.encodeOrNull(detail, forKey: .detail)
    }

    public init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            at: try values.decodeIfPresent(Double.self, forKey: .at) ?? 0,
            from: try values.decode(String.self, forKey: .from),
            to: try values.decode(String.self, forKey: .to), reason: try values.decode(String.self, forKey: .reason),
            detail: try values.decodeIfPresent(String.self, forKey: .detail))
    }
}

/// One push to Icecast: the target without its password, `connecting`, `connected` or `retrying`.
extension PushStatus: Codable {
    enum CodingKeys: String, CodingKey {
        case target, state
        case lastError = "last_error"
        case bytesSent = "bytes_sent"
        case reconnects
    }

    package func encode(to encoder: any Swift.Encoder) throws {
        var out = encoder.container(keyedBy: CodingKeys.self)
        try out.encode(target, forKey: .target)
        try out.encode(state, forKey: .state)
        try out.encodeOrNull(lastError, forKey: .lastError)
        try out.encode(bytesSent, forKey: .bytesSent)
        try out.encode(reconnects, forKey: .reconnects)
    }

    package init(from decoder: any Swift.Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(target: try values.decode(String.self, forKey: .target))
        state = try values.decode(State.self, forKey: .state)
        lastError = try values.decodeIfPresent(String.self, forKey: .lastError)
        bytesSent = try values.decodeIfPresent(Int.self, forKey: .bytesSent) ?? 0
        reconnects = try values.decodeIfPresent(Int.self, forKey: .reconnects) ?? 0
    }
}

extension PushStatus.State: Codable {}
