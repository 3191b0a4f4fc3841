import Foundation

// The organisation's directory (issue 32): a read-only book the server builds from its
// users' entries and mounts in each member's home like a read-only share. What an entry
// becomes as a card is `DirectoryCard` (Contacts); who is in it and who sees it is here.

/// Who sees a directory: nobody (`off`, the default), every user (`all`), per group, or
/// every user through the directory gateway alone (`gateway`: searched with
/// addressbook-query, never mounted, listed or synced, for large organisations).
public enum DirectoryMode: String, Sendable, CaseIterable {
    case off, all, groups, gateway
}

/// A field of a directory card: what `directory_fields` carries and a user can hide on
/// "My card". The name is always carried and cannot be hidden (a card needs an `FN`).
public enum DirectoryField: String, Sendable, CaseIterable, Codable {
    case name, email, phone, title, department, organisation, photo

    /// The fields a user can hide: every one but the name.
    public static let hideable: [DirectoryField] = allCases.filter { $0 != .name }
}

/// What colleagues see of one user: the fields of their card in the directory, each as the
/// user (or an admin) set it; nil falls back to the account record (display name, e-mail).
public struct DirectoryEntry: Sendable, Hashable, Codable {
    public var displayName: String?
    public var email: String?
    public var phones: [String]
    public var title: String?
    public var department: String?
    public var organization: String?
    /// JPEG or PNG bytes.
    public var photo: Data?
    /// The user opted out: no card of theirs in the directory.
    public var hidden: Bool
    /// The user hid the directory from their own devices: it is not mounted in their home.
    public var mountHidden: Bool
    /// Fields the user hid on "My card": left out of their card whatever holds them (their
    /// entry, the account, LDAP), so they never leave the server.
    public var hiddenFields: [DirectoryField]

    public init(displayName: String? = nil, email: String? = nil, phones: [String] = [], title: String? = nil,
                department: String? = nil, organization: String? = nil, photo: Data? = nil, hidden: Bool = false,
                mountHidden: Bool = false, hiddenFields: [DirectoryField] = []) {
        self.displayName = displayName; self.email = email; self.phones = phones; self.title = title
        self.department = department; self.organization = organization; self.photo = photo
        self.hidden = hidden; self.mountHidden = mountHidden; self.hiddenFields = hiddenFields
    }

    /// Decoded leniently: a field added later reads as its default from an older row.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        displayName = try c.decodeIfPresent(String.self, forKey: .displayName)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        phones = try c.decodeIfPresent([String].self, forKey: .phones) ?? []
        title = try c.decodeIfPresent(String.self, forKey: .title)
        department = try c.decodeIfPresent(String.self, forKey: .department)
        organization = try c.decodeIfPresent(String.self, forKey: .organization)
        photo = try c.decodeIfPresent(Data.self, forKey: .photo)
        hidden = try c.decodeIfPresent(Bool.self, forKey: .hidden) ?? false
        mountHidden = try c.decodeIfPresent(Bool.self, forKey: .mountHidden) ?? false
        hiddenFields = try c.decodeIfPresent([DirectoryField].self, forKey: .hiddenFields) ?? []
    }

    /// The stored form: JSON with sorted keys, so the same entry is the same bytes.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    public static func decoded(_ data: Data) throws -> DirectoryEntry {
        try JSONDecoder().decode(DirectoryEntry.self, from: data)
    }
}

/// The users' directory entries, kept by the store (`directory_entries`: SQLite
/// `v16-directory`, PostgreSQL `v9-directory`). A role of its own outside `RoloStore`'s
/// union, like `FeedStore`: the server and the CLI ask `store as? any DirectoryStore`.
/// The directory book itself is an ordinary book of `DirectoryRules.owner`, written through
/// `CardStore` like any other, so its ETags, ctag and change log are a book's.
public protocol DirectoryStore: Sendable {
    /// The entries users (or admins) set, by user name; users without one are absent.
    func directoryEntries() async throws -> [String: DirectoryEntry]
    /// Every account, in one read (a rebuild looks at each user; one read per user was
    /// most of a no-op rebuild of a large directory).
    func directoryAccounts() async throws -> [UserAccount]
    /// Replaces the user's entry. `noSuchUser` for an unknown user.
    func setDirectoryEntry(user: String, _ entry: DirectoryEntry) async throws
}

extension DirectoryStore {
    /// The user's entry, or the empty one (every field from the account record).
    public func directoryEntry(user: String) async throws -> DirectoryEntry {
        try await directoryEntries()[user] ?? DirectoryEntry()
    }
}

/// The people a user directory lists (the `ldap` source's users, read at each rebuild):
/// what fills the entries of that source's users, and who of them is still in the
/// organisation. Not stored: read again at every rebuild.
public struct DirectoryPeople: Sendable, Hashable {
    /// `UserAccount.source` of the users it speaks for (`ldap`).
    public var source: String
    /// Each person's card fields by user name (`hidden` and `mountHidden` unused).
    public var people: [String: DirectoryEntry]
    /// The DNs of each person's groups, by user name (for `directory = groups`).
    public var groups: [String: [String]]

    public init(source: String, people: [String: DirectoryEntry], groups: [String: [String]] = [:]) {
        self.source = source
        self.people = people
        self.groups = groups
    }
}

/// Who is in the directory and who sees it, decided once for every back end and front end.
public enum DirectoryRules {
    /// The account that owns the directory book: made by the first rebuild, disabled (it
    /// never signs in), with `source` `directory` so that a real user of that name is told
    /// apart and never taken over.
    public static let owner = "rolo"
    /// `UserAccount.source` of the owner account.
    public static let ownerSource = "directory"
    /// The book's path below the owner's home.
    public static let book = "directory"
    /// The book's display name.
    public static let displayName = "Directory"
    /// The mount's stable name in each member's home (`directory~rolo`): a share's mount
    /// name, so it never collides with a user's own books.
    public static var mountName: String { Share.mountName(book: book, owner: owner) }

    /// True for a directory's book (the one of `all`, or a group's), however it is reached
    /// (its owner's path or a mount).
    public static func isDirectory(_ collection: CollectionInfo) -> Bool {
        collection.owner == owner && collection.path.count == 1
            && (collection.path[0] == book || collection.path[0].hasPrefix(book + "-"))
    }

    /// The book of a group's directory (`directory = groups`): `directory-` and the value of
    /// the group DN's first part, lower-cased, with anything but letters, digits, `-` and `_`
    /// as `-` (`cn=Sales Team,ou=groups,...` is `directory-sales-team`, mounted as
    /// `directory-sales-team~rolo`); nil for a DN without a first `name=value`.
    public static func groupBook(_ dn: String) -> String? {
        guard let first = dn.split(separator: ",").first, let equals = first.firstIndex(of: "=") else { return nil }
        let value = first[first.index(after: equals)...].trimmingCharacters(in: .whitespaces).lowercased()
        let slug = String(value.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "-" })
        guard !slug.isEmpty, slug.contains(where: { $0 != "-" }) else { return nil }
        return book + "-" + slug
    }

    /// A group directory's display name: "Directory: " and the group's name as the DN spells it.
    public static func groupDisplayName(_ dn: String) -> String {
        let first = dn.split(separator: ",").first.map(String.init) ?? dn
        let name = first.firstIndex(of: "=").map { String(first[first.index(after: $0)...]) } ?? first
        return "\(displayName): \(name.trimmingCharacters(in: .whitespaces))"
    }

    /// DNs compared as directories spell them: case aside, spaces after commas aside.
    public static func sameDN(_ lhs: String, _ rhs: String) -> Bool {
        func folded(_ dn: String) -> String {
            dn.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ",").lowercased()
        }
        return folded(lhs) == folded(rhs)
    }

    /// The most cards an addressbook-query on the directory answers (RFC 6352 §8.6.1: a
    /// server may truncate, saying so with `DAV:number-of-matches-within-limits`), so a
    /// client searching a large directory through its gateway never pulls it whole.
    public static let defaultQueryLimit = 200

    /// True for the directory's owner account.
    public static func isOwner(_ account: UserAccount) -> Bool {
        account.name == owner && account.source == ownerSource
    }

    /// Whether `account` has a card in the directory: not the owner, not disabled (a
    /// service account an admin turned off stays out), not opted out.
    public static func isListed(_ account: UserAccount, entry: DirectoryEntry?) -> Bool {
        !isOwner(account) && !account.disabled && !(entry?.hidden ?? false)
    }

    /// Whether the directory is mounted in `account`'s home under `mode`.
    /// With `groups`, whether they may have a group's directory at all (`DirectorySync` checks
    /// the group).
    public static func isMember(_ account: UserAccount, entry: DirectoryEntry?, mode: DirectoryMode) -> Bool {
        guard mode == .all || mode == .groups else { return false }
        return !isOwner(account) && !account.disabled && !(entry?.mountHidden ?? false)
    }

    /// A person's entry from their source (LDAP) with what they set on "My card" over it: a
    /// field the user set wins (an e-mail set empty is hidden), phones they set replace the
    /// source's, and leaving out, hiding the directory and hiding fields are theirs alone.
    public static func merged(_ user: DirectoryEntry?, over source: DirectoryEntry) -> DirectoryEntry {
        guard let user else { return source }
        return DirectoryEntry(displayName: user.displayName ?? source.displayName, email: user.email ?? source.email,
                              phones: user.phones.isEmpty ? source.phones : user.phones, title: user.title ?? source.title,
                              department: user.department ?? source.department,
                              organization: user.organization ?? source.organization, photo: user.photo ?? source.photo,
                              hidden: user.hidden, mountHidden: user.mountHidden, hiddenFields: user.hiddenFields)
    }

    /// With `gateway`, the book as a user searches it: the directory's mount, read-only, made
    /// for the request and never stored (so nothing lists it: not the home, not the web UI,
    /// not a feed), at the path the user's directory gateway names.
    public static func gatewayView(of book: CollectionInfo, for user: String) -> CollectionInfo {
        var view = book
        view.mount = Mount(shareID: 0, sharee: user, name: mountName, access: .readOnly, displayName: displayName)
        return view
    }

    /// The card's resource name in the book: the user name, which is a path segment already.
    public static func resourceName(user: String) -> String { "\(user).vcf" }

    /// The card's UID: stable for the user, so clients keep it across rebuilds.
    public static func uid(user: String) -> String { "rolo-directory-\(user)" }
}
