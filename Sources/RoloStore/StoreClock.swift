import Foundation

/// Where a store takes the time it stamps on users, collections, resources and change rows
/// (`getlastmodified`, `creationdate`, change-log times). Injected per store rather than
/// global, so a deterministic test server freezes its own clock and nobody else's.
public struct StoreClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    /// The current time by this clock.
    public var now: Date { read() }

    /// Wall-clock time: every real deployment.
    public static let system = StoreClock { Date() }

    /// Always `date`: recorded expectations (ETags, sync tokens, dates) stay byte-identical
    /// from run to run.
    public static func fixed(_ date: Date = StoreClock.deterministicEpoch) -> StoreClock { StoreClock { date } }

    /// 2020-01-01T00:00:00Z, the instant a deterministic server lives in.
    public static let deterministicEpoch = Date(timeIntervalSince1970: 1_577_836_800)
}
