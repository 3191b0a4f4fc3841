import Foundation
import Testing

/// `rolo device-profile USER DEVICE [--output FILE]` (issue 33): the profile's keys, its
/// signature checked by `openssl cms -verify`, and its app password, which opens CardDAV on a
/// running `rolo serve` until the device is revoked.
@Suite struct DeviceProfileCommandTests {
    static func openssl(_ arguments: [String]) async throws -> Int32 {
        try await RoloBinary.run(executable: "/usr/bin/openssl", arguments).status
    }

    static func payload(_ data: Data) throws -> [String: Any] {
        let outer = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(outer["PayloadType"] as? String == "Configuration")
        return try #require((outer["PayloadContent"] as? [[String: Any]])?.first)
    }

    @Test func aSignedProfileVerifiesAndItsPasswordWorksUntilTheDeviceIsRevoked() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "alice", "--password-stdin", "--create-database"] + db, stdin: "alice-secret\n").status == 0)
        for name in ["signer", "other"] {
            #expect(try await Self.openssl(["req", "-x509", "-nodes", "-days", "30", "-subj", "/CN=Rolo \(name)", "-newkey", "ec",
                                            "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", folder.path + "/\(name).key",
                                            "-out", folder.path + "/\(name).pem"]) == 0)
        }
        let server = try ServeProcess(database: database)
        do {
            let port = try await server.waitUntilListening()
            let base = "http://127.0.0.1:\(port)"
            let config = folder.appendingPathComponent("rolo.toml").path
            try """
                public_url = "\(base)/"
                database = "\(database)"
                profile_signing_certificate = "\(folder.path)/signer.pem"
                profile_signing_key = "\(folder.path)/signer.key"
                """.write(toFile: config, atomically: true, encoding: .utf8)
            let file = folder.appendingPathComponent("ipad.mobileconfig").path
            let made = try await RoloBinary.run(["device-profile", "alice", "Alice's iPad", "--output", file, "--config", config])
            #expect(made.status == 0, "\(made.stderr)")
            #expect(made.stdout.contains("signed profile") && made.stdout.contains("rolo token revoke alice 'Alice'\\''s iPad'"), "\(made.stdout)")
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            let content = folder.appendingPathComponent("content.plist").path
            #expect(try await Self.openssl(["cms", "-verify", "-inform", "DER", "-in", file, "-CAfile", folder.path + "/signer.pem",
                                            "-out", content]) == 0)
            #expect(try await Self.openssl(["cms", "-verify", "-inform", "DER", "-in", file, "-CAfile", folder.path + "/other.pem",
                                            "-out", "/dev/null"]) != 0)
            let carddav = try Self.payload(try Data(contentsOf: URL(fileURLWithPath: content)))
            #expect(carddav["PayloadType"] as? String == "com.apple.carddav.account")
            #expect(carddav["CardDAVHostName"] as? String == "127.0.0.1" && carddav["CardDAVPort"] as? Int == port)
            #expect(carddav["CardDAVUseSSL"] as? Bool == false && carddav["CardDAVUsername"] as? String == "alice")
            let principal = try #require(carddav["CardDAVPrincipalURL"] as? String)
            #expect(principal == "/dav/principals/alice/")
            let password = try #require(carddav["CardDAVPassword"] as? String)
            #expect(password.hasPrefix("rolo_"))

            let propfind = ["-X", "PROPFIND", "-H", "Depth: 0", "-u", "alice:" + password, base + principal]
            #expect(try await curlStatus(propfind) == 207)
            let list = try await RoloBinary.run(["token", "list", "alice"] + db)
            #expect(list.stdout.contains("Alice's iPad"), "\(list.stdout)")
            #expect(try await RoloBinary.run(["token", "revoke", "alice", "Alice's iPad"] + db).status == 0)
            #expect(try await curlStatus(propfind) == 401)
        } catch {
            _ = await server.terminate()
            throw error
        }
        #expect(await server.terminate() == 0)
    }

    @Test func withoutSigningTheProfileGoesToStandardOutputAsXML() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "bob", "--password-stdin", "--create-database"] + db, stdin: "bob-secret\n").status == 0)
        let made = try await RoloBinary.run(["device-profile", "bob", "Mac"] + db,
                                            environment: ["ROLO_PUBLIC_URL": "https://contacts.example.org/carddav", "ROLO_CONFIG": ""])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.hasPrefix("<?xml"))
        let carddav = try Self.payload(made.output)
        #expect(carddav["CardDAVPort"] as? Int == 443 && carddav["CardDAVUseSSL"] as? Bool == true)
        #expect(carddav["CardDAVPrincipalURL"] as? String == "/carddav/dav/principals/bob/")
        #expect(made.stderr.contains("rolo token revoke bob Mac"))
    }

    @Test func badInputIsRefusedByNameAndMakesNoAppPassword() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = ["--database", database]
        #expect(try await RoloBinary.run(["user", "add", "carol", "--password-stdin", "--create-database"] + db, stdin: "carol-secret\n").status == 0)
        for name in ["a", "b"] {
            #expect(try await Self.openssl(["req", "-x509", "-nodes", "-days", "30", "-subj", "/CN=\(name)", "-newkey", "ec",
                                            "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", folder.path + "/\(name).key",
                                            "-out", folder.path + "/\(name).pem"]) == 0)
        }
        let url = ["--public-url", "https://example.org/"]
        let clean = ["ROLO_PUBLIC_URL": "", "ROLO_CONFIG": ""]
        func refused(_ arguments: [String], _ text: String, environment: [String: String] = clean) async throws {
            let outcome = try await RoloBinary.run(arguments, environment: environment)
            #expect(outcome.status != 0 && outcome.stderr.contains(text), "\(arguments): \(outcome.stderr)")
        }
        try await refused(["device-profile", "carol", "Phone"] + db, "No public URL")
        try await refused(["device-profile", "carol", "Phone", "--public-url", "ftp://example.org"] + db, "public_url must be an absolute http(s) URL")
        try await refused(["device-profile", "nobody", "Phone"] + url + db, "No user nobody.")
        let existing = folder.appendingPathComponent("there.mobileconfig").path
        try "keep me".write(toFile: existing, atomically: true, encoding: .utf8)
        try await refused(["device-profile", "carol", "Phone", "--output", existing] + url + db, "exists; not overwritten")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
        var signing = clean
        signing["ROLO_PROFILE_SIGNING_CERTIFICATE"] = folder.path + "/a.pem"
        signing["ROLO_PROFILE_SIGNING_KEY"] = folder.path + "/b.key"
        try await refused(["device-profile", "carol", "Phone"] + url + db,
                          "profile_signing_key is not the key of the signing certificate", environment: signing)
        signing["ROLO_PROFILE_SIGNING_KEY"] = nil
        try await refused(["device-profile", "carol", "Phone"] + url + db,
                          "profile_signing_certificate needs profile_signing_key beside it", environment: signing)
        let list = try await RoloBinary.run(["token", "list", "carol"] + db)
        #expect(!list.stdout.contains("Phone"), "\(list.stdout)")
    }
}
