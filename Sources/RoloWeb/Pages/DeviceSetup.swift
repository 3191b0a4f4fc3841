import DeviceProfiles
import Foundation
import QRCode

/// Profiles waiting for a phone's camera: the desktop page shows a QR code of a one-time URL,
/// and the phone that opens it gets the profile (with its app password) once, within ten
/// minutes. Kept in this process's memory only: a token is a credential for that long, and
/// nothing of it should outlive a restart or reach the database. With several Rolo processes
/// behind one name, the phone's request must reach the process that showed the page.
actor ProfileDownloads {
    static let lifetime: TimeInterval = 600
    /// Bounded, so a signed-in user cannot make the server hold profiles without limit.
    static let capacity = 200

    private var waiting: [String: (profile: WebResponse, expires: Date)] = [:]

    /// Keeps `profile` for one download and returns the token that fetches it.
    func add(_ profile: WebResponse, now: Date = Date()) -> String {
        waiting = waiting.filter { $0.value.expires > now }
        if waiting.count >= Self.capacity, let oldest = waiting.min(by: { $0.value.expires < $1.value.expires })?.key {
            waiting[oldest] = nil
        }
        let token = Tokens.random()
        waiting[token] = (profile, now.addingTimeInterval(Self.lifetime))
        return token
    }

    /// The profile, once: a second request, or one after ten minutes, gets nil.
    func take(_ token: String, now: Date = Date()) -> WebResponse? {
        guard let entry = waiting.removeValue(forKey: token), entry.expires > now else { return nil }
        return entry.profile
    }
}

extension WebApp {
    /// The CardDAV profile for `user` with this app password, at the address devices are given.
    func deviceProfile(_ request: WebRequest, user: String, device: String, secret: String) -> CardDAVProfile? {
        guard let url = URL(string: serverURL(request)), url.host != nil else { return nil }
        let principal = configuration.pathPrefix + configuration.davPath + "/principals/" + URLs.segment(user) + "/"
        return CardDAVProfile(serverURL: url, principalPath: principal, user: user, password: secret, deviceName: device)
    }

    /// The profile as a download: signed when the server has a signing certificate.
    func profileResponse(_ profile: CardDAVProfile) throws -> WebResponse {
        var bytes = try profile.propertyList()
        if let signer = configuration.profileSigner { bytes = try signer.sign(bytes) }
        return WebResponse(status: 200, headers: [
            ("Content-Type", CardDAVProfile.mediaType),
            ("Content-Disposition", "attachment; filename=\"\(profile.fileName)\""),
            ("Cache-Control", "no-store"),
        ], body: .bytes(bytes))
    }

    /// `GET /web/profile/<token>`: the one-time download a QR code points at. No session (the
    /// phone has none): the token is the credential; unknown, used or expired ones are 404.
    func oneTimeProfile(token: String) async -> WebResponse {
        await profileDownloads.take(token) ?? .plain("This link was used already or has expired. Make a new one on the privacy page.", status: 404)
    }

    /// The web UI's address as the phone sees it: the public URL's origin, else this request's.
    func absoluteBase(_ request: WebRequest) -> String {
        if let url = configuration.publicURL, let scheme = url.scheme, let host = url.host {
            return scheme + "://" + (host.contains(":") ? "[\(host)]" : host) + (url.port.map { ":\($0)" } ?? "") + base
        }
        return (OriginCheck.origin(host: request.header("host"), secure: request.isSecure) ?? "http://localhost") + base
    }

    /// The DAV tree's URL (`https://host/prefix/dav/`).
    func davURL(_ request: WebRequest) -> String {
        let origin = absoluteBase(request).dropLast(base.count)
        return origin + configuration.pathPrefix + configuration.davPath + "/"
    }

    /// What a QR code gives Android: `carddavs://user@host/…/dav/` (`carddav://` without TLS).
    /// DAVx5 registers these schemes and opens its login with the URL and user name filled
    /// in; the password stays out of the code (a scanner app's history keeps what it reads),
    /// and is copied from the page.
    func carddavLink(_ request: WebRequest, user: String) -> String? {
        guard var parts = URLComponents(string: davURL(request)) else { return nil }
        parts.scheme = parts.scheme == "https" ? "carddavs" : "carddav"
        parts.user = user
        return parts.string
    }

    /// A QR code as an `<img>`'s fields: the SVG as a `data:` URL (the templates print nothing
    /// unescaped, and the CSP allows `data:` images) and `label` as its `alt` text. Nil when the
    /// text is too long for a code.
    static func qrImage(_ text: String, label: String) -> [String: Any]? {
        guard let code = try? QRCode(text, correction: .medium) else { return nil }
        let svg = code.svg(label: label, pixelsPerModule: 4)
        return ["src": "data:image/svg+xml;base64," + Data(svg.utf8).base64EncodedString(), "alt": label,
                "size": (code.size + 8) * 4]
    }
}
