import DAVXML
import RoloStore

/// Change tracking and reports: RFC 6578 sync-token, Apple's getctag, RFC 3253
/// supported-report-set.
enum SyncProperties {
    static let all: [LiveProperty] = [syncToken, ctag, supportedReportSet]

    static let syncToken = LiveProperty(.dav("sync-token"), kinds: [.addressBook]) { context in
        guard case .collection(let info) = context.node else { return nil }
        return .text(SyncToken(collectionID: info.id, seq: info.syncSeq).description)
    }

    static let ctag = LiveProperty(.calendarServer("getctag"), kinds: [.addressBook]) { context in
        guard case .collection(let info) = context.node else { return nil }
        return .text(String(info.syncSeq))
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
