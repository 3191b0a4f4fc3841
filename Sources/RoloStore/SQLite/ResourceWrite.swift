import Foundation

/// A resource ready to be written. Its ETag and folded index entries need no database, so
/// they are computed before the write transaction: off the single writer, and for imports
/// on every core.
struct ResourceWrite: Sendable {
    var name: String
    var data: Data
    var contentType: String
    var etag: String
    var card: CardMetadata?
    var entries: [FoldedIndexEntry]
    /// Who writes it, for the change log: read where the write is asked for, since the
    /// writer's transaction runs on another thread without the request's task locals.
    var author: ChangeAuthor?

    init(name: String, data: Data, contentType: String, card: CardMetadata?) {
        self.name = name
        self.data = data
        self.contentType = contentType
        self.card = card
        etag = ETag.of(data)
        entries = card?.indexEntries.map(FoldedIndexEntry.init) ?? []
        author = ChangeAuthor.current
    }

    init(_ card: CardImport) {
        self.init(name: card.name, data: card.data, contentType: card.contentType, card: card.card)
    }
}
