import RoloStore

/// Who makes a request: the authenticated user, the credential they used and what it may reach.
public struct Credential: Sendable, Hashable {
    public var user: String
    /// The app password's id; 0 for the account password.
    public var appPasswordID: Int64
    public var scope: CredentialScope

    public init(user: String, appPasswordID: Int64, scope: CredentialScope) {
        self.user = user; self.appPasswordID = appPasswordID; self.scope = scope
    }

    /// The account password's credential; the web UI's session signs in with it.
    public static func accountPassword(_ user: String) -> Credential {
        Credential(user: user, appPasswordID: 0, scope: .full)
    }

    public var isAppPassword: Bool { appPasswordID != 0 }

    /// The change-log attribution of this credential's writes.
    public var author: ChangeAuthor { ChangeAuthor(user: user, credentialID: appPasswordID) }
}
