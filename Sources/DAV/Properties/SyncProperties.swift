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
        let reports: [PropertyName] = context.node.kind == .addressBook || context.node.kind == .card
            ? [.cardDAV("addressbook-multiget"), .cardDAV("addressbook-query"), .dav("sync-collection"), .dav("expand-property")]
            : [.dav("expand-property")]
        return .xml { writer in
            for report in reports {
                writer.element(Namespace.dav, "supported-report") { $0.element(Namespace.dav, "report") { $0.empty(report) } }
            }
        }
    }
}
