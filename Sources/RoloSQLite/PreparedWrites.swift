import Foundation
import RoloStore

/// The `ResourceWrite`s of an import batch, prepared chunk by chunk on GCD's global queue
/// while the writer consumes them in order, so that hashing and folding run on the other
/// cores at the same time as SQLite rather than before it. Not the cooperative pool: the
/// writer blocks while it waits, and a pool whose few threads were all waiting on that
/// writer could never prepare the chunk it needs.
final class PreparedWrites: @unchecked Sendable {
    private static let chunkSize = 512
    private let condition = NSCondition()
    /// nil until prepared; emptied once taken, so a big import holds only what is in flight.
    private var chunks: [[ResourceWrite]?]

    /// Starts preparing `cards` at once.
    init(_ cards: ArraySlice<CardImport>) {
        let starts = Array(stride(from: cards.startIndex, to: cards.endIndex, by: Self.chunkSize))
        chunks = Array(repeating: nil, count: starts.count)
        for (index, start) in starts.enumerated() {
            let slice = cards[start..<min(start + Self.chunkSize, cards.endIndex)]
            DispatchQueue.global(qos: .userInitiated).async { self.store(slice.map(ResourceWrite.init), at: index) }
        }
    }

    var chunkCount: Int { chunks.count }

    /// Chunk `index`, waiting for it if it is still being prepared. Call from a thread that
    /// may block (the database writer's), never from a task.
    func take(_ index: Int) -> [ResourceWrite] {
        condition.lock()
        defer { condition.unlock() }
        while chunks[index] == nil { condition.wait() }
        let writes = chunks[index]!
        chunks[index] = []
        return writes
    }

    private func store(_ writes: [ResourceWrite], at index: Int) {
        condition.lock()
        chunks[index] = writes
        condition.broadcast()
        condition.unlock()
    }
}
