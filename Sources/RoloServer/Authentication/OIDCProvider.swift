import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL

/// An OpenID provider as discovery described it (OpenID Connect Discovery 1.0): its
/// endpoints, its signing keys (refetched when a token names a key Rolo has not seen, at most
/// once per `refetchInterval`) and the two calls a sign-in makes, the code exchange and the
/// JWKS fetch. The flow around them (state, nonce, PKCE, sessions) is `OIDCSignOn`'s.
public final class OIDCProvider: Sendable {
    public let settings: OIDCSettings
    /// The issuer as the discovery document writes it (what `iss` must equal).
    let issuer: String
    let authorizationEndpoint: URL
    let tokenEndpoint: URL
    let jwksURI: URL
    let http: OIDCHTTP
    let keys: KeyCache

    /// An unknown `kid` refetches the JWKS at most this often, so tokens naming made-up keys
    /// cannot make Rolo hammer the provider.
    static let refetchInterval: Duration = .seconds(10)

    init(settings: OIDCSettings, issuer: String, authorizationEndpoint: URL, tokenEndpoint: URL, jwksURI: URL,
         http: OIDCHTTP, keys: JSONWebKeys) {
        self.settings = settings; self.issuer = issuer; self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint; self.jwksURI = jwksURI; self.http = http
        self.keys = KeyCache(keys: keys)
    }

    /// Reads the discovery document and the JWKS. Throws `OIDCError` saying what is wrong:
    /// `rolo serve` stops at start naming `oidc_issuer` (or `oidc_ca_file`).
    public static func discover(_ settings: OIDCSettings) async throws -> OIDCProvider {
        guard OIDCSettings.isAllowedEndpoint(settings.issuer) else {
            throw OIDCError.provider("\(settings.issuer.absoluteString) must be https (plain http only on a loopback address)")
        }
        let http = try OIDCHTTP(caFile: settings.caFile)
        var configured = settings.issuer.absoluteString
        while configured.hasSuffix("/") { configured.removeLast() }
        guard let address = URL(string: configured + "/.well-known/openid-configuration") else {
            throw OIDCError.provider("\(configured) is not a URL")
        }
        let (status, body) = try await http.get(address)
        guard status == 200, let document = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw OIDCError.provider("\(address.absoluteString) answered \(status), not a discovery document")
        }
        guard let issuer = document["issuer"] as? String, issuer == configured || issuer == configured + "/" else {
            throw OIDCError.provider("the discovery document names the issuer \(document["issuer"] ?? "nil"), not \(configured)")
        }
        func endpoint(_ name: String) throws -> URL {
            guard let text = document[name] as? String, let url = URL(string: text) else {
                throw OIDCError.provider("the discovery document has no \(name)")
            }
            guard OIDCSettings.isAllowedEndpoint(url) else {
                throw OIDCError.provider("\(name) \(text) must be https (plain http only on a loopback address)")
            }
            return url
        }
        let authorization = try endpoint("authorization_endpoint")
        let token = try endpoint("token_endpoint")
        let jwks = try endpoint("jwks_uri")
        if let methods = document["code_challenge_methods_supported"] as? [String], !methods.contains("S256") {
            throw OIDCError.provider("the provider does not offer PKCE with S256")
        }
        let keys = try await fetchKeys(jwks, http: http)
        return OIDCProvider(settings: settings, issuer: issuer, authorizationEndpoint: authorization, tokenEndpoint: token,
                            jwksURI: jwks, http: http, keys: keys)
    }

    static func fetchKeys(_ url: URL, http: OIDCHTTP) async throws -> JSONWebKeys {
        let (status, body) = try await http.get(url)
        guard status == 200 else {
            if status >= 500 { throw OIDCError.unreachable("\(url.absoluteString) answered \(status)") }
            throw OIDCError.provider("\(url.absoluteString) answered \(status)")
        }
        return try JSONWebKeys(json: body)
    }

    /// The ID token's claims once every check passes; a token signed by a key not in the
    /// cache refetches the JWKS once (the provider rotated its keys) and is checked again.
    func verify(_ idToken: String, nonce: String, now: Date = Date()) async throws -> [String: Any] {
        let check = IDTokenCheck(issuer: issuer, clientID: settings.clientID)
        do {
            return try check.claims(of: idToken, keys: await keys.current, nonce: nonce, now: now)
        } catch let unknown as IDTokenCheck.UnknownKey {
            guard let fresh = try await keys.refetch(from: jwksURI, http: http) else {
                throw OIDCError.refused("The ID token is signed by an unknown key (\(unknown.kid ?? "no kid")).")
            }
            do {
                return try check.claims(of: idToken, keys: fresh, nonce: nonce, now: now)
            } catch let again as IDTokenCheck.UnknownKey {
                throw OIDCError.refused("The ID token is signed by an unknown key (\(again.kid ?? "no kid")).")
            }
        }
    }

    /// The authorization code traded for the ID token (RFC 6749 §4.1.3 with PKCE's verifier).
    /// A confidential client authenticates with HTTP Basic (`client_secret_basic`, the default).
    func exchange(code: String, verifier: String, redirectURI: String) async throws -> String {
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
                    ("code_verifier", verifier)]
        var headers: [(String, String)] = []
        if let secret = settings.clientSecret {
            let pair = Self.formEscape(settings.clientID) + ":" + Self.formEscape(secret)
            headers.append(("Authorization", "Basic " + Data(pair.utf8).base64EncodedString()))
        } else {
            form.append(("client_id", settings.clientID))
        }
        let (status, body) = try await http.postForm(tokenEndpoint, form: form, headers: headers)
        if status >= 500 { throw OIDCError.unreachable("the token endpoint answered \(status)") }
        guard status == 200, let answer = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw OIDCError.refused("The provider did not accept the sign-in (token endpoint answered \(status)).")
        }
        guard let idToken = answer["id_token"] as? String else {
            throw OIDCError.refused("The provider's answer holds no ID token.")
        }
        return idToken
    }

    /// `application/x-www-form-urlencoded` escaping (RFC 6749 appendix B), also used for
    /// the Basic credentials of `client_secret_basic`.
    static func formEscape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text).replacingOccurrences(of: "%20", with: "+")
    }

    /// The JWKS held between sign-ins, and when a token's unknown key last refetched it.
    actor KeyCache {
        private(set) var current: JSONWebKeys
        /// Nil until the first refetch: the fetch at start does not count, so a provider that
        /// rotates its keys in the first seconds after Rolo started (a restart during a
        /// rotation) is not refused for `refetchInterval` (CI, 2026-11-29: a faster machine
        /// reached the interop test's rotation 6 s after start, and its sign-ins failed).
        private var refetched: ContinuousClock.Instant?

        init(keys: JSONWebKeys) { current = keys }

        /// A fresh JWKS, or nil when the last refetch was too recent to fetch again.
        func refetch(from url: URL, http: OIDCHTTP) async throws -> JSONWebKeys? {
            if let refetched, ContinuousClock.now - refetched < OIDCProvider.refetchInterval { return nil }
            refetched = .now
            current = try await OIDCProvider.fetchKeys(url, http: http)
            return current
        }
    }
}

/// The provider's HTTP: a client per call (sign-ins are rare, and nothing is left to shut
/// down), no redirects followed, short timeouts; trusting `oidc_ca_file` when it is set.
/// A connection failure or timeout is `OIDCError.unreachable`.
struct OIDCHTTP: Sendable {
    let tls: TLSConfiguration
    static let timeout: TimeAmount = .seconds(10)
    static let maxBody = 1 << 20

    init(caFile: String?) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } catch {
                throw OIDCError.provider("cannot read the CA file \(caFile): \(error)")
            }
        }
        self.tls = tls
    }

    func get(_ url: URL) async throws -> (status: Int, body: Data) {
        try await send(HTTPClientRequest(url: url.absoluteString))
    }

    func postForm(_ url: URL, form: [(String, String)], headers: [(String, String)]) async throws -> (status: Int, body: Data) {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let body = form.map { OIDCProvider.formEscape($0.0) + "=" + OIDCProvider.formEscape($0.1) }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: body))
        return try await send(request)
    }

    private func send(_ request: HTTPClientRequest) async throws -> (status: Int, body: Data) {
        let configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow,
                                                     timeout: .init(connect: Self.timeout, read: Self.timeout))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let response = try await client.execute(request, timeout: Self.timeout)
            let body = try await response.body.collect(upTo: Self.maxBody)
            try await client.shutdown()
            return (Int(response.status.code), Data(body.readableBytesView))
        } catch {
            try? await client.shutdown()
            throw OIDCError.unreachable("\(request.url): \(error)")
        }
    }
}
