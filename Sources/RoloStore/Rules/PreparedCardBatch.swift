import Foundation

/// A `CardBatchWrite` made ready before the write transaction, the same way on every back
/// end: names checked, ETags and index folds computed (off the single writer), and one batch
/// id for the trash entries it makes, so a merge undoes as one.
package struct PreparedCardBatch: Sendable {
    package enum Write: Sendable {
        case put(ResourceWrite, WritePrecondition, keepPrevious: Bool)
        case trash(name: String, WritePrecondition, TrashReason)
        case dropTrashed(Int64)
    }

    package var writes: [Write]
    package var batch: String
    /// Who asks, for the change log and the trash: read here, where the request's task
    /// locals are, since a back end's transaction may run on another thread.
    package var author: ChangeAuthor?

    package init(_ writes: [CardBatchWrite]) throws {
        self.writes = try writes.map { write in
            switch write {
            case let .put(name, data, contentType, card, precondition, keepPrevious):
                try Naming.validateResource(name)
                return .put(ResourceWrite(name: name, data: data, contentType: contentType, card: card), precondition,
                            keepPrevious: keepPrevious)
            case let .trash(name, precondition, reason):
                return .trash(name: name, precondition, reason)
            case let .dropTrashed(id):
                return .dropTrashed(id)
            }
        }
        batch = UUID().uuidString.lowercased()
        author = ChangeAuthor.current
    }
}

/// The categories of a book as the web UI offers them, from the index's CATEGORIES entries
/// (each the property's text, "a,b"): one category per comma-separated value, the first
/// spelling met of each (case-insensitively), sorted, at most `limit`.
package enum Categories {
    package static func distinct(_ values: some Sequence<String>, limit: Int) -> [String] {
        var seen: [String: String] = [:]
        for value in values {
            for category in value.split(separator: ",") {
                let name = category.trimmingCharacters(in: .whitespaces)
                guard !name.isEmpty else { continue }
                let key = CaseFolding.search(name)
                if seen[key] == nil { seen[key] = name }
            }
        }
        return Array(seen.values.sorted { CaseFolding.search($0) < CaseFolding.search($1) }.prefix(max(limit, 0)))
    }
}
