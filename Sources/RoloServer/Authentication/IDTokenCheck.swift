import Foundation

/// Why a sign-in through the provider did not sign anyone in.
enum OIDCError: Error, Equatable, CustomStringConvertible {
    /// The provider could not be reached, or answered with a server error: 503.
    case unreachable(String)
    /// The provider answered something Rolo cannot use (a broken discovery or JWKS document).
    case provider(String)
    /// The sign-in is refused: a bad token, a wrong state, a missing group.
    case refused(String)

    var description: String {
        switch self {
        case .unreachable(let text): "the provider is unreachable: \(text)"
        case .provider(let text): "the provider's answer is unusable: \(text)"
        case .refused(let text): text
        }
    }
}

/// The checks of an ID token (OpenID Connect Core §3.1.3.7), as a pure function of the token,
/// the keys, the clock and what the sign-in expects: the JWS signature against the
/// provider's keys, `iss`, `aud` (and `azp` when several audiences), `exp`, `nonce`.
struct IDTokenCheck: Sendable {
    /// The issuer as discovery said it, which `iss` must equal exactly.
    let issuer: String
    let clientID: String
    /// Clock skew allowed on `exp` and `iat`.
    static let leeway: TimeInterval = 60

    /// The parts of a compact JWS, decoded; nil when it is not one.
    struct Parsed {
        var header: [String: Any]
        var claims: [String: Any]
        var signingInput: Data
        var signature: Data
        var kid: String? { header["kid"] as? String }
        var algorithm: String { header["alg"] as? String ?? "" }
    }

    static func parse(_ token: String) -> Parsed? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.decode(String(parts[0])), let payload = Base64URL.decode(String(parts[1])),
              let signature = Base64URL.decode(String(parts[2])),
              let headerObject = try? JSONSerialization.jsonObject(with: header) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any] else { return nil }
        return Parsed(header: headerObject, claims: claims, signingInput: Data((parts[0] + "." + parts[1]).utf8),
                      signature: signature)
    }

    /// The token's claims when every check passes; `.refused` naming the first that fails.
    /// `keys` nil for the token's key means the caller should refetch the JWKS and ask again
    /// (`unknownKey`).
    func claims(of token: String, keys: JSONWebKeys, nonce: String, now: Date) throws -> [String: Any] {
        guard let parsed = Self.parse(token) else { throw OIDCError.refused("The ID token is not a signed JWT.") }
        guard ["RS256", "ES256"].contains(parsed.algorithm) else {
            throw OIDCError.refused("The ID token's algorithm \(parsed.algorithm) is not accepted (RS256 or ES256).")
        }
        guard let key = keys.key(kid: parsed.kid, algorithm: parsed.algorithm) else { throw UnknownKey(kid: parsed.kid) }
        guard JSONWebKeys.verify(parsed.signature, of: parsed.signingInput, with: key, algorithm: parsed.algorithm) else {
            throw OIDCError.refused("The ID token's signature does not verify.")
        }
        let claims = parsed.claims
        guard claims["iss"] as? String == issuer else { throw OIDCError.refused("The ID token's issuer is not \(issuer).") }
        let audiences: [String] = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String]) ?? []
        guard audiences.contains(clientID) else { throw OIDCError.refused("The ID token is not meant for this client.") }
        if audiences.count > 1, let azp = claims["azp"] as? String, azp != clientID {
            throw OIDCError.refused("The ID token was issued to another client.")
        }
        guard let exp = Self.seconds(claims["exp"]) else { throw OIDCError.refused("The ID token has no expiry.") }
        guard now.timeIntervalSince1970 < exp + Self.leeway else { throw OIDCError.refused("The ID token has expired.") }
        if let iat = Self.seconds(claims["iat"]), iat > now.timeIntervalSince1970 + Self.leeway {
            throw OIDCError.refused("The ID token was issued in the future.")
        }
        guard let tokenNonce = claims["nonce"] as? String, tokenNonce == nonce else {
            throw OIDCError.refused("The ID token's nonce is not this sign-in's.")
        }
        return claims
    }

    /// The token names a key the cached JWKS does not hold (the provider rotated its keys).
    struct UnknownKey: Error, Equatable {
        var kid: String?
    }

    static func seconds(_ value: Any?) -> TimeInterval? {
        (value as? NSNumber)?.doubleValue
    }
}
