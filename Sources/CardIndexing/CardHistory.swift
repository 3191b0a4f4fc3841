import Contacts
import Foundation
import RoloStore
import VCard

/// Going back in a card's history (issue 31): always by new, ordinary writes (a new ETag, a
/// change in the log, so every client syncs it back), never by rewriting the past.
public enum CardHistory {
    /// Errors a restore answers with, before anything is written.
    public struct RestoreError: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// Writes `version` of its card again as a new write, checked against the card's
    /// current ETag (`current`, nil when the card is deleted): a write that came in
    /// meanwhile fails it with `preconditionFailed` and nothing changes.
    @discardableResult
    public static func restore(_ version: CardVersion, current: String?, collectionID: Int64,
                               in store: any WebStore) async throws -> CardBatchResult {
        try await store.applyCardBatch(collectionID: collectionID, writes: [put(version, current: current)])
    }

    /// Carries out `plan` as one transaction of ordinary writes (cards removed go to the
    /// trash), each checked against the ETag the plan saw: if any card changed meanwhile,
    /// the whole batch fails and nothing changes. Nil for an empty plan.
    @discardableResult
    public static func apply(_ plan: UndoPlan, collectionID: Int64, in store: any WebStore) async throws -> CardBatchResult? {
        guard !plan.isEmpty else { return nil }
        let writes = try plan.steps.map { step -> CardBatchWrite in
            switch step {
            case let .revert(_, version, current):
                return try put(version, current: current)
            case let .remove(name, current):
                return .trash(name: name, precondition: .ifMatch([current]), reason: .deleted)
            }
        }
        return try await store.applyCardBatch(collectionID: collectionID, writes: writes)
    }

    static func put(_ version: CardVersion, current: String?) throws -> CardBatchWrite {
        guard let data = version.data, let etag = version.etag else {
            throw RestoreError("\(version.name): the version is a deletion, there is nothing to restore")
        }
        guard let card = try? VCardParser.parse(Array(data)).first else {
            throw RestoreError("\(version.name): the version \(etag) cannot be read as a vCard")
        }
        return .put(name: version.name, data: data, contentType: version.contentType ?? "text/vcard; charset=utf-8",
                    card: CardMetadata(card: card), precondition: current.map { .ifMatch([$0]) } ?? .ifNoneMatchAny,
                    keepPrevious: false)
    }

    /// One phrase list per version of `versions` (oldest first): what it changed from the one
    /// before, in the Contacts model's terms.
    public static func describe(_ versions: [CardVersion]) -> [[String]] {
        var previous: Contact?
        return versions.map { version in
            guard let data = version.data, let card = try? VCardParser.parse(Array(data)).first else {
                defer { previous = nil }
                return version.isDeletion ? ["deleted"] : ["unreadable"]
            }
            let contact = Contact(vCard: card)
            defer { previous = contact }
            guard let before = previous else { return ["created"] }
            let changes = ContactDiff.describe(from: before, to: contact)
            return changes.isEmpty ? ["no change the contact shows"] : changes
        }
    }
}
