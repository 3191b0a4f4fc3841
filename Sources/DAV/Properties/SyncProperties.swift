import RoloStore

/// Change tracking and reports: RFC 6578 sync-token, Apple's getctag, RFC 3253
/// supported-report-set.
enum SyncProperties {
    static let all: [LiveProperty] = [syncToken, ctag, supportedReportSet]

    static let syncToken = LiveProperty(.dav("sync-token"), kinds: [.addressBook]) { context in
        guard case .collection(let info) = context.node else { return nil }
        return PropertyXML.text(SyncToken(collectionID: info.id, seq: info.syncSeq).description)
    }

    static let ctag = LiveProperty(.calendarServer("getctag"), kinds: [.addressBook]) { context in
        guard case .collection(let info) = context.node else { return nil }
        return String(info.syncSeq)
    }

    static let supportedReportSet = LiveProperty(.dav("supported-report-set"), kinds: NodeKind.all, inAllprop: false) { context in
        let reports: [PropertyName] = context.node.kind == .addressBook || context.node.kind == .card
            ? [.cardDAV("addressbook-multiget"), .cardDAV("addressbook-query"), .dav("sync-collection"), .dav("expand-property")]
            : [.dav("expand-property")]
        return reports.map { "<D:supported-report><D:report>\(ResponseXMLWriter.emptyTag($0))</D:report></D:supported-report>" }.joined()
    }
}
