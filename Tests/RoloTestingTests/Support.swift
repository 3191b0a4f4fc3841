import Foundation
import LoopbackSockets
import RoloTesting

/// One real HTTP/1.1 exchange over a loopback socket. A plain blocking socket on its own
/// thread: URLSession on Linux stalled against an in-process server here (its callbacks
/// share the dispatch pool the server's tasks need).
struct Exchange {
    var status: Int
    var headers: [String: String]
    var body: Data
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// Sends the request with `Connection: close` and reads the answer to the end.
    static func send(port: Int, method: String, target: String, headers: [String: String], body: Data) async throws -> Exchange {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingSend(port: port, method: method, target: target,
                                                                    headers: headers, body: body) })
            }
        }
    }

    private static func blockingSend(port: Int, method: String, target: String, headers: [String: String],
                                     body: Data) throws -> Exchange {
        let socketFD = try LoopbackSocket.connect(port: port)
        defer { close(socketFD) }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
            + "Content-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Data((head + "\r\n").utf8) + body
        try request.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let written = Glibc.send(socketFD, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                guard written > 0 else { throw HTTPTestError.closed }
                sent += written
            }
        }
        var response = Data(), buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socketFD, &buffer, buffer.count, 0)
            if count <= 0 { break }
            response.append(contentsOf: buffer[0..<count])
        }
        return try parse(response)
    }

    /// Status, headers (names lower-cased) and the body, de-chunked when needed.
    static func parse(_ response: Data) throws -> Exchange {
        guard let split = response.range(of: Data("\r\n\r\n".utf8)) else { throw HTTPTestError.closed }
        let lines = String(decoding: response[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2,
              let status = Int(statusLine.split(separator: " ")[1]) else { throw HTTPTestError.closed }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Data(response[split.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunked(body) }
        return Exchange(status: status, headers: headers, body: body)
    }

    private static func dechunked(_ data: Data) -> Data {
        var out = Data(), rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)),
              let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self)
                .split(separator: ";").first ?? "", radix: 16), size > 0 {
            let start = lineEnd.upperBound
            out.append(rest[start..<start + size])
            rest = rest[(start + size + 2)...]
        }
        return out
    }
}

enum HTTPTestError: Error { case closed }

extension RoloTestServer {
    /// Sends `method` to `path` (relative to the DAV base URL, or absolute when it starts
    /// with `/`) as the server's user, unless `authorization` says otherwise.
    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil,
              authorization: String? = nil) async throws -> Exchange {
        let basePath = baseURL.absoluteString.dropFirst("http://127.0.0.1:\(port)".count)
        let target = path.hasPrefix("/") ? path : basePath + path
        var fields = headers
        fields["Authorization"] = authorization ?? basicAuthorization
        return try await Exchange.send(port: port, method: method, target: target, headers: fields, body: Data((body ?? "").utf8))
    }

    /// Whether anything accepts connections on this server's port.
    static func isListening(port: Int) async -> Bool {
        (try? await Exchange.send(port: port, method: "GET", target: "/health", headers: [:], body: Data())) != nil
    }
}

/// A fixture folder written for one test and removed by `remove()`.
struct FixtureFolder {
    let url: URL
    var path: String { url.path }

    /// `files` maps paths below the folder (`alice/default/a.vcf`) to their contents.
    init(_ files: [String: String]) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-fixtures-\(UUID().uuidString)")
        for (relative, text) in files {
            let file = url.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
    }

    func remove() { try? FileManager.default.removeItem(at: url) }

    /// Two users: alice (password file, two books, a 2.1 card without UID) and bob (no
    /// password file, an empty book besides the default).
    static func sample() throws -> FixtureFolder {
        try FixtureFolder([
            "alice/password": "s3cret\nignored second line\n",
            "alice/default/people.vcf": """
                BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nEND:VCARD\r
                BEGIN:VCARD\r\nVERSION:2.1\r\nN:Babbage;Charles\r\nFN:Charles Babbage\r\nTEL;CELL:+44 20 7946 0000\r\nEND:VCARD\r\n
                """,
            "alice/work/turing.vcf": "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:alan\r\nFN:Alan Turing\r\nEND:VCARD\r\n",
            "alice/work/notes.txt": "not a card: ignored",
            "bob/default/grace.vcf": "BEGIN:VCARD\nVERSION:3.0\nFN:Grace Hopper\nN:Hopper;Grace;;;\nEND:VCARD\n",
            "bob/empty/.keep": "",
        ])
    }
}
