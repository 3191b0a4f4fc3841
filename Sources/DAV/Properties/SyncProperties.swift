import DAVXML
import RoloStore

/// Change tracking and reports: RFC 6578 sync-token, Apple's getctag, RFC 3253
/// supported-report-set.
enum SyncProperties {
    static let all: [LiveProperty] = [syncToken, ctag, supportedReportSet]

    /// A book's token names the book and its seq (the same through every mount); a home's
    /// names the home and its seq, which moves when its list of books changes.
    static let syncToken = LiveProperty(.dav("sync-token"), kinds: [.addressBook, .home]) { context in
        switch context.node {
        case .collection(let info): return .text(SyncToken(collectionID: info.id, seq: info.syncSeq).description)
        case .home(let user): return try await context.store.account(name: user).map { .text("\(homeTokenPrefix)\($0.homeSeq)") }
        default: return nil
        }
    }

    static let homeTokenPrefix = "http://rolo.invalid/home/"

    static let ctag = LiveProperty(.calendarServer("getctag"), kinds: [.addressBook, .home]) { context in
        switch context.node {
        case .collection(let info): return .text(String(info.syncSeq))
        case .home(let user): return try await context.store.account(name: user).map { .text("home-\($0.homeSeq)") }
        default: return nil
        }
    }

    static let supportedReportSet = LiveProperty(.dav("supported-report-set"), kinds: NodeKind.all, inAllprop: false) { context in
        let reports = supportedReports(on: context.node)
        return .xml { writer in
            for report in reports {
                writer.element(Namespace.dav, "supported-report") { $0.element(Namespace.dav, "report") { $0.empty(report) } }
            }
        }
    }

    /// The reports a node answers (RFC 3744 §9's where they apply).
    static func supportedReports(on node: Node) -> [PropertyName] {
        let principalSearch: [PropertyName] = [.dav("principal-property-search"), .dav("principal-search-property-set"),
                                               .dav("principal-match")]
        let acl: [PropertyName] = [.dav("acl-principal-prop-set"), .dav("principal-match")]
        switch node {
        case .root, .principals, .principal:
            return [.dav("expand-property")] + principalSearch
        case .homes:
            return [.dav("expand-property")]
        case .home:
            return [.dav("expand-property"), .dav("principal-match")]
        case .collection, .object:
            let cards: [PropertyName] = node.kind == .addressBook || node.kind == .card
                ? [.cardDAV("addressbook-multiget"), .cardDAV("addressbook-query"), .dav("sync-collection")] : []
            return cards + [.dav("expand-property")] + acl
        }
    }
}
