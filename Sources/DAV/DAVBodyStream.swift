import Foundation

/// A response body written while it is sent. A PROPFIND of a 100 000-card book answers some
/// 30 MB; held whole (with the rows it comes from and the copies on its way to the socket)
/// it took most of the server's memory. Streamed, the engine reads the rows a page at a
/// time and hands the body over in chunks of some 256 KB, each written only when the
/// connection has taken the previous one, so memory stays at a page and a chunk.
///
/// A closure rather than an `AsyncSequence`: the producer keeps its state (the page cursor,
/// the XML writer's open elements) in local variables, and the consumer's `write` is
/// called in the same task, so a chunk is never queued ahead of the network.
public struct DAVBodyStream: Sendable {
    private let produce: @Sendable (_ write: (_ chunk: [UInt8]) async throws -> Void) async throws -> Void

    /// - Parameter produce: writes the whole body through `write`, chunk after chunk, and
    ///   returns when it is complete. It throws when the body cannot be completed.
    public init(_ produce: @escaping @Sendable (_ write: (_ chunk: [UInt8]) async throws -> Void) async throws -> Void) {
        self.produce = produce
    }

    /// Writes the body chunk by chunk; `write` returns once the chunk is taken (the
    /// network's back-pressure). A throw means the body is incomplete, possibly after
    /// chunks were sent: the connection must then be aborted, never the body ended, so a
    /// client cannot take a truncated but well-formed document for the whole answer.
    public func write(to write: (_ chunk: [UInt8]) async throws -> Void) async throws {
        try await produce(write)
    }

    /// The whole body in memory (tests, and callers that need a length).
    public func collect() async throws -> Data {
        var data = Data()
        try await produce { data.append(contentsOf: $0) }
        return data
    }
}
