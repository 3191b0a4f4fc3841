import Foundation

/// Books shared between users and the mounts through which a sharee sees them.
public protocol SharingStore: Sendable {
    /// Shares the owner's book `book` (a top-level address book) with `sharee`, pending
    /// until the sharee accepts it unless `accepted`. Sharing again changes the access of
    /// the existing share. Throws `noSuchUser` for an unknown owner, `invalid` for an
    /// unknown sharee or the owner themself, `notFound` when the owner has no such book.
    @discardableResult
    func shareBook(owner: String, book: String, with sharee: String, access: ShareAccess, accepted: Bool) async throws -> Share
    /// The sharee accepts a pending share: it appears in their home. `notFound` when none.
    @discardableResult
    func acceptShare(sharee: String, owner: String, book: String) async throws -> Share
    /// Removes the share whichever side asks (the owner revoking, the sharee leaving); the
    /// mount disappears at once. `notFound` when there was none.
    func removeShare(owner: String, book: String, sharee: String) async throws
    /// The sharee's own display name for a mount (nil restores "<book> (<owner>)").
    func renameMount(sharee: String, name: String, displayName: String?) async throws
    /// Shares the user gave and received, pending ones included.
    func shares(of user: String) async throws -> [Share]
    /// Shares of one book (its owner's view: `DAV:invite`, `DAV:acl`).
    func shares(bookID: Int64) async throws -> [Share]
    /// The accepted share mounted as `name` in the sharee's home, as the sharee sees it.
    func mount(sharee: String, name: String) async throws -> CollectionInfo?
    /// Every accepted share of the sharee, as mounted collections, by mount name.
    func mounts(sharee: String) async throws -> [CollectionInfo]
}
