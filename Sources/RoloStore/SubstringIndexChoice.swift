import Foundation
import Synchronization

/// Whether a `contains` or `ends-with` query takes its candidates from the trigram index,
/// which covers every book in the database, or scans the book's own index rows. The
/// trigram index costs what its matches cost across the whole database, the scan what the
/// book holds: with 1,000 users of 1,000 cards each, the index made a query of one book
/// 34-57 times slower than in a database of 10,000 cards (Docs/performance.md, "One book
/// among a million cards"), while a scan of a 1,000-card book takes a fraction of a
/// millisecond. So the index is for big books that are a good share of the database (a
/// household's server, a company's shared book), where it turns a 40 ms scan into 1 ms.
/// Same rule on both stores; only the speed depends on it, never the answer.
public final class SubstringIndexChoice: Sendable {
    /// Books smaller than this scan (a few milliseconds at most), by default.
    public static let defaultMinimumBookCards = 5_000
    /// A book holding less than this share of the database's cards scans too: the index's
    /// candidates would be mostly other books' cards.
    package static let minimumShare = 0.1
    /// How long counts are reused: they only steer the plan, so they may be a minute old.
    package static let countsLifetime = Duration.seconds(60)

    /// Book counts kept before the stale ones are dropped.
    static let booksKept = 10_000

    private struct Count { var value: Int; var taken: ContinuousClock.Instant }
    private let books = Mutex<[Int64: Count]>([:])
    private let total = Mutex<Count?>(nil)
    /// Books smaller than this scan; 0 sends every book to the index (tests of its path).
    package let minimumBookCards: Int

    package init(minimumBookCards: Int = defaultMinimumBookCards) {
        self.minimumBookCards = minimumBookCards
    }

    /// Whether to use the trigram index for a query of book `collectionID`, given how to
    /// count the book's cards and (an estimate of) the database's.
    package func usesIndex(collectionID: Int64, bookCards: () async throws -> Int,
                           totalCards: () async throws -> Int) async throws -> Bool {
        if minimumBookCards == 0 { return true }
        let now = ContinuousClock.now
        let book: Int
        if let cached = books.withLock({ $0[collectionID] }), now - cached.taken < Self.countsLifetime {
            book = cached.value
        } else {
            book = try await bookCards()
            books.withLock { books in
                // One entry per book asked about: on a server of many books, the stale ones go.
                if books.count >= Self.booksKept { books = books.filter { now - $0.value.taken < Self.countsLifetime } }
                books[collectionID] = Count(value: book, taken: now)
            }
        }
        guard book >= minimumBookCards else { return false }
        let all: Int
        if let cached = total.withLock({ $0 }), now - cached.taken < Self.countsLifetime {
            all = cached.value
        } else {
            all = try await totalCards()
            total.withLock { $0 = Count(value: all, taken: now) }
        }
        return Double(book) >= Self.minimumShare * Double(max(all, book))
    }

    /// A PUT created a card in the book: its cached count grows with it, so a burst of PUTs
    /// moves a growing book onto the index without waiting out `countsLifetime`.
    package func cardCreated(in collectionID: Int64) {
        books.withLock { books in books[collectionID]?.value += 1 }
        total.withLock { total in total?.value += 1 }
    }

    /// An import changed the book by many cards at once: its counts are taken again by the
    /// next query (a count kept from before a large import would have the book scanned for
    /// a minute after it).
    package func bookChangedInBulk(_ collectionID: Int64) {
        books.withLock { books in _ = books.removeValue(forKey: collectionID) }
        total.withLock { $0 = nil }
    }
}

extension IndexPredicate {
    /// Whether some leaf is a `contains` or `ends-with` that a trigram index could answer:
    /// only then is the choice worth its counts.
    package var hasSubstringMatch: Bool {
        switch self {
        case .textMatch(_, _, _, let match, let negate): !negate && (match == .contains || match == .endsWith)
        case .defined, .notDefined: false
        case .all(let parts), .any(let parts): parts.contains { $0.hasSubstringMatch }
        }
    }
}
