import Authorization
import CardIndexing
import Foundation
import RoloStore

extension WebApp {
    /// Every card write of the web UI: checked against the book owner's quota (`Quota`), then
    /// attributed to the signed-in user (the change log records who made it).
    func writeCards(_ context: PageContext, _ book: BookContext, _ writes: [CardBatchWrite]) async throws -> CardBatchResult {
        try await checkQuota(book, adding: try await bytesAdded(by: writes, in: book))
        return try await asAuthor(context) { try await store.applyCardBatch(collectionID: book.id, writes: writes) }
    }

    /// One card put, as `writeCards` does it.
    @discardableResult
    func putCard(_ context: PageContext, _ book: BookContext, name: String, data: Data, card: CardMetadata,
                 precondition: WritePrecondition) async throws -> PutResult {
        var adding = data.count
        if quota.limit != nil, precondition != .ifNoneMatchAny {
            adding -= try await store.resourceInfo(collectionID: book.id, name: name)?.size ?? 0
        }
        try await checkQuota(book, adding: adding)
        return try await asAuthor(context) {
            try await store.putResource(collectionID: book.id, name: name, data: data, contentType: Self.vCardType,
                                        card: card, precondition: precondition)
        }
    }

    /// A card in a shared book counts against the book's owner.
    func checkQuota(_ book: BookContext, adding bytes: Int) async throws {
        try await quota.check(owner: book.info.owner, adding: bytes, in: store)
    }

    var quota: Quota { Quota(limit: configuration.quotaBytes) }

    /// What a batch adds to the owner's bytes: the cards it puts, less the cards they replace
    /// and the cards it moves to the trash. Looked up only when there is a quota.
    private func bytesAdded(by writes: [CardBatchWrite], in book: BookContext) async throws -> Int {
        guard quota.limit != nil else { return 0 }
        var added = 0
        var existing: [String] = []
        for write in writes {
            switch write {
            case .put(let name, let data, _, _, let precondition, _):
                added += data.count
                if precondition != .ifNoneMatchAny { existing.append(name) }
            case .trash(let name, _, _):
                existing.append(name)
            case .dropTrashed:
                break
            }
        }
        if !existing.isEmpty {
            added -= try await store.resourceInfos(collectionID: book.id, names: existing).reduce(0) { $0 + $1.size }
        }
        return added
    }

    /// Runs a write attributed to the signed-in user (the change log records who made it).
    func asAuthor<T: Sendable>(_ context: PageContext, _ body: () async throws -> T) async throws -> T {
        try await ChangeAuthor.$current.withValue(ChangeAuthor(user: context.user, credentialID: 0)) {
            try await body()
        }
    }
}
