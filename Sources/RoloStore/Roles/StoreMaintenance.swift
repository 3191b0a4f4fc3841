import Foundation

/// Whole-store upkeep: counts for monitoring and the test harness's reset.
public protocol StoreMaintenance: Sendable {
    /// Whole-store counts for monitoring; cheap enough to call on every metrics scrape.
    func statistics() async throws -> StoreStatistics

    /// Removes every user, collection, resource, dead property and change, and restarts
    /// the id counters, so a test harness's reset gives the same ids and sync tokens again.
    func eraseAll() async throws
}
