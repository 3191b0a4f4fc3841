import Foundation

/// Feeds at secret URLs (issue 33). A role of its own, outside `RoloStore`'s union, so that
/// a store without feeds (a test double) is still a whole `RoloStore`; the server and the
/// CLI ask `store as? any FeedStore`.
public protocol FeedStore: Sendable {
    /// Makes a feed of `kind` for `user` over `books`, named as the user's home shows them
    /// (their own address books and accepted mounts); none means every book they can read.
    /// Throws `noSuchUser`, or `noAddressBook` naming the first book the user cannot read.
    func createFeed(user: String, kind: FeedKind, books: [String]) async throws -> NewFeed
    /// The user's feeds, oldest first. `noSuchUser` for an unknown user.
    func feeds(user: String) async throws -> [Feed]
    /// Deletes the user's feed `id`: its URL answers 404 from then on. `notFound` when the
    /// user has no such feed (another user's id included).
    func revokeFeed(user: String, id: Int64) async throws
    /// The feed a secret opens, nil for a wrong or revoked one (or a disabled user's).
    func feed(secret: String) async throws -> Feed?
    /// Records that the feed was read (for `rolo feed list`).
    func noteFeedRead(id: Int64, at date: Date) async throws
}
