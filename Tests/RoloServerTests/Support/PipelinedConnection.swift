import Foundation
import LoopbackSockets
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 connection on a loopback socket that sends several requests in one write
/// (pipelining, which curl no longer does), or in pieces, and reads their answers back in
/// order. A plain blocking socket on a thread of its own, never a cooperative-pool thread:
/// blocking one would starve the in-process server it talks to.
struct PipelinedConnection: ~Copyable {
    struct Answer {
        var status: Int
        /// The status line and field lines as sent, CRLF between them.
        var head: String
        /// Names lower-cased.
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        /// The head's lines without `Date` (which may differ by a second between two answers).
        var linesWithoutDate: [String] { head.components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date: ") } }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A request as bytes: `Host`, `Content-Length` when there is a body, then `headers`.
    static func request(_ method: String, _ target: String, headers: [String: String] = [:], body: String = "") -> Data {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if !body.isEmpty { head += "Content-Length: \(body.utf8.count)\r\n" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        return Data((head + "\r\n" + body).utf8)
    }

    /// Sends `requests` back to back, in one write or in writes of `piece` bytes a few
    /// milliseconds apart, and reads one answer for each (bodies by Content-Length: the
    /// answers asked for here are never chunked; none for HEAD).
    static func exchange(port: Int, _ requests: [Data], piece: Int? = nil) async throws -> [Answer] {
        try await with(port: port) { connection in
            let all = requests.reduce(Data(), +)
            if let piece {
                for start in stride(from: 0, to: all.count, by: piece) {
                    try connection.send(all[(all.startIndex + start)..<(all.startIndex + min(start + piece, all.count))])
                    usleep(3_000)
                }
            } else {
                try connection.send(all)
            }
            return try requests.map { try connection.answer(toHead: $0.starts(with: Data("HEAD ".utf8))) }
        }
    }

    /// Runs `body` with a connection to `port` on a thread of its own.
    static func with<T: Sendable>(port: Int, _ body: @escaping @Sendable (inout PipelinedConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    var connection = try PipelinedConnection(port: port)
                    return try body(&connection)
                })
            }
        }
    }

    private let socketFD: Int32
    private var received = Data()

    private init(port: Int) throws {
        socketFD = try LoopbackSocket.connect(port: port)
    }

    deinit {
        close(socketFD)
    }

    func send(_ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let written = Glibc.send(socketFD, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                guard written > 0 else { throw Failure(description: "send") }
                sent += written
            }
        }
    }

    /// The next answer; `toHead`: the answer to a HEAD, which has no body whatever its length says.
    mutating func answer(toHead: Bool = false) throws -> Answer {
        while true {
            if let (answer, used) = try Self.parseOne(received, bodyless: toHead) {
                received = Data(received.dropFirst(used))
                return answer
            }
            guard try receive() else { throw Failure(description: "connection ended before an answer") }
        }
    }

    /// Whether the server closes the connection within `seconds` (without sending anything).
    mutating func closedByServer(within seconds: Int) throws -> Bool {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return try !receive()
    }

    /// Reads what is there into `received`; false at the end of the stream, throws on a timeout.
    private mutating func receive() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(socketFD, &buffer, buffer.count, 0)
        guard count >= 0 else { throw Failure(description: "recv: errno \(errno)") }
        received.append(contentsOf: buffer[0..<count])
        return count > 0
    }

    /// The first whole answer in `data` and the bytes it took, nil when it is not all there.
    private static func parseOne(_ data: Data, bodyless: Bool) throws -> (Answer, Int)? {
        guard let split = data.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: data[data.startIndex..<split.lowerBound], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let statusFields = lines.first?.split(separator: " ") ?? []
        guard statusFields.count >= 2, let status = Int(statusFields[1]) else {
            throw Failure(description: "no status line: \(lines.first ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        // 204 and 304 carry no body and need no length (RFC 9110 §8.6), nor does a HEAD's answer.
        guard let length = bodyless ? 0 : Int(headers["content-length"] ?? "") ?? ([204, 304].contains(status) ? 0 : nil) else {
            throw Failure(description: "a \(status) answer without Content-Length")
        }
        let bodyStart = split.upperBound
        guard data.endIndex - bodyStart >= length else { return nil }
        return (Answer(status: status, head: head, headers: headers, body: Data(data[bodyStart..<bodyStart + length])),
                bodyStart + length - data.startIndex)
    }
}
