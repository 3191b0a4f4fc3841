import Foundation

/// What an undo would do to a book (issue 31), decided from the book's versions alone, the
/// same for every back end and for the dry run and the real one.
///
/// "The book as it was at T" reverts every card changed after T to its last version at or
/// before T (a card created after T is removed, one deleted comes back). "What credential X
/// did since T" reverts each card X changed after T to its version before X's first change;
/// a card someone else changed after that is a conflict, left alone unless
/// `includeConflicts`.
public struct UndoPlan: Sendable, Hashable {
    public enum Step: Sendable, Hashable {
        /// Put the version back (the card was changed, or deleted: `current` is then nil).
        case revert(name: String, to: CardVersion, current: String?)
        /// Remove a card created after the time; `current` is its ETag now.
        case remove(name: String, current: String)

        public var name: String {
            switch self {
            case let .revert(name, _, _), let .remove(name, _): name
            }
        }
    }

    /// A card changed by another author after the undone credential: its name and those authors' changes.
    public struct Conflict: Sendable, Hashable {
        public var name: String
        public var others: [CardVersion]
    }

    public var steps: [Step]
    public var conflicts: [Conflict]

    /// Whose changes an undo takes back.
    public struct Author: Sendable, Hashable {
        public var user: String
        public var credentialID: Int64
        public init(user: String, credentialID: Int64) { self.user = user; self.credentialID = credentialID }
    }

    /// The plan from `bookVersions(collectionID:since:)`'s answer.
    public init(versions: [CardVersion], since date: Date, author: Author?, includeConflicts: Bool = false) {
        var steps: [Step] = []
        var conflicts: [Conflict] = []
        let byName = Dictionary(grouping: versions, by: \.name)
        for name in byName.keys.sorted() {
            let cardVersions = byName[name]!.sorted { $0.seq < $1.seq }
            guard let current = cardVersions.last else { continue }
            let after = cardVersions.filter { $0.at > date }
            let firstUndone: CardVersion?
            if let author {
                firstUndone = after.first { $0.user == author.user && $0.credentialID == author.credentialID }
            } else {
                firstUndone = after.first
            }
            guard let firstUndone else { continue }
            if let author {
                let others = cardVersions.filter {
                    $0.seq > firstUndone.seq && !($0.user == author.user && $0.credentialID == author.credentialID)
                }
                if !others.isEmpty {
                    conflicts.append(Conflict(name: name, others: others))
                    if !includeConflicts { continue }
                }
            }
            let target = cardVersions.last { $0.seq < firstUndone.seq }
            if let target, !target.isDeletion {
                guard target.etag != current.etag else { continue }
                steps.append(.revert(name: name, to: target, current: current.etag))
            } else if let etag = current.etag {
                steps.append(.remove(name: name, current: etag))
            }
        }
        self.steps = steps
        self.conflicts = conflicts
    }

    public var isEmpty: Bool { steps.isEmpty }

    /// Whether the versions kept tell what every card was at `date`: not before the latest
    /// pruning's cutoff (`CardHistoryStore.historyCompleteSince`). Before it, a card whose
    /// older versions were pruned would look created after `date`, and be removed.
    public static func isComplete(since date: Date, completeSince: Date?) -> Bool {
        completeSince.map { date >= $0 } ?? true
    }
}
