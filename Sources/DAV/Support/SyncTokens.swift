import RoloStore

/// Sync tokens as the engine hands them out and reads them back (design.md:
/// `http://rolo.invalid/sync/<book-id>/<seq>`).
enum SyncTokens {
    static let prefix = "http://rolo.invalid/sync/"

    static func token(for collection: CollectionInfo) -> String { token(collectionID: collection.id, seq: collection.syncSeq) }

    static func token(collectionID: Int64, seq: Int64) -> String { "\(prefix)\(collectionID)/\(seq)" }

    /// The seq a token names, nil when it is not one of this book's tokens.
    static func seq(from token: String, collectionID: Int64) -> Int64? {
        guard token.hasPrefix(prefix) else { return nil }
        let parts = token.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, Int64(parts[0]) == collectionID, let seq = Int64(parts[1]), seq >= 0 else { return nil }
        return seq
    }
}
