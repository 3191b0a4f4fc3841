import ArgumentParser
import Authorization
import DeviceProfiles
import Foundation
import RoloStore

/// `rolo device-profile USER DEVICE [--output FILE]` (issue 33): what the web UI's "Add a
/// device" gives an iPhone, iPad or Mac, from the console. The address comes from the same
/// settings `rolo serve` reads (`--config`, or the variables), since a profile naming another
/// host than the server's would set up an account that never connects.
struct DeviceProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-profile",
        abstract: "Write an Apple configuration profile (.mobileconfig) with a new app password named DEVICE.",
        discussion: """
            The profile sets up a CardDAV account on an iPhone, iPad or Mac. Its host, port, path \
            and TLS come from the public URL (--public-url, ROLO_PUBLIC_URL, or public_url in the \
            --config file); the path also follows base_path and proxy_prefix as `rolo serve` \
            does. It is signed when profile_signing_certificate and profile_signing_key are set. \
            The app password inside reaches every book, read and write; revoke the device with \
            `rolo token revoke USER DEVICE`. Without --output the profile goes to standard output.
            """)
    @Argument(help: "User name.") var user: String
    @Argument(help: "The device's name; the new app password gets it.") var device: String
    @Option(help: "Write the profile to this file (made 0600; an existing file is not overwritten).") var output: String?
    @Option(help: "The `rolo serve` TOML file to read public_url, base_path, proxy_prefix, database and the signing files from (env ROLO_CONFIG).")
    var config: String?
    @Option(name: .customLong("public-url"), help: "URL clients use, e.g. https://example.org/carddav (env ROLO_PUBLIC_URL).")
    var publicURL: String?
    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        let settings = LayeredSettings(file: try (config ?? Environment.value("ROLO_CONFIG")).map(ConfigFile.init(path:)) ?? ConfigFile())
        guard let text = settings.string(publicURL, env: "ROLO_PUBLIC_URL", key: "public_url") else {
            throw CLIError("No public URL: the profile takes the server's host, port and TLS from it. Set public_url in the config file (--config), ROLO_PUBLIC_URL or --public-url.")
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw settings.invalid("public_url", flagGiven: publicURL != nil, env: "ROLO_PUBLIC_URL", "must be an absolute http(s) URL (got \(text)).")
        }
        let signer = try ProfileSigning.signer(settings, certificate: nil, key: nil)
        if let output {
            guard !FileManager.default.fileExists(atPath: output) else { throw CLIError("\(output) exists; not overwritten.") }
            let folder = URL(fileURLWithPath: output).deletingLastPathComponent().path
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                throw CLIError("No folder \(folder) for \(output).")
            }
        }
        try authorize(.manageAppPasswords(of: user))
        let location = options.resolvedPath(configured: settings.file.string("database"))
        let store = try await options.openStore(location, settings: settings)
        do {
            let bytes = try await write(store.store, url: url, settings: settings, signer: signer)
            try await store.close()
            if output == nil { FileHandle.standardOutput.write(bytes) }
        } catch {
            try? await store.close()
            throw store.describingFileErrors(error)
        }
    }

    private func write(_ store: any RoloStore, url: URL, settings: LayeredSettings, signer: ProfileSigner?) async throws -> Data {
        try await store.requireUser(user)
        let created: NewAppPassword
        do {
            created = try await store.createAppPassword(user: user, name: device, readOnly: false, books: nil)
        } catch {
            throw CLIError.from(error, notFound: "No user \(user).", noSuchUser: "No user \(user).",
                                refused: "Cannot create app password \"\(device)\"")
        }
        let prefix = Self.normalized(settings.string(nil, env: "ROLO_PROXY_PREFIX", key: "proxy_prefix") ?? "")
        let basePath = Self.normalized(settings.string(nil, env: "ROLO_BASE_PATH", key: "base_path") ?? "/dav")
        let segment = user.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? user
        let profile = CardDAVProfile(serverURL: url, principalPath: (prefix.isEmpty ? Self.normalized(url.path) : prefix) + basePath + "/principals/" + segment + "/",
                                     user: user, password: created.secret, deviceName: device)
        var bytes = try profile.propertyList()
        if let signer { bytes = try signer.sign(bytes) }
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
                try? await store.revokeAppPassword(user: user, name: device)
                throw CLIError("Cannot write \(output); the app password \"\(device)\" was revoked again.")
            }
            print("Wrote \(signer == nil ? "an unsigned" : "a signed") profile for \(user) to \(output), with a new app password \"\(device)\" (every book, read and write).")
            print("It holds the password: send it to the device only, then delete it. Revoke the device with rolo token revoke \(user) \(Self.quoted(device)).")
        } else {
            FileHandle.standardError.write(Data("Made app password \"\(device)\" for \(user); revoke it with rolo token revoke \(user) \(Self.quoted(device)).\n".utf8))
        }
        return bytes
    }

    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `dav`, `/dav/` and `/dav` become `/dav`; `/` and empty become empty (as `rolo serve` reads them).
    static func normalized(_ path: String) -> String {
        let trimmed = path.split(separator: "/").joined(separator: "/")
        return trimmed.isEmpty ? "" : "/" + trimmed
    }

    static func quoted(_ text: String) -> String {
        text.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) } ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// `profile_signing_certificate` and `profile_signing_key`: both or neither; a file that does
/// not load stops the command (and `rolo serve`) naming its setting.
enum ProfileSigning {
    static func signer(_ settings: LayeredSettings, certificate: String?, key: String?) throws -> ProfileSigner? {
        let certificateEnv = "ROLO_PROFILE_SIGNING_CERTIFICATE", keyEnv = "ROLO_PROFILE_SIGNING_KEY"
        let certificatePath = settings.string(certificate, env: certificateEnv, key: "profile_signing_certificate")
        let keyPath = settings.string(key, env: keyEnv, key: "profile_signing_key")
        switch (certificatePath, keyPath) {
        case (nil, nil):
            return nil
        case (_?, nil):
            throw settings.invalid("profile_signing_certificate", flagGiven: certificate != nil, env: certificateEnv,
                                   "needs profile_signing_key beside it.")
        case (nil, _?):
            throw settings.invalid("profile_signing_key", flagGiven: key != nil, env: keyEnv,
                                   "needs profile_signing_certificate beside it.")
        case let (certificatePath?, keyPath?):
            do {
                return try ProfileSigner(certificateFile: certificatePath, keyFile: keyPath)
            } catch {
                switch error {
                case .certificate(let reason):
                    throw settings.invalid("profile_signing_certificate", flagGiven: certificate != nil, env: certificateEnv, reason + ".")
                case .key(let reason):
                    throw settings.invalid("profile_signing_key", flagGiven: key != nil, env: keyEnv, reason + ".")
                }
            }
        }
    }
}
