import Foundation
import RoloStore

extension InMemoryCardStore {
    public func putResource(collectionID: Int64, name: String, data: Data, contentType: String,
                            card: CardMetadata?, precondition: WritePrecondition) throws -> PutResult {
        try Naming.validateResource(name)
        let write = ResourceWrite(name: name, data: data, contentType: contentType, card: card)
        let now = clock.now
        return try transaction { state in
            var book = try state.book(collectionID)
            let existing = try book.checkWrite(name: name, card: card, precondition: precondition)
            let seq = book.info.syncSeq + 1
            book.store(write, id: existing?.id ?? state.newResourceID(), seq: seq, now: now)
            book.advance(to: seq, now: now)
            state.collections[collectionID] = book
            return PutResult(etag: write.etag, created: existing == nil, seq: seq)
        }
    }

    public func deleteResource(collectionID: Int64, name: String, precondition: WritePrecondition) throws {
        let author = ChangeAuthor.current
        let now = clock.now
        try transaction { state in
            var book = try state.book(collectionID)
            try precondition.check(currentETag: book.resources[name]?.info.etag)
            guard book.resources[name] != nil else { throw StoreError.notFound }
            let seq = book.info.syncSeq + 1
            book.remove(name, seq: seq, now: now, author: author)
            book.advance(to: seq, now: now)
            state.collections[collectionID] = book
        }
    }

    public func resource(collectionID: Int64, name: String) -> StoredResource? {
        state.collections[collectionID]?.resources[name]?.stored
    }

    /// Each present name once, in UTF-8 byte order, as the back ends answer (the store
    /// suite holds them to it: `ListingPageTests`).
    public func resources(collectionID: Int64, names: [String]) -> [StoredResource] {
        guard let book = state.collections[collectionID] else { return [] }
        return Set(names.map(Exact.init)).compactMap { book.resources[$0.string] }
            .sorted { $0.info.name.precedesInBytes($1.info.name) }.map(\.stored)
    }

    public func listResources(collectionID: Int64) -> [ResourceInfo] {
        state.collections[collectionID]?.sortedResources.map(\.info) ?? []
    }

    public func allResources(collectionID: Int64) -> [StoredResource] {
        state.collections[collectionID]?.sortedResources.map(\.stored) ?? []
    }

    public func resourceInfo(collectionID: Int64, name: String) -> ResourceInfo? {
        state.collections[collectionID]?.resources[name]?.info
    }

    public func resourceName(collectionID: Int64, uid: String) -> String? {
        state.collections[collectionID]?.uids[uid]
    }

    /// COPY or MOVE as one write: the target's dead properties become the source's (taken
    /// before a move drops the source's with it), then the source's tombstone and the
    /// target's write, each book's seq moving once per change it records.
    public func transferResource(collectionID: Int64, name: String, sourceETag: String,
                                 to targetCollectionID: Int64, name targetName: String,
                                 data: Data, contentType: String, card: CardMetadata?, move: Bool) throws -> PutResult {
        try Naming.validateResource(targetName)
        let write = ResourceWrite(name: targetName, data: data, contentType: contentType, card: card)
        let now = clock.now
        return try transaction { state in
            guard let source = state.collections[collectionID]?.resources[name] else { throw StoreError.notFound }
            guard source.info.etag == sourceETag else { throw StoreError.preconditionFailed }
            _ = try state.book(targetCollectionID)
            var touched: Set<Int64> = []
            func nextSeq(_ id: Int64) -> Int64 {
                touched.insert(id)
                state.collections[id]!.info.syncSeq += 1
                return state.collections[id]!.info.syncSeq
            }
            let properties = state.collections[collectionID]!.properties[name]
            state.collections[targetCollectionID]!.properties[targetName] = properties
            if move {
                state.collections[collectionID]!.remove(name, seq: nextSeq(collectionID), now: now, author: write.author)
            }
            let existing = try state.collections[targetCollectionID]!.checkWrite(name: targetName, card: card, precondition: .none)
            let seq = nextSeq(targetCollectionID)
            let id = existing?.id ?? state.newResourceID()
            state.collections[targetCollectionID]!.store(write, id: id, seq: seq, now: now)
            // Their seqs moved with each change they recorded.
            for id in touched { state.collections[id]!.info.modified = now }
            return PutResult(etag: write.etag, created: existing == nil, seq: seq)
        }
    }

    // MARK: Groups

    /// In the order the card lists them.
    public func groupMembers(collectionID: Int64, groupName: String) -> [String] {
        state.collections[collectionID]?.resources[groupName]?.members ?? []
    }

    public func groups(collectionID: Int64, containingUID uid: String) -> [String] {
        state.collections[collectionID]?.sortedResources.filter { $0.members.contains { $0.isExactly(uid) } }.map(\.info.name) ?? []
    }

    // MARK: Bulk

    /// Each batch is one write with one seq per card, as on the back ends: a card replaces
    /// the resource of its name, and a resource of another name holding its UID is deleted
    /// first (a tombstone, one seq before the card's) so the UID stays unique. Names are
    /// checked before anything is written.
    public func importCards(collectionID: Int64, cards: [CardImport], batchSize: Int,
                            progress: (@Sendable (Int) -> Void)?) throws {
        for card in cards { try Naming.validateResource(card.name) }
        let batchSize = max(batchSize, 1)
        var done = 0
        for start in stride(from: 0, to: cards.count, by: batchSize) {
            let batch = cards[start..<min(start + batchSize, cards.count)].map { ResourceWrite($0) }
            let now = clock.now
            try transaction { state in
                var book = try state.book(collectionID)
                var seq = book.info.syncSeq
                for write in batch {
                    seq += 1
                    if let uid = write.card?.uid, let holder = book.uids[uid], !holder.isExactly(write.name) {
                        book.remove(holder, seq: seq, now: now, author: nil)
                        seq += 1
                    }
                    book.store(write, id: book.resources[write.name]?.id ?? state.newResourceID(), seq: seq, now: now)
                }
                book.advance(to: seq, now: now)
                state.collections[collectionID] = book
            }
            done += batch.count
            progress?(done)
        }
    }
}
