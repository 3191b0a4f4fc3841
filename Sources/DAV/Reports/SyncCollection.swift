import DAVXML
import Foundation
import RoloStore

/// sync-collection (RFC 6578) on an address book: an empty token lists every card; a token
/// lists what changed since (deletions as 404 responses). `limit/nresults` truncates with a
/// 507 response for the collection and a token that continues. The Depth header is not
/// checked: clients send 0, 1 or none and all mean the same for a flat address book.
extension DAVService {
    func syncCollection(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        let book = try addressBook(node, report: "sync-collection")
        let properties = try PropertyRequest(report: body)
        let token = body.child(Namespace.dav, "sync-token")?.text.trimmingXMLWhitespace ?? ""
        let limit = try resultLimit(body.child(Namespace.dav, "limit"))
        let invalidToken = DAVError.precondition(403, .dav("valid-sync-token"), message: "Unknown or expired sync token; sync again from scratch.")

        let bookHref = hrefs.href(for: node)
        let rows = CardResponseWriter(properties, withBodies: true)
        let credential = request.credential
        let memberPrefix = EscapedHref(bookHref)
        let reads = CardReads(request, book: book.id, withBodies: properties.wantsBodies)
        // A sync from nothing hands the client the whole book: the access history flags it.
        if token.isEmpty { request.tally?.fullDownload(book: book.id) }
        if token.isEmpty, limit == nil {
            // The token is the book's seq as read when the request was resolved, before the
            // first page. A card changed while the pages are read and sent gets a later seq,
            // so the next incremental sync reports it again, whichever state a page carried.
            let syncToken = SyncToken(collectionID: book.id, seq: book.syncSeq).description
            // Bodies are read only when address-data is asked for.
            let pages = BookPages(store: store, collectionID: book.id, withBodies: properties.wantsBodies,
                                  pageSize: configuration.listingPageSize, bodyLimit: configuration.pageBodyLimit)
            let writer: ItemWriter<StoredResource> = memberWriter(in: book, collectionHref: memberPrefix, rows: rows,
                                                                  properties: properties, credential: credential) { $0 }
            return try await pagedMultistatus(Multistatus(), pages: pages, syncToken: syncToken, writer: writer, reads: reads)
        }

        let since: Int64
        if token.isEmpty {
            since = 0
        } else {
            guard let parsed = SyncToken(token, collectionID: book.id) else { throw invalidToken }
            since = parsed.seq
        }
        let changeSet: ChangeSet
        do {
            changeSet = try await store.changes(collectionID: book.id, since: since, limit: limit)
        } catch StoreError.syncTokenTooOld, StoreError.invalidSyncToken {
            throw invalidToken
        }
        let initial = token.isEmpty
        let cards = NamedCardReader(store: store, collectionID: book.id, withBodies: properties.wantsBodies,
                                    bodyLimit: configuration.pageBodyLimit)
        let pages = ChangePages(cards, changes: changeSet, pageSize: configuration.listingPageSize)
        let syncToken = SyncToken(collectionID: book.id, seq: changeSet.newSeq).description
        let hrefs = self.hrefs
        let writer: ItemWriter<ChangedCard>
        if let rows {
            writer = .rows { item, multistatus in
                if let card = item.card {
                    multistatus.add(card: card.info, body: card.data, storedBody: card.storedBody(in: book.id),
                                    memberOf: memberPrefix, writer: rows)
                    reads?.count(1)
                } else if !initial {
                    multistatus.add(href: hrefs.member(item.change.name, ofCollectionHref: bookHref), status: 404)
                }
            }
        } else {
            writer = .generic { [self] item, multistatus in
                if let card = item.card {
                    try await addMember(card.info, body: card.data, bodyLeftOut: card.bodyLeftOut, in: book,
                                        collectionHref: memberPrefix, rows: nil,
                                        properties: properties, credential: credential, to: &multistatus)
                    reads?.count(1)
                } else if !initial {
                    multistatus.add(href: hrefs.member(item.change.name, ofCollectionHref: bookHref), status: 404)
                }
            }
        }
        return try await pagedMultistatus(Multistatus(), pages: pages, syncToken: syncToken, writer: writer, tail: { _, multistatus in
            if changeSet.truncated {
                multistatus.addTruncation(href: bookHref)
            }
        })
    }

    /// `<D:limit><D:nresults>N</D:nresults></D:limit>` (also CardDAV's `C:limit`): N, or
    /// nil when absent; 400 when not a positive number.
    func resultLimit(_ element: XMLElement?) throws(DAVError) -> Int? {
        guard let element else { return nil }
        let nresults = element.children.first { $0.name == "nresults" }
        guard let text = nresults?.text.trimmingXMLWhitespace, let value = Int(text), value > 0 else {
            throw DAVError.badRequest("limit needs a positive nresults.")
        }
        return value
    }
}
