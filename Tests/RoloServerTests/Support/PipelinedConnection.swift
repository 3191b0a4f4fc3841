import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 connection on a loopback socket that sends several requests in one write
/// (pipelining, which curl no longer does) and reads their answers back in order. A plain
/// blocking socket on a thread of its own, never a cooperative-pool thread: blocking one
/// would starve the in-process server it talks to.
struct PipelinedConnection {
    struct Answer {
        var status: Int
        /// Names lower-cased.
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
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

    /// Sends `requests` back to back in one write and reads one answer for each (bodies by
    /// Content-Length: the answers asked for here are never chunked).
    static func exchange(port: Int, _ requests: [Data]) async throws -> [Answer] {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingExchange(port: port, requests) })
            }
        }
    }

    private static func blockingExchange(port: Int, _ requests: [Data]) throws -> [Answer] {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw Failure(description: "socket") }
        defer { close(socketFD) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "connect") }
        let all = requests.reduce(Data(), +)
        try all.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let written = send(socketFD, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                guard written > 0 else { throw Failure(description: "send") }
                sent += written
            }
        }
        var received = Data(), answers: [Answer] = [], buffer = [UInt8](repeating: 0, count: 65536)
        while answers.count < requests.count {
            if let (answer, used) = try parseOne(received) {
                answers.append(answer)
                received = Data(received.dropFirst(used))
                continue
            }
            let count = recv(socketFD, &buffer, buffer.count, 0)
            guard count > 0 else {
                throw Failure(description: "connection ended after \(answers.count) of \(requests.count) answers")
            }
            received.append(contentsOf: buffer[0..<count])
        }
        return answers
    }

    /// The first whole answer in `data` and the bytes it took, nil when it is not all there.
    private static func parseOne(_ data: Data) throws -> (Answer, Int)? {
        guard let split = data.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let lines = String(decoding: data[data.startIndex..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusFields = lines.first?.split(separator: " ") ?? []
        guard statusFields.count >= 2, let status = Int(statusFields[1]) else {
            throw Failure(description: "no status line: \(lines.first ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        // 204 and 304 carry no body and need no length (RFC 9110 §8.6).
        guard let length = Int(headers["content-length"] ?? "") ?? ([204, 304].contains(status) ? 0 : nil) else {
            throw Failure(description: "a \(status) answer without Content-Length")
        }
        let bodyStart = split.upperBound
        guard data.endIndex - bodyStart >= length else { return nil }
        return (Answer(status: status, headers: headers, body: Data(data[bodyStart..<bodyStart + length])),
                bodyStart + length - data.startIndex)
    }
}
