/// The pages a schedule looks at: the ring's indices `oldest..<head` with their metadata, and how many header pages
/// precede them. The loop's snapshot of the `PageRing` conforms; tests use a plain array.
protocol PageWindow {
    /// Index of the oldest page held.
    var oldest: Int64 { get }
    /// Pages held (indices `oldest ..< oldest + count`).
    var count: Int { get }
    /// Header pages every listener gets first.
    var headerCount: Int { get }
    /// Granule position of the page `offset` places after the oldest.
    func granulePosition(at offset: Int) -> Int64
    /// Whether that page's first packet continues one from the previous page (no clean start).
    func isContinued(at offset: Int) -> Bool
}

extension PageWindow {
    /// Index the next published page will get: the live edge's end.
    var head: Int64 { oldest + Int64(count) }
}
