import DeviceProfiles
import Foundation
import ProcessLaunch
import Testing

/// Signing checked by OpenSSL, the way an admin would (`openssl cms -verify`), with
/// certificates OpenSSL makes in a temporary folder.
@Suite struct ProfileSignerTests {
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-signer-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    }

    @discardableResult
    static func openssl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await offThread {
            let process = try SpawnedProcess("/usr/bin/openssl", arguments, stdout: .pipe, stderr: .pipe)
            let output = readToEnd(process.standardOutput!)
            let errors = readToEnd(process.standardError!)
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: output + errors, as: UTF8.self))
        }
    }

    /// A self-signed certificate and its key (`kind`: "ec" or "rsa").
    static func selfSigned(_ folder: Folder, name: String, kind: String = "ec") async throws {
        let key = kind == "ec" ? ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"] : ["-newkey", "rsa:2048"]
        let made = try await openssl(["req", "-x509", "-nodes", "-days", "30", "-subj", "/CN=Rolo test \(name)"] + key
                               + ["-keyout", folder.path(name + ".key"), "-out", folder.path(name + ".pem")])
        try #require(made.status == 0, "openssl req: \(made.output)")
    }

    @Test(arguments: ["ec", "rsa"])
    func aSignedProfileVerifiesWithOpenSSLAndCarriesTheProfile(kind: String) async throws {
        let folder = try Folder()
        try await Self.selfSigned(folder, name: "signer", kind: kind)
        let signer = try ProfileSigner(certificateFile: folder.path("signer.pem"), keyFile: folder.path("signer.key"))
        let profile = try CardDAVProfileTests.profile().propertyList()
        try signer.sign(profile).write(to: URL(fileURLWithPath: folder.path("signed.mobileconfig")))
        let verified = try await Self.openssl(["cms", "-verify", "-inform", "DER", "-in", folder.path("signed.mobileconfig"),
                                         "-CAfile", folder.path("signer.pem"), "-out", folder.path("content.plist")])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains("Verification successful"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("content.plist"))) == profile)
        // Another certificate does not vouch for it.
        try await Self.selfSigned(folder, name: "other")
        let refused = try await Self.openssl(["cms", "-verify", "-inform", "DER", "-in", folder.path("signed.mobileconfig"),
                                        "-CAfile", folder.path("other.pem"), "-out", "/dev/null"])
        #expect(refused.status != 0)
    }

    @Test func aKeyOfAnotherCertificateIsRefusedAsTheKey() async throws {
        let folder = try Folder()
        try await Self.selfSigned(folder, name: "a")
        try await Self.selfSigned(folder, name: "b")
        #expect(throws: ProfileSigner.LoadError.self) {
            try ProfileSigner(certificateFile: folder.path("a.pem"), keyFile: folder.path("b.key"))
        }
        do {
            _ = try ProfileSigner(certificateFile: folder.path("a.pem"), keyFile: folder.path("b.key"))
        } catch {
            guard case .key(let reason) = error else { Issue.record("not the key: \(error)"); return }
            #expect(reason.contains("is not the key of the signing certificate"))
        }
    }

    @Test func filesThatAreNotPEMAreRefusedByWhichOneFailed() async throws {
        let folder = try Folder()
        try await Self.selfSigned(folder, name: "a")
        try "not a certificate".write(toFile: folder.path("junk"), atomically: true, encoding: .utf8)
        #expect(throws: ProfileSigner.LoadError.certificate("holds no PEM certificate")) {
            try ProfileSigner(certificateFile: folder.path("junk"), keyFile: folder.path("a.key"))
        }
        #expect(throws: ProfileSigner.LoadError.key("holds no private key Rolo can read (PEM: PKCS #8, EC or RSA)")) {
            try ProfileSigner(certificateFile: folder.path("a.pem"), keyFile: folder.path("junk"))
        }
        #expect(throws: ProfileSigner.LoadError.certificate("cannot be read (\(folder.path("missing")))")) {
            try ProfileSigner(certificateFile: folder.path("missing"), keyFile: folder.path("a.key"))
        }
    }
}
