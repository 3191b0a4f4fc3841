import Foundation

/// A resource ready to be written. Its ETag and folded index entries need no database, so
/// they are computed before the write transaction: off the single writer, and for imports
/// on every core.
package struct ResourceWrite: Sendable {
    package var name: String
    package var data: Data
    package var contentType: String
    package var etag: String
    package var card: CardMetadata?
    package var entries: [FoldedIndexEntry]
    /// Who writes it, for the change log: read where the write is asked for, since the
    /// writer's transaction runs on another thread without the request's task locals.
    package var author: ChangeAuthor?
    /// How the version this write makes is kept (issue 31), split off the writer like the ETag.
    package var versionBody: VersionBody

    package init(name: String, data: Data, contentType: String, card: CardMetadata?) {
        self.name = name
        self.data = data
        self.contentType = contentType
        self.card = card
        etag = ETag.of(data)
        entries = card?.indexEntries.map(FoldedIndexEntry.init) ?? []
        author = ChangeAuthor.current
        versionBody = VersionBody(data)
    }

    package init(_ card: CardImport) {
        self.init(name: card.name, data: card.data, contentType: card.contentType, card: card.card)
    }
}
