import Crypto
import Hummingbird
import Synchronization

/// SHA-256 and length of a request body, computed while the body streams past whoever
/// reads it, so the request log can name what a client sent without keeping the bytes.
final class BodyDigest: Sendable {
    private struct Progress {
        var hasher = SHA256()
        var length = 0
        var finished = false
    }

    private let progress = Mutex(Progress())
    private static let hexDigits = Array("0123456789abcdef")

    /// `headers` tell whether the request has a body at all: without Content-Length and
    /// Transfer-Encoding (or with Content-Length 0) the digest is complete before reading.
    init(headers: HTTPFields) {
        let length = headers[.contentLength]
        if (length == nil && headers[.transferEncoding] == nil) || length == "0" {
            progress.withLock { $0.finished = true }
        }
    }

    func observe(_ buffer: ByteBuffer) {
        progress.withLock { progress in
            buffer.withUnsafeReadableBytes { progress.hasher.update(bufferPointer: $0) }
            progress.length += buffer.readableBytes
        }
    }

    func finish() {
        progress.withLock { $0.finished = true }
    }

    /// Hex SHA-256 and byte count, or nil when the body was not read to its end.
    var result: (sha256: String, length: Int)? {
        progress.withLock { progress in
            guard progress.finished else { return nil }
            var hex = ""
            hex.reserveCapacity(64)
            for byte in progress.hasher.finalize() {
                hex.append(Self.hexDigits[Int(byte >> 4)])
                hex.append(Self.hexDigits[Int(byte & 0xf)])
            }
            return (hex, progress.length)
        }
    }

    /// `body`, digested as it is read.
    func digesting(_ body: RequestBody) -> RequestBody {
        RequestBody(asyncSequence: DigestingBody(base: body, digest: self))
    }
}

/// A request body that reports every chunk (and its end) to a `BodyDigest`.
private struct DigestingBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: RequestBody
    let digest: BodyDigest

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let digest: BodyDigest

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else {
                digest.finish()
                return nil
            }
            digest.observe(chunk)
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), digest: digest)
    }
}
