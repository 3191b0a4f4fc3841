import RoloStore

/// The storage quota: the bytes of cards and files a user's own books may hold. A card in
/// a shared book counts against the book's owner. Every write path that adds bytes asks
/// here before it writes (DAV's PUT and COPY/MOVE, the web UI's editor, import, restore,
/// merge and group changes), so no way in skips it.
public struct Quota: Sendable, Hashable {
    /// Bytes a user may store in total; nil means no quota.
    public var limit: Int64?

    public init(limit: Int64?) { self.limit = limit }

    public static let unlimited = Quota(limit: nil)

    /// Throws `QuotaExceeded` when adding `bytes` to what `owner` stores would pass the
    /// limit. A write that frees bytes (or adds none) always passes, even over the limit.
    public func check(owner: String, adding bytes: Int, in store: any CardStore) async throws {
        guard let limit, bytes > 0 else { return }
        let used = try await store.usedBytes(owner: owner)
        if used + Int64(bytes) > limit { throw QuotaExceeded(limit: limit) }
    }
}

/// A write refused because it would pass the owner's quota; nothing was written.
public struct QuotaExceeded: Error, Sendable, Hashable {
    public var limit: Int64
    public init(limit: Int64) { self.limit = limit }

    /// For people (the web UI, the command line).
    public var message: String {
        "The address book's owner has used up their storage quota (\(limit) bytes); delete contacts or photos to make room."
    }
}
