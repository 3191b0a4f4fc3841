/// What a snapshot reads of each table, the same on every back end: the columns in the order
/// `SnapshotRecord` decodes them and the key pages are read in. A back end spells a column
/// differently only where its SQL must (`SnapshotSource.replacing`).
extension SnapshotTable {
    package var tableName: String {
        switch self {
        case .settings: "settings"
        case .users: "users"
        case .collections: "collections"
        case .resources: "resources"
        case .changes: "changes"
        case .deadProperties: "dead_properties"
        case .shares: "shares"
        case .appPasswords: "app_passwords"
        case .accessHourly: "access_hourly"
        case .accessDaily: "access_daily"
        case .pushRegistrations: "push_registrations"
        case .trash: "trash"
        case .feeds: "feeds"
        case .cardVersions: "card_versions"
        case .cardVersionBodies: "card_version_bodies"
        case .cardVersionParts: "card_version_parts"
        case .cardVersionPartRefs: "card_version_part_refs"
        case .directoryEntries: "directory_entries"
        }
    }

    package var columns: [String] {
        switch self {
        case .settings: ["key", "value"]
        case .users:
            ["id", "name", "password_hash", "created", "display_name", "email", "app_passwords_only", "admin", "disabled",
             "home_seq", "source"]
        case .collections:
            ["id", "owner_id", "parent_id", "path", "kind", "display_name", "description", "sync_seq", "min_valid_seq",
             "created", "modified", "push_topic"]
        case .resources: ["id", "collection_id", "name", "content_type", "etag", "modified", "seq", "uid", "kind", "data"]
        case .changes: ["collection_id", "seq", "name", "deleted", "at", "actor_user", "actor_credential"]
        case .deadProperties: ["collection_id", "resource", "namespace", "name", "xml", "language"]
        case .shares:
            ["id", "collection_id", "sharee_id", "access", "state", "mount_name", "mount_display_name", "created", "modified"]
        case .appPasswords:
            ["id", "user_id", "public_id", "name", "secret_hash", "read_only", "all_books", "created", "last_used",
             "last_address", "last_user_agent", "revoked"]
        case .accessHourly, .accessDaily:
            ["user_id", "credential_id", "book_id", "period_start", "requests", "cards_read", "cards_written",
             "cards_deleted", "full_download"]
        case .pushRegistrations:
            ["id", "user_id", "collection_id", "credential_id", "push_resource", "public_key", "auth_secret", "expires",
             "created", "last_success", "failures", "first_failure", "retry_after"]
        case .trash:
            ["id", "collection_id", "batch", "reason", "name", "uid", "display_name", "etag", "replaced_by", "content_type",
             "data", "trashed", "user"]
        case .feeds: ["id", "user_id", "kind", "secret_hash", "books", "created", "last_read"]
        case .cardVersions: ["collection_id", "seq", "name", "at", "etag", "content_type", "actor_user", "actor_credential"]
        case .cardVersionBodies: ["etag", "data"]
        case .cardVersionParts: ["hash", "data"]
        case .cardVersionPartRefs: ["etag", "hash", "start", "length"]
        case .directoryEntries: ["user_id", "entry"]
        }
    }

    package var key: [String] {
        switch self {
        case .settings: ["key"]
        case .changes, .cardVersions: ["collection_id", "seq"]
        case .cardVersionBodies: ["etag"]
        case .cardVersionParts: ["hash"]
        case .cardVersionPartRefs: ["etag", "hash"]
        case .directoryEntries: ["user_id"]
        case .deadProperties: ["collection_id", "resource", "namespace", "name"]
        case .accessHourly, .accessDaily: ["user_id", "credential_id", "book_id", "period_start"]
        default: ["id"]
        }
    }

    /// Every card version as one table, in both stores: the versions a later change replaced
    /// (`card_versions`) and each card's current one, its change row (SQLite v18, PostgreSQL
    /// v13; a tombstone's is its deletion). Readers filter by book and name, or book and time,
    /// which both databases push into the two halves.
    package static let allCardVersions: String = {
        let columns = SnapshotTable.cardVersions.columns.joined(separator: ", ")
        return "(SELECT \(columns) FROM card_versions UNION ALL SELECT \(columns) FROM changes)"
    }()
}

/// A table's snapshot read as one back end's SQL spells it.
package struct SnapshotSource: Sendable {
    package var table: String
    package var columns: String
    package var key: [String]

    package init(_ table: SnapshotTable) {
        self.table = table == .cardVersionBodies ? Self.versionBodiesTheHistoryNeeds : table.tableName
        columns = table.columns.joined(separator: ", ")
        key = table.key
    }

    /// A version's text where the history needs it: not a body that every version naming it
    /// can read from its card, which SQLite keeps in the card alone (schema v17) and
    /// PostgreSQL in both. So each back end copies the same records, and a target holds
    /// what its own writes would have (PostgreSQL's trigger puts the cards' back).
    static let versionBodiesTheHistoryNeeds = """
        (SELECT etag, data FROM card_version_bodies b WHERE EXISTS (
            SELECT 1 FROM card_versions v WHERE v.etag = b.etag AND NOT EXISTS (
                SELECT 1 FROM resources cur WHERE cur.collection_id = v.collection_id AND cur.name = v.name AND cur.etag = v.etag))
        ) AS card_version_bodies
        """

    /// The same read with some columns (and the table, and key) spelled otherwise.
    package func replacing(table: String? = nil, columns replacements: [String: String] = [:], key: [String]? = nil,
                           of snapshotTable: SnapshotTable) -> SnapshotSource {
        var copy = self
        if let table { copy.table = table }
        copy.columns = snapshotTable.columns.map { replacements[$0] ?? $0 }.joined(separator: ", ")
        if let key { copy.key = key }
        return copy
    }
}
