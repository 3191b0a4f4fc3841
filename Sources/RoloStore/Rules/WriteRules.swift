/// A resource as a write finds it where it lands: read by the back end inside its write
/// transaction, judged here.
package struct ExistingResource: Sendable {
    package var id: Int64
    package var etag: String
    /// The card's UID; nil for a resource that is no card (a plain collection's file).
    package var uid: String?
    package init(id: Int64, etag: String, uid: String?) { self.id = id; self.etag = etag; self.uid = uid }
}

/// The checks every write of a resource passes, in one place for every back end and every
/// write path (PUT, COPY/MOVE, the web UI's batches): a back end reads what the write finds
/// inside its transaction and asks here, so the same input gets the same error on SQLite
/// and PostgreSQL by construction.
package enum WriteRules {
    /// Checks a write of `card` (nil for a resource that is no card) as `name`, in this order:
    /// - the HTTP precondition against the current ETag (412 before anything else);
    /// - the card's UID is held by no other resource of the book (RFC 6352 §6.3.2.1
    ///   `no-uid-conflict`, naming the holder);
    /// - a card that replaces another keeps its UID (the same precondition: a client that
    ///   changes a card's UID in place would leave every other client holding the old card
    ///   under the same name with nothing to tell it the card became another one).
    /// `uidHolder` is the name of the resource that holds the card's UID now, if any.
    package static func checkWrite(name: String, card: CardMetadata?, precondition: WritePrecondition,
                                   existing: ExistingResource?, uidHolder: String?) throws(StoreError) {
        try precondition.check(currentETag: existing?.etag)
        guard let card else { return }
        // Bytes, not String equality: Swift calls "é" and "e\u{301}" equal, the databases
        // (and so the names and UIDs they hold) do not.
        if let uidHolder, !uidHolder.isExactly(name) { throw StoreError.uidConflict(existingName: uidHolder) }
        if let previous = existing?.uid, !previous.isExactly(card.uid) {
            throw StoreError.uidConflict(existingName: name)
        }
    }
}
