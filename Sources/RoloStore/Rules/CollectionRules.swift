/// Where collections may be made, decided before and inside a back end's transaction.
package enum CollectionRules {
    /// Checks a new collection's path before any database work: components named as
    /// `Naming` allows, and no `~` at the top of a home, where it names mounts of shared
    /// books (`Share.mountName`).
    package static func validateNewPath(_ path: [String]) throws {
        guard !path.isEmpty else { throw StoreError.alreadyExists }
        for component in path { try Naming.validate(component, what: "collection") }
        if path.count == 1, path[0].contains("~") { throw StoreError.tildeInHomeCollection }
    }

    /// Inside the transaction, once the parent is found: address books live directly in the
    /// home, and only plain collections nest.
    package static func checkNesting(parent: CollectionKind, child: CollectionKind) throws(StoreError) {
        guard parent == .plain, child == .plain else { throw StoreError.addressBookHoldsNoCollections }
    }
}
