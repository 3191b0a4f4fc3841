/// A social network profile (`X-SOCIALPROFILE;TYPE=twitter;x-user=…:url`).
public struct SocialProfile: Sendable, Hashable {
    /// The network as written in TYPE (`twitter`), nil when absent.
    public var service: String?
    /// The user name from the `x-user` parameter.
    public var username: String?
    /// The property value: usually the profile URL, sometimes a bare handle.
    public var urlString: String

    public init(service: String?, username: String?, urlString: String) {
        self.service = service
        self.username = username
        self.urlString = urlString
    }
}

/// An instant messaging address (`IMPP`): a URI plus the service it belongs to.
public struct InstantMessageAddress: Sendable, Hashable {
    /// `X-SERVICE-TYPE` when given (`Skype`), else the URI scheme (`xmpp`).
    public var service: String
    /// The URI as written (`xmpp:tomek@jabber.example`).
    public var uri: String

    public init(service: String, uri: String) {
        self.service = service
        self.uri = uri
    }

    /// The URI scheme (`xmpp`), or "" when the value has none.
    var scheme: String {
        guard let colon = uri.firstIndex(of: ":") else { return "" }
        return String(uri[..<colon])
    }
}
