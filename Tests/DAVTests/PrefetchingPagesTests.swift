import Foundation
import Testing
@testable import DAV

/// `PrefetchingPages` reads the next page while the current one is written: the pages still
/// come in order, each once, nothing is read past the last, and `base` ends as the wrapped
/// pages would (a multiget's 404s live there).
@Suite struct PrefetchingPagesTests {
    /// Reads made, shared by every copy of `Numbers` (the wrapper copies its pages).
    final class Reads: @unchecked Sendable {
        private let lock = NSLock()
        private var made = 0
        private var aheadFlags: [Bool] = []
        func add(readAhead: Bool) { lock.withLock { made += 1; aheadFlags.append(readAhead) } }
        var count: Int { lock.withLock { made } }
        /// For each read in order, whether it ran on `ReadAheadExecutor`.
        var onReadAheadExecutor: [Bool] { lock.withLock { aheadFlags } }
    }

    /// Pages [0], [1], ... up to `total`.
    struct Numbers: ListingPages {
        let total: Int
        let reads: Reads
        var next = 0
        var isFinished: Bool { next >= total }

        mutating func nextPage() async throws -> [Int] {
            let executor = withUnsafeCurrentTask { $0?.unownedTaskExecutor }
            reads.add(readAhead: executor == ReadAheadExecutor.shared.asUnownedTaskExecutor())
            defer { next += 1 }
            return [next]
        }
    }

    @Test func pagesComeInOrderAndTheNextIsReadAhead() async throws {
        let reads = Reads()
        var pages = PrefetchingPages(Numbers(total: 4, reads: reads))
        var seen = try await pages.nextPage()
        let deadline = ContinuousClock.now + .seconds(30)
        while reads.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(reads.count == 2, "the second page is read before it is asked for")
        while !pages.isFinished { seen += try await pages.nextPage() }
        #expect(seen == [0, 1, 2, 3])
        #expect(pages.base.next == 4)
        #expect(reads.count == 4, "nothing read past the last page")
        #expect(reads.onReadAheadExecutor == [false, true, true, true],
                "the first page where the caller runs, the others on the read-ahead threads")
    }

    @Test func aSinglePageReadsNothingAhead() async throws {
        let reads = Reads()
        var pages = PrefetchingPages(Numbers(total: 1, reads: reads))
        #expect(try await pages.nextPage() == [0])
        #expect(pages.isFinished)
        try await Task.sleep(for: .milliseconds(50))
        #expect(reads.count == 1)
    }
}
