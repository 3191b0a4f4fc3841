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
        let properties = PropertyRequest(report: body)
        let token = body.child(Namespace.dav, "sync-token")?.text.trimmingXMLWhitespace ?? ""
        let limit = try resultLimit(body.child(Namespace.dav, "limit"))
        let invalidToken = DAVError.precondition(403, .dav("valid-sync-token"), message: "Unknown or expired sync token; sync again from scratch.")

        var multistatus = Multistatus()
        let bookHref = hrefs.href(for: node)
        if token.isEmpty, limit == nil {
            // Bodies are read only when address-data is asked for.
            if properties.wantsBodies {
                try await addCards(try await store.allResources(collectionID: book.id), in: book, request: request,
                                   properties: properties, to: &multistatus)
            } else {
                let infos = try await store.listResources(collectionID: book.id)
                try await addCards(infos.lazy.map { StoredResource(info: $0, data: Data()) }, in: book, request: request,
                                   properties: properties, to: &multistatus)
            }
            return multistatusResponse(multistatus.finish(syncToken: SyncToken(collectionID: book.id, seq: book.syncSeq).description))
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
        let present = changeSet.changes.filter { !$0.deleted }.map(\.name)
        let cards = present.isEmpty ? [] : try await store.resources(collectionID: book.id, names: present)
        let byName = Dictionary(cards.map { ($0.info.name, $0) }, uniquingKeysWith: { first, _ in first })
        let rows = CardResponseWriter(properties, withBodies: true)
        for change in changeSet.changes {
            let href = hrefs.resource(owner: book.owner, collectionPath: book.path, name: change.name)
            if let card = byName[change.name], !change.deleted {
                try await addCard(card.info, body: card.data, in: book, href: href, rows: rows,
                                  properties: properties, user: request.user, to: &multistatus)
            } else if !initial {
                multistatus.add(href: href, status: 404)
            }
        }
        if changeSet.truncated {
            multistatus.add(href: bookHref, status: 507, error: .precondition(507, .dav("number-of-matches-within-limits")))
        }
        return multistatusResponse(multistatus.finish(syncToken: SyncToken(collectionID: book.id, seq: changeSet.newSeq).description))
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
