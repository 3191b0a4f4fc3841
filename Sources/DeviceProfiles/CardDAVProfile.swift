import Foundation

/// An Apple configuration profile (`.mobileconfig`) that adds one CardDAV account (issue 33):
/// what iOS, iPadOS and macOS need to set the account up without anything typed, the port
/// included (a port left empty is what breaks hand-made accounts). A pure writer: the caller
/// brings the server's public address and a fresh app password.
public struct CardDAVProfile: Sendable {
    /// Where clients reach the server: scheme (TLS or not), host and port.
    public var serverURL: URL
    /// The principal's path as clients see it (`/carddav/dav/principals/alice/`).
    public var principalPath: String
    public var user: String
    /// The app password the profile carries (its secret).
    public var password: String
    /// The device's name, as the app password is named: shown in the account's description.
    public var deviceName: String
    /// The outer payload's UUID; the CardDAV payload's is derived from it, so one profile
    /// installed twice replaces itself instead of adding a second account.
    public var uuid: UUID

    public init(serverURL: URL, principalPath: String, user: String, password: String, deviceName: String, uuid: UUID = UUID()) {
        self.serverURL = serverURL; self.principalPath = principalPath; self.user = user
        self.password = password; self.deviceName = deviceName; self.uuid = uuid
    }

    /// Why no profile can be written for an address.
    public struct AddressError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    public var usesTLS: Bool { serverURL.scheme?.lowercased() == "https" }

    /// The URL's port, else the scheme's: always written, since an empty port field is taken as 443 or 80 inconsistently.
    public var port: Int { serverURL.port ?? (usesTLS ? 443 : 80) }

    /// The profile as an XML property list (UTF-8), unsigned.
    public func propertyList() throws(AddressError) -> Data {
        guard let scheme = serverURL.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = serverURL.host, !host.isEmpty else {
            throw AddressError(description: "\(serverURL.absoluteString) is not an absolute http(s) URL")
        }
        let payloadUUID = Self.derived(uuid).uuidString
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
              <key>PayloadContent</key>
              <array>
                <dict>
                  <key>CardDAVAccountDescription</key><string>\(Self.escape("Rolo (" + deviceName + ")"))</string>
                  <key>CardDAVHostName</key><string>\(Self.escape(host))</string>
                  <key>CardDAVPort</key><integer>\(port)</integer>
                  <key>CardDAVPrincipalURL</key><string>\(Self.escape(principalPath))</string>
                  <key>CardDAVUseSSL</key><\(usesTLS ? "true" : "false")/>
                  <key>CardDAVUsername</key><string>\(Self.escape(user))</string>
                  <key>CardDAVPassword</key><string>\(Self.escape(password))</string>
                  <key>PayloadDisplayName</key><string>CardDAV</string>
                  <key>PayloadIdentifier</key><string>org.rolo.carddav.\(payloadUUID)</string>
                  <key>PayloadType</key><string>com.apple.carddav.account</string>
                  <key>PayloadUUID</key><string>\(payloadUUID)</string>
                  <key>PayloadVersion</key><integer>1</integer>
                </dict>
              </array>
              <key>PayloadDisplayName</key><string>\(Self.escape("Rolo contacts for " + user))</string>
              <key>PayloadIdentifier</key><string>org.rolo.profile.\(uuid.uuidString)</string>
              <key>PayloadType</key><string>Configuration</string>
              <key>PayloadUUID</key><string>\(uuid.uuidString)</string>
              <key>PayloadVersion</key><integer>1</integer>
            </dict>
            </plist>

            """
        return Data(plist.utf8)
    }

    /// A file name for the download: `rolo-` and the device's name in ASCII letters and digits.
    public var fileName: String {
        "rolo-" + String(deviceName.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" }.prefix(40)) + ".mobileconfig"
    }

    /// The media type iOS opens profiles by.
    public static let mediaType = "application/x-apple-aspen-config"

    /// A second UUID fixed by the first (its bytes reversed, version and variant bits kept).
    static func derived(_ uuid: UUID) -> UUID {
        var bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        bytes.reverse()
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// XML text escaping; control characters other than tab and line breaks are dropped (XML 1.0 forbids them).
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value >= 0x20 && scalar.value != 0xFFFE && scalar.value != 0xFFFF { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}
