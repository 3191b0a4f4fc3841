/// Binary content carried inside a card (PHOTO, LOGO, SOUND, KEY), decoded.
public struct VCardInlineData: Sendable, Hashable {
    /// `image/jpeg`, or nil when the card does not say.
    public var mediaType: String?
    public var bytes: [UInt8]

    public init(mediaType: String?, bytes: [UInt8]) {
        self.mediaType = mediaType
        self.bytes = bytes
    }
}

extension VCardProperty {
    /// Decodes an inline value: a vCard 4 `data:` URI (base64 or percent-encoded) or a
    /// 2.1/3.0 `ENCODING=b`/`BASE64` value with `TYPE=JPEG`. Nil for external URIs or bad data.
    public var inlineData: VCardInlineData? {
        if rawValue.utf8.count >= 5, rawValue.prefix(5).lowercased() == "data:" {
            return DataURI.decode(rawValue)
        }
        guard let encoding = parameter("ENCODING")?.first?.uppercased(), encoding == "B" || encoding == "BASE64",
              let bytes = Base64.decode(rawValue)
        else { return nil }
        return VCardInlineData(mediaType: MediaTypes.mediaType(forTypeParameter: types.first, property: name), bytes: bytes)
    }
}

/// `data:[<mediatype>][;base64],<data>` (RFC 2397).
enum DataURI {
    static func decode(_ uri: String) -> VCardInlineData? {
        guard let comma = uri.firstIndex(of: ",") else { return nil }
        let header = uri[uri.index(uri.startIndex, offsetBy: 5)..<comma]
        let payload = uri[uri.index(after: comma)...]
        var headerParts = header.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        // `;base64` is the marker; a header that is only `base64` is a media type.
        let isBase64 = headerParts.count >= 2 && headerParts.last?.lowercased() == "base64"
        if isBase64 { headerParts.removeLast() }
        let mediaType = headerParts.first.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        if isBase64 {
            guard let bytes = Base64.decode(payload) else { return nil }
            return VCardInlineData(mediaType: mediaType, bytes: bytes)
        }
        guard let bytes = percentDecode(payload) else { return nil }
        return VCardInlineData(mediaType: mediaType, bytes: bytes)
    }

    /// Splits a data: URI into its media type and base64 payload, when it is base64.
    static func base64Parts(_ uri: String) -> (mediaType: String?, payload: Substring)? {
        guard uri.utf8.count >= 5, uri.prefix(5).lowercased() == "data:", let comma = uri.firstIndex(of: ",") else {
            return nil
        }
        let header = uri[uri.index(uri.startIndex, offsetBy: 5)..<comma]
        let parts = header.split(separator: ";", omittingEmptySubsequences: false)
        // `data:base64,…` has no `;base64` marker: its media type is "base64" and its data is
        // not base64 (found by fuzzing: it came back from 3.0 as `data:;base64,…`).
        guard parts.count >= 2, parts.last?.lowercased() == "base64" else { return nil }
        let mediaType = parts.count > 1 && !parts[0].isEmpty ? parts[0].lowercased() : nil
        return (mediaType, uri[uri.index(after: comma)...])
    }

    private static func percentDecode(_ text: Substring) -> [UInt8]? {
        var out: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                out.append(value)
            } else {
                out.append(byte)
            }
        }
        return out
    }
}

/// 3.0 `TYPE=JPEG` <-> 4.0 `image/jpeg`.
enum MediaTypes {
    static func mediaType(forTypeParameter type: String?, property: String) -> String? {
        guard let type, !type.isEmpty else { return nil }
        let lower = type.lowercased()
        if lower.contains("/") { return lower }
        switch property {
        case "SOUND": return "audio/" + lower
        case "KEY": return lower == "pgp" ? "application/pgp-keys" : "application/" + lower
        default: return "image/" + lower
        }
    }

    static func typeParameter(forMediaType mediaType: String) -> String {
        if mediaType == "application/pgp-keys" { return "PGP" }
        guard let slash = mediaType.firstIndex(of: "/") else { return mediaType.uppercased() }
        return mediaType[mediaType.index(after: slash)...].uppercased()
    }
}
