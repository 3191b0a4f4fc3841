import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// A request the test-control API refuses, answered as `{"error": message}` (plus the
/// fixture file at fault, when there is one).
struct TestAPIError: Error, Sendable {
    var status: HTTPResponse.Status
    var message: String
    var path: String?

    static func badRequest(_ message: String) -> TestAPIError { TestAPIError(status: .badRequest, message: message) }
    static func notFound(_ message: String) -> TestAPIError { TestAPIError(status: .notFound, message: message) }
}

/// The JSON endpoints under `/_rolo/` (Docs/testing-with-rolo.md, "Test-control API").
extension TestControl {
    static let pathPrefix = "/_rolo"
    /// Largest JSON body the API reads.
    static let maxControlBodySize = 64 << 10

    static let endpoints = [
        "POST /_rolo/reset", "POST /_rolo/fixtures", "POST /_rolo/marks", "GET /_rolo/requests?since=MARK",
        "GET /_rolo/faults", "POST /_rolo/faults", "DELETE /_rolo/faults", "DELETE /_rolo/faults/ID",
    ]

    /// `/_rolo` and everything below it.
    static func isControlPath(_ path: String) -> Bool {
        path == pathPrefix || path.hasPrefix(pathPrefix + "/")
    }

    /// Answers a request under `/_rolo/`: the bearer token first, then the endpoint.
    func respondToControl(_ request: Request, path: String) async -> Response {
        guard Self.bearerTokenMatches(request.headers[.authorization], token: configuration.token) else {
            var response = Self.json(ErrorAnswer(error: "A valid `Authorization: Bearer <token>` is required."),
                                     status: .unauthorized)
            response.headers[.wwwAuthenticate] = #"Bearer realm="rolo-test-api""#
            return response
        }
        do {
            return try await route(request, path: path)
        } catch let error as TestAPIError {
            return Self.json(ErrorAnswer(error: error.message, path: error.path), status: error.status)
        } catch let error as FixtureError {
            return Self.json(ErrorAnswer(error: error.reason, path: error.path), status: .badRequest)
        } catch {
            return Self.json(ErrorAnswer(error: "\(error)"), status: .internalServerError)
        }
    }

    private func route(_ request: Request, path: String) async throws -> Response {
        let parts = path.dropFirst(Self.pathPrefix.count).split(separator: "/").map(String.init)
        let method = request.method.rawValue
        func allow(_ allowed: String...) throws(TestAPIError) {
            guard allowed.contains(method) else {
                throw TestAPIError(status: .methodNotAllowed, message: "\(path) accepts \(allowed.joined(separator: ", ")).")
            }
        }
        switch (parts.first, parts.count) {
        case (nil, _):
            try allow("GET")
            return Self.json(["endpoints": Self.endpoints])
        case ("reset", 1):
            try allow("POST")
            return Self.json(FixturesAnswer(fixtures: try await reset()))
        case ("fixtures", 1):
            try allow("POST")
            let load: LoadFixtures = try await Self.decode(request)
            return Self.json(FixturesAnswer(fixtures: try await loadFixtures(directory: load.directory)))
        case ("marks", 1):
            try allow("POST")
            let mark: MarkRequest = try await Self.decode(request, emptyAs: MarkRequest())
            if let name = mark.name, name.isEmpty || Int(name) != nil {
                throw TestAPIError.badRequest("a mark name must be non-empty and not a number")
            }
            return Self.json(MarkAnswer(mark: await state.mark(name: mark.name), name: mark.name))
        case ("requests", 1):
            try allow("GET")
            var since = 0
            if let mark = request.uri.queryParameters["since"] { since = try await state.position(of: String(mark)) }
            let (entries, complete) = await state.requests(after: since)
            return Self.json(RequestsAnswer(since: since, complete: complete, requests: entries))
        case ("faults", 1):
            try allow("GET", "POST", "DELETE")
            switch method {
            case "POST":
                let spec: FaultRuleSpec = try await Self.decode(request)
                return Self.json(try await state.addRule(spec), status: .created)
            case "DELETE":
                return Self.json(["removed": await state.removeRules(id: nil)])
            default:
                return Self.json(["faults": await state.listRules()])
            }
        case ("faults", 2):
            try allow("DELETE")
            guard let id = Int(parts[1]) else { throw TestAPIError.notFound("no fault rule \(parts[1])") }
            guard await state.removeRules(id: id) == 1 else { throw TestAPIError.notFound("no fault rule \(id)") }
            return Self.json(["removed": 1])
        default:
            throw TestAPIError.notFound("no endpoint \(path); see GET \(Self.pathPrefix)/")
        }
    }

    // MARK: Authentication

    /// Compares the presented bearer token with `token` in time independent of where they
    /// differ (both are hashed first, so their lengths do not leak either).
    static func bearerTokenMatches(_ authorization: String?, token: String) -> Bool {
        guard let authorization else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        let presented = SHA256.hash(data: Data(parts[1].trimmingCharacters(in: .whitespaces).utf8))
        let expected = SHA256.hash(data: Data(token.utf8))
        var difference: UInt8 = 0
        for (a, b) in zip(presented, expected) { difference |= a ^ b }
        return difference == 0 && !token.isEmpty
    }

    // MARK: JSON

    /// Decodes the JSON body, refusing unknown keys (a misspelt `methd` must not silently
    /// widen a fault rule to every method). An empty body gives `emptyAs` when allowed.
    static func decode<T: Decodable & KnownKeys>(_ request: Request, emptyAs empty: T? = nil) async throws -> T {
        var bytes = Data()
        for try await chunk in request.body {
            bytes.append(contentsOf: chunk.readableBytesView)
            if bytes.count > maxControlBodySize {
                throw TestAPIError(status: .contentTooLarge, message: "JSON body larger than \(maxControlBodySize) bytes")
            }
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }), let empty { return empty }
        guard let object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any] else {
            throw TestAPIError.badRequest("the body must be a JSON object")
        }
        if let unknown = object.keys.sorted().first(where: { !T.knownKeys.contains($0) }) {
            throw TestAPIError.badRequest("unknown key \"\(unknown)\"; known: \(T.knownKeys.sorted().joined(separator: ", "))")
        }
        do {
            return try JSONDecoder().decode(T.self, from: bytes)
        } catch let DecodingError.dataCorrupted(context), let DecodingError.typeMismatch(_, context),
                let DecodingError.valueNotFound(_, context), let DecodingError.keyNotFound(_, context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw TestAPIError.badRequest(key.isEmpty ? context.debugDescription : "\(key): \(context.debugDescription)")
        }
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        data.append(0x0A)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// A request body type whose accepted JSON keys are listed, so unknown ones are refused.
protocol KnownKeys {
    static var knownKeys: Set<String> { get }
}

extension FaultRuleSpec: KnownKeys {
    static let knownKeys: Set<String> = [
        "id", "method", "path", "count", "remaining", "fault", "status", "body", "contentType", "headers",
        "delayMilliseconds",
    ]
}

/// `POST /_rolo/fixtures`: a fixture folder on the server's machine.
struct LoadFixtures: Codable, KnownKeys {
    var directory: String
    static let knownKeys: Set<String> = ["directory"]
}

/// `POST /_rolo/marks`: an optional name to list requests `since=<name>` later.
struct MarkRequest: Codable, KnownKeys {
    var name: String?
    static let knownKeys: Set<String> = ["name"]
}

struct FixturesAnswer: Encodable { var fixtures: FixtureSummary }
struct MarkAnswer: Encodable { var mark: Int; var name: String? }
struct RequestsAnswer: Encodable { var since: Int; var complete: Bool; var requests: [RecordedRequest] }
struct ErrorAnswer: Encodable { var error: String; var path: String? }
