import Authorization
import DAVXML
import RoloStore

/// What a live property's value is computed from: the node, who asks, and the requested
/// element itself (`address-data` reads its attributes and children).
struct PropertyContext: Sendable {
    let service: DAVService
    let credential: Credential
    let node: Node
    let href: String
    let element: XMLElement?

    var user: String { credential.user }
    var store: any DAVStore { service.store }
    var hrefs: HrefBuilder { service.hrefs }
}

/// One live property, registered under its Clark name (Xandikos style): adding a property is
/// adding one value, not editing a switch.
struct LiveProperty: Sendable {
    let name: PropertyName
    /// Resource kinds that have the property; elsewhere the name is a dead property.
    let kinds: Set<NodeKind>
    /// Returned by `allprop` (cheap, commonly wanted); others only when asked by name.
    let inAllprop: Bool
    /// Clients may set it with PROPPATCH (on stored collections); all others are protected.
    let writable: Bool
    /// The content of the property element; nil when the resource has no value (answered
    /// 404 when asked by name).
    let value: @Sendable (PropertyContext) async throws -> PropertyValue?

    init(_ name: PropertyName, kinds: Set<NodeKind>, inAllprop: Bool = true, writable: Bool = false,
         value: @escaping @Sendable (PropertyContext) async throws -> PropertyValue?) {
        self.name = name; self.kinds = kinds; self.inAllprop = inAllprop
        self.writable = writable; self.value = value
    }
}

/// Every live property the engine knows, by Clark name.
enum PropertyRegistry {
    static let all: [LiveProperty] =
        WebDAVProperties.all + AccessProperties.all + CardDAVProperties.all + SyncProperties.all + QuotaProperties.all
        + LockProperties.all + PushProperties.all

    static let byName: [PropertyName: LiveProperty] = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// The live property `name` as it applies to `kind`, nil when it would be dead there.
    static func property(_ name: PropertyName, for kind: NodeKind) -> LiveProperty? {
        guard let property = byName[name], property.kinds.contains(kind) else { return nil }
        return property
    }

    static func properties(for kind: NodeKind) -> [LiveProperty] {
        all.filter { $0.kinds.contains(kind) }
    }
}
