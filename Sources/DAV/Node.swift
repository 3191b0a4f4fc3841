import Foundation
import RoloStore

/// A resource the request addresses, after the storage lookup.
enum Node: Sendable {
    case root
    case principals
    case homes
    case principal(String)
    case home(String)
    case collection(CollectionInfo)
    /// A card (in an address book) or a file (in a plain collection); the body when loaded.
    case object(CollectionInfo, ResourceInfo, Data?)

    var kind: NodeKind {
        switch self {
        case .root, .principals, .homes: .root
        case .principal: .principal
        case .home: .home
        case .collection(let info): info.kind == .addressBook ? .addressBook : .plainCollection
        case .object(let collection, _, _): collection.kind == .addressBook ? .card : .file
        }
    }

    var isCollection: Bool { kind != .card && kind != .file }

    /// The lock-table key (`user/comp/comp`), nil above the stored tree.
    var lockKey: String? {
        switch self {
        case .collection(let info): ([info.owner] + info.path).joined(separator: "/")
        case .object(let collection, let info, _): ([collection.owner] + collection.path + [info.name]).joined(separator: "/")
        default: nil
        }
    }

    /// The store coordinates of the node's dead properties, nil where none can be stored.
    var deadPropertyKey: (collectionID: Int64, resource: String?)? {
        switch self {
        case .collection(let info): (info.id, nil)
        case .object(let collection, let info, _): (collection.id, info.name)
        default: nil
        }
    }
}

/// What kind of resource a node is: decides which live properties it has.
enum NodeKind: Sendable, Hashable, CaseIterable {
    case root, principal, home, addressBook, plainCollection, card, file

    static let collections: Set<NodeKind> = [.root, .home, .addressBook, .plainCollection]
    static let storedCollections: Set<NodeKind> = [.addressBook, .plainCollection]
    static let objects: Set<NodeKind> = [.card, .file]
    static let all = Set(NodeKind.allCases)
}

/// The result of looking a path up.
enum Resolution: Sendable {
    case found(Node)
    /// Nothing at the path; `parent` is the collection that would hold it (nil when the
    /// parent is missing too, or is the home, see `parentIsHome`).
    case missing(parent: CollectionInfo?, parentIsHome: Bool, name: String)
}
