import Foundation

/// One HTTP exchange made by the curl binary: real sockets, no client-side magic
/// (no redirects followed, no automatic auth), and timings we can assert on.
struct CurlResult {
    var status: Int
    /// Header names lower-cased; the final response's headers only.
    var headers: [String: String]
    var body: Data
    var seconds: Double
    var uploadedBytes: Int
    /// Every status line received, interim ones (`100 Continue`) included.
    var statusLines: [String]
    var text: String { String(decoding: body, as: UTF8.self) }
}

enum Curl {
    /// Runs `curl` with `arguments` (method, URL, headers…) and captures the response.
    static func run(_ arguments: [String], body: Data? = nil) async throws -> CurlResult {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let headerFile = folder.appendingPathComponent("headers")
        let bodyFile = folder.appendingPathComponent("body")
        var args = ["-s", "-S", "-D", headerFile.path, "-o", bodyFile.path,
                    "-w", "%{http_code} %{time_total} %{size_upload}", "--max-time", "30"]
        if let body {
            let uploadFile = folder.appendingPathComponent("upload")
            try body.write(to: uploadFile)
            args += ["--data-binary", "@" + uploadFile.path]
        }
        args += arguments
        let output = try await runProcess("/usr/bin/curl", args)
        let fields = output.split(separator: " ")
        guard fields.count == 3, let status = Int(fields[0]) else {
            throw CurlError(message: "unexpected curl output: \(output)")
        }
        return CurlResult(
            status: status,
            headers: parseHeaders((try? String(contentsOf: headerFile, encoding: .utf8)) ?? ""),
            body: (try? Data(contentsOf: bodyFile)) ?? Data(),
            seconds: Double(fields[1]) ?? 0,
            uploadedBytes: Int(Double(fields[2]) ?? 0),
            statusLines: ((try? String(contentsOf: headerFile, encoding: .utf8)) ?? "")
                .components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/") })
    }

    /// Headers of the last response block (after any `100 Continue`).
    static func parseHeaders(_ text: String) -> [String: String] {
        let blocks = text.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }
        var headers: [String: String] = [:]
        for line in (blocks.last ?? "").components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        return headers
    }
}

struct CurlError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
