/// How a station presents itself (the `icy-*` fields: a listener's response headers, the index page, a source's
/// `ice-*` headers, a push's). All optional: what is not configured is not sent.
public struct StationInfo: Sendable, Equatable {
    /// `icy-name`: the station's name as people read it ("Jazz Radio"); the index page shows it too.
    public var displayName: String?
    /// `icy-description`.
    public var description: String?
    /// `icy-genre`.
    public var genre: String?
    /// `icy-url`: the station's web site.
    public var url: String?

    public init() {}
}
