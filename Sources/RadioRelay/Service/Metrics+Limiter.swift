import RadioRelaySystem

extension MetricsReport {
    /// A station's true-peak limiter (`true_peak`; none for a station without one).
    static let limiterFamilies: [Family<StationStatus>] = [
        Family(
            name: "limiter_reduction_db", kind: .gauge,
            help: "The true-peak limiter's deepest gain reduction over the last one to two seconds (dB, 0 or less)"
        ) {
            $0.limiter?.reduction
        },
        Family(
            name: "limiter_limited_seconds_total", kind: .counter,
            help: "Seconds of audio the true-peak limiter reduced"
        ) {
            $0.limiter?.limitedSeconds
        },
    ]
}
