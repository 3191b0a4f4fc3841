import Foundation
import RoloServer
import RoloTestControl

/// Talks to a test server's `/_rolo/` API the way a harness would: curl with the bearer
/// token, JSON in and out.
extension TestServer {
    static let controlToken = "test-control-token"

    /// `TestServer.with` with the test-control API on (token `controlToken`).
    static func withTestAPI<T>(fixtures: [FixtureSet] = [], configure: (inout ServerConfiguration) -> Void = { _ in },
                               _ body: (TestServer) async throws -> T) async throws -> T {
        try await with(configure: { configuration in
            configuration.testAPI = TestAPIConfiguration(token: controlToken, fixtures: fixtures)
            configure(&configuration)
        }, body)
    }

    /// A `/_rolo/` request with the bearer token (or `token`), the body as JSON.
    func control(_ method: String, _ endpoint: String, json: Any? = nil,
                 token: String? = TestServer.controlToken) async throws -> CurlResult {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        var body: Data?
        if let json {
            headers["Content-Type"] = "application/json"
            body = try JSONSerialization.data(withJSONObject: json)
        }
        return try await request(method, "/_rolo/" + endpoint, user: nil, headers: headers, body: body)
    }

    /// Installs a fault rule and returns its listing; fails the test when refused.
    @discardableResult
    func addFault(_ rule: [String: Any]) async throws -> [String: Any] {
        let response = try await control("POST", "faults", json: rule)
        guard response.status == 201 else { throw CurlError(message: "fault rule refused: \(response.status) \(response.text)") }
        return try response.jsonObject()
    }

    /// The requests logged after `mark` (a number or a mark name).
    func loggedRequests(since mark: String = "0") async throws -> [[String: Any]] {
        let response = try await control("GET", "requests?since=\(mark)")
        return try response.jsonObject()["requests"] as? [[String: Any]] ?? []
    }

    /// The fault rules still installed.
    func faultRules() async throws -> [[String: Any]] {
        try await control("GET", "faults").jsonObject()["faults"] as? [[String: Any]] ?? []
    }
}

extension CurlResult {
    func jsonObject() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw CurlError(message: "not a JSON object: \(text)")
        }
        return object
    }
}

/// The outcome of a curl transfer that may break off: its exit code (18: the connection
/// closed before the announced body arrived), the raw header block and the bytes received.
struct BrokenTransfer {
    var exitCode: Int32
    var headerBlock: String
    var body: Data
}

/// Runs curl without treating a failed transfer as a test error, to see what a client
/// sees when the server drops the connection.
func curlAllowingFailure(_ arguments: [String]) async throws -> BrokenTransfer {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let headerFile = folder.appendingPathComponent("headers").path
    let bodyFile = folder.appendingPathComponent("body").path
    let marker = "exit="
    let output = try await runProcess("/bin/bash", ["-c", #"curl -s --max-time 30 -D "$1" -o "$2" "${@:3}"; echo "exit=$?""#,
                                                  "bash", headerFile, bodyFile] + arguments)
    let code = output.components(separatedBy: marker).last.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? -1
    return BrokenTransfer(exitCode: code,
                          headerBlock: (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "",
                          body: (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))) ?? Data())
}

/// SHA-256 in hex, computed by the system's sha256sum so the test does not share the
/// server's implementation.
func sha256Hex(_ data: Data) async throws -> String {
    let output = try await runProcess("/usr/bin/sha256sum", [], stdin: data)
    return String(output.prefix(64))
}
