import RoloStore

/// RFC 4918 §15.6, §15.8: the locks on a resource and the kinds it accepts.
enum LockProperties {
    static let all: [LiveProperty] = [supportedLock, lockDiscovery]
    private static let kinds = NodeKind.storedCollections.union(NodeKind.objects)

    static let supportedLock = LiveProperty(.dav("supportedlock"), kinds: kinds) { _ in
        ["exclusive", "shared"].map {
            "<D:lockentry><D:lockscope><D:\($0)/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"
        }.joined()
    }

    static let lockDiscovery = LiveProperty(.dav("lockdiscovery"), kinds: kinds) { context in
        guard let key = context.node.lockKey else { return "" }
        return await context.service.locks.locks(covering: key).map(DAVService.activeLockXML).joined()
    }
}
