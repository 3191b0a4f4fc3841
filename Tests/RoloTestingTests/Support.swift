import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RoloTesting

/// One real HTTP exchange through URLSession, as a Swift client under test would make it.
struct Exchange {
    var status: Int
    var headers: [String: String]
    var body: Data
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
}

extension RoloTestServer {
    /// Sends `method` to `path` (relative to the DAV base URL, or absolute when it starts
    /// with `/`) as the server's user, unless `authorization` says otherwise.
    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil,
              authorization: String? = nil) async throws -> Exchange {
        let url = path.hasPrefix("/") ? URL(string: "http://127.0.0.1:\(port)\(path)")! : self.url(path)
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue(authorization ?? basicAuthorization, forHTTPHeaderField: "Authorization")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body { request.httpBody = Data(body.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields["\(name)"] = "\(value)" }
        return Exchange(status: http.statusCode, headers: fields, body: data)
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
