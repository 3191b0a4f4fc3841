import RoloStore

/// RFC 4331 quota properties on the home and its collections (not in allprop: they cost a
/// store query).
enum QuotaProperties {
    static let all: [LiveProperty] = [used, available]
    private static let kinds: Set<NodeKind> = [.home, .addressBook, .plainCollection]

    static let used = LiveProperty(.dav("quota-used-bytes"), kinds: kinds, inAllprop: false) { context in
        .text(String(try await context.store.usedBytes(owner: context.user)))
    }

    static let available = LiveProperty(.dav("quota-available-bytes"), kinds: kinds, inAllprop: false) { context in
        guard let quota = context.service.configuration.quotaBytes else { return nil }
        return .text(String(max(0, quota - (try await context.store.usedBytes(owner: context.user)))))
    }
}
