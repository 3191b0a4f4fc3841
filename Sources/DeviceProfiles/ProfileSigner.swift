import Foundation
@_spi(CMS) import X509

/// Signs profiles as CMS SignedData (RFC 5652, the PKCS #7 form iOS and macOS read), so the
/// device shows the profile as "Verified" when it trusts the certificate's issuer. Built once
/// from the admin's PEM files (`profile_signing_certificate`, `profile_signing_key`); a file
/// that does not load stops the server there rather than at the first download.
public struct ProfileSigner: Sendable {
    let certificate: Certificate
    let intermediates: [Certificate]
    let key: Certificate.PrivateKey

    /// Which of the two inputs failed, and why: the caller names the setting.
    public enum LoadError: Error, Equatable, CustomStringConvertible {
        case certificate(String)
        case key(String)

        public var description: String {
            switch self {
            case .certificate(let reason), .key(let reason): reason
            }
        }
    }

    /// `certificatePEM` holds the signing certificate first, then any intermediates to send
    /// with it; `keyPEM` the certificate's private key (PKCS #8, or SEC1 / PKCS #1).
    public init(certificatePEM: String, keyPEM: String) throws(LoadError) {
        var certificates: [Certificate] = []
        for block in Self.pemBlocks(certificatePEM) {
            do {
                certificates.append(try Certificate(pemEncoded: block))
            } catch {
                throw .certificate("holds a PEM block that is not a certificate")
            }
        }
        guard let first = certificates.first else { throw .certificate("holds no PEM certificate") }
        let key: Certificate.PrivateKey
        do {
            key = try Certificate.PrivateKey(pemEncoded: keyPEM)
        } catch {
            throw .key("holds no private key Rolo can read (PEM: PKCS #8, EC or RSA)")
        }
        guard key.publicKey == first.publicKey else {
            throw .key("is not the key of the signing certificate (\(first.subject))")
        }
        self.certificate = first
        self.intermediates = Array(certificates.dropFirst())
        self.key = key
    }

    /// Each `-----BEGIN ...-----` to `-----END ...-----` block, in order.
    static func pemBlocks(_ text: String) -> [String] {
        var blocks: [String] = [], current: [Substring]?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("-----BEGIN ") { current = [] }
            current?.append(Substring(trimmed))
            if trimmed.hasPrefix("-----END "), let lines = current {
                blocks.append(lines.joined(separator: "\n"))
                current = nil
            }
        }
        return blocks
    }

    /// Reads both PEM files; an unreadable file is reported as that input's failure.
    public init(certificateFile: String, keyFile: String) throws(LoadError) {
        guard let certificate = try? String(contentsOfFile: certificateFile, encoding: .utf8) else {
            throw .certificate("cannot be read (\(certificateFile))")
        }
        guard let key = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
            throw .key("cannot be read (\(keyFile))")
        }
        try self.init(certificatePEM: certificate, keyPEM: key)
    }

    /// `profile` wrapped in a DER SignedData that carries it (not detached), with the signing time.
    public func sign(_ profile: Data, at time: Date = Date()) throws -> Data {
        Data(try CMS.sign(profile, additionalIntermediateCertificates: intermediates, certificate: certificate,
                          privateKey: key, signingTime: time, detached: false))
    }
}
