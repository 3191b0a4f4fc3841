import Foundation

/// What the web UI lists and keeps beside the cards: list rows, categories and duplicate
/// candidates, writes of several cards as one (merges, restores), the trash, and the
/// signed-in browsers' sessions.
public protocol WebStore: Sendable {
    /// One page of a book's cards as a list shows them, sorted by (sort key, name), from
    /// the listing rows written with each card: never parsing a card, at most `limit`
    /// rows. `search` words (`CardListingFields.searchWords`) must each occur in a card's
    /// `searchText`.
    func cardListings(collectionID: Int64, filter: ListingFilter, search: [String], from position: ListingPosition,
                      limit: Int) async throws -> ListingPage
    /// The list rows of these cards (absent names are missing from the result).
    func cardListings(collectionID: Int64, names: [String]) async throws -> [CardListing]
    /// How many cards `cardListings` would list, counting no further than `cap` (a list
    /// says "1 000+" rather than count 50 000 rows on each keystroke).
    func cardCount(collectionID: Int64, filter: ListingFilter, search: [String], cap: Int) async throws -> Int
    /// Gives a listing row to cards written without one (before schema v9, or by a caller
    /// that had none): `listing` reads a card's bytes and returns its fields (nil skips the
    /// card). Returns how many were given one. The store calls it in batches; cheap when
    /// every card has its row.
    @discardableResult
    func backfillCardListings(_ listing: @Sendable (Data) -> CardListingFields?) async throws -> Int
    /// The distinct categories (CATEGORIES values) of the book's cards, sorted, at most `limit`.
    func categories(collectionID: Int64, limit: Int) async throws -> [String]
    /// Cards of the book that share an e-mail address, a phone number's digits or a
    /// normalised name with another card of the book: groups of names, for merge
    /// suggestions (never merged without a person). At most `limit` groups.
    func duplicateCandidates(collectionID: Int64, limit: Int) async throws -> [[String]]

    /// Does every write in one transaction, all or none (see `CardBatchWrite`): each put
    /// and trash moves the book's seq, writes the change log and publishes the change like
    /// `putResource`/`deleteResource`. Throws the first failing write's error
    /// (`preconditionFailed`, `uidConflict`, `notFound`) and writes nothing then.
    @discardableResult
    func applyCardBatch(collectionID: Int64, writes: [CardBatchWrite]) async throws -> CardBatchResult
    /// The book's trash, newest first, at most `limit`.
    func trash(collectionID: Int64, limit: Int) async throws -> [TrashedCard]
    /// A trash entry with the card's bytes and content type.
    func trashedCard(id: Int64) async throws -> (card: TrashedCard, data: Data, contentType: String)?
    /// The entries of one batch (a merge, to undo it).
    func trash(batch: String) async throws -> [TrashedCard]
    /// Empties trash entries older than `date` (30 days by default, from the maintenance).
    @discardableResult
    func purgeTrash(olderThan date: Date) async throws -> Int

    /// Keeps a new session under the hash of its cookie token.
    func createWebSession(tokenHash: String, user: String, csrfToken: String) async throws
    /// The session, nil when unknown or its user is gone or disabled.
    func webSession(tokenHash: String) async throws -> WebSession?
    /// Notes that the session was used now (the idle timeout counts from it).
    func touchWebSession(tokenHash: String) async throws
    func deleteWebSession(tokenHash: String) async throws
    /// Ends every session of the user (password changed, disabled, signed out everywhere).
    func deleteWebSessions(user: String) async throws
    /// Deletes sessions idle since `idleSince` or created before `createdBefore`.
    @discardableResult
    func pruneWebSessions(idleSince: Date, createdBefore: Date) async throws -> Int
}
