import DAVXML
import RoloStore

/// RFC 4918 §15.6, §15.8: the locks on a resource and the kinds it accepts.
enum LockProperties {
    static let all: [LiveProperty] = [supportedLock, lockDiscovery]
    private static let kinds = NodeKind.storedCollections.union(NodeKind.objects)

    static let supportedLock = LiveProperty(.dav("supportedlock"), kinds: kinds) { _ in
        .xml { writer in
            for scope in ["exclusive", "shared"] {
                writer.element(Namespace.dav, "lockentry") { writer in
                    writer.element(Namespace.dav, "lockscope") { $0.empty(Namespace.dav, scope) }
                    writer.element(Namespace.dav, "locktype") { $0.empty(Namespace.dav, "write") }
                }
            }
        }
    }

    static let lockDiscovery = LiveProperty(.dav("lockdiscovery"), kinds: kinds) { context in
        guard let key = context.node.lockKey else { return .emptyElements([]) }
        let locks = try await context.service.locks.locks(covering: key)
        return .xml { writer in
            for lock in locks { DAVService.writeActiveLock(lock, into: &writer) }
        }
    }
}
