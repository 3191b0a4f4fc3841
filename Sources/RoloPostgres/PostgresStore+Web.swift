import Foundation
import RoloStore

/// The web UI's store calls (schema v9 on SQLite: list rows, trash, web sessions) are not
/// on PostgreSQL yet: each answers `StoreError.invalid` so that a web page says so rather
/// than showing wrong data. DAV on PostgreSQL is unaffected. (Issue 20 is open on it.)
extension PostgresStore {
    private static var notYet: StoreError { .invalid("The web UI's lists, trash and sessions are not on PostgreSQL yet.") }

    public func cardListings(collectionID: Int64, filter: ListingFilter, search: [String], from position: ListingPosition,
                             limit: Int) async throws -> ListingPage { throw Self.notYet }
    public func cardListings(collectionID: Int64, names: [String]) async throws -> [CardListing] { throw Self.notYet }
    public func cardCount(collectionID: Int64, filter: ListingFilter, search: [String], cap: Int) async throws -> Int {
        throw Self.notYet
    }
    public func backfillCardListings(_ listing: @Sendable (Data) -> CardListingFields?) async throws -> Int { 0 }
    public func categories(collectionID: Int64, limit: Int) async throws -> [String] { throw Self.notYet }
    public func duplicateCandidates(collectionID: Int64, limit: Int) async throws -> [[String]] { throw Self.notYet }
    public func applyCardBatch(collectionID: Int64, writes: [CardBatchWrite]) async throws -> CardBatchResult {
        throw Self.notYet
    }
    public func trash(collectionID: Int64, limit: Int) async throws -> [TrashedCard] { throw Self.notYet }
    public func trashedCard(id: Int64) async throws -> (card: TrashedCard, data: Data, contentType: String)? { throw Self.notYet }
    public func trash(batch: String) async throws -> [TrashedCard] { throw Self.notYet }
    public func purgeTrash(olderThan date: Date) async throws -> Int { 0 }
    public func createWebSession(tokenHash: String, user: String, csrfToken: String) async throws { throw Self.notYet }
    public func webSession(tokenHash: String) async throws -> WebSession? { nil }
    public func touchWebSession(tokenHash: String) async throws {}
    public func deleteWebSession(tokenHash: String) async throws {}
    public func deleteWebSessions(user: String) async throws {}
    public func pruneWebSessions(idleSince: Date, createdBefore: Date) async throws -> Int { 0 }
}
