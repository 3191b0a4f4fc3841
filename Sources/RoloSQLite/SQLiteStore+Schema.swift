import RoloStore
import GRDB

extension SQLiteStore {
    /// The schema, one migration per released change. Foreign keys cascade so that deleting
    /// a user, a collection or a resource removes everything that hangs off it.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE users (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    password_hash TEXT NOT NULL,
                    created REAL NOT NULL
                );
                -- path: the components below the owner's home joined by '/', which no name contains.
                -- min_valid_seq: tokens older than this lost tombstones to compaction.
                CREATE TABLE collections (
                    id INTEGER PRIMARY KEY,
                    owner_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    parent_id INTEGER REFERENCES collections(id) ON DELETE CASCADE,
                    path TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('addressbook', 'plain')),
                    display_name TEXT,
                    description TEXT,
                    sync_seq INTEGER NOT NULL DEFAULT 0,
                    min_valid_seq INTEGER NOT NULL DEFAULT 0,
                    created REAL NOT NULL,
                    modified REAL NOT NULL,
                    UNIQUE (owner_id, path)
                );
                CREATE INDEX collections_parent ON collections(parent_id);
                CREATE TABLE resources (
                    id INTEGER PRIMARY KEY,
                    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    content_type TEXT NOT NULL,
                    etag TEXT NOT NULL,
                    data BLOB NOT NULL,
                    size INTEGER NOT NULL,
                    modified REAL NOT NULL,
                    seq INTEGER NOT NULL,
                    uid TEXT,
                    kind TEXT,
                    UNIQUE (collection_id, name)
                );
                CREATE UNIQUE INDEX resources_uid ON resources(collection_id, uid) WHERE uid IS NOT NULL;
                -- Search index: value verbatim (i;octet), ASCII-folded and Unicode-folded.
                -- Clustered by resource (no separate rowid b-tree); the two folded indexes
                -- cover the queries and carry the resource id.
                CREATE TABLE card_index (
                    resource_id INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    collection_id INTEGER NOT NULL,
                    property TEXT NOT NULL,
                    value TEXT NOT NULL,
                    value_ascii TEXT NOT NULL,
                    value_unicode TEXT NOT NULL,
                    PRIMARY KEY (resource_id, position)
                ) WITHOUT ROWID;
                CREATE INDEX card_index_ascii ON card_index(collection_id, property, value_ascii);
                CREATE INDEX card_index_unicode ON card_index(collection_id, property, value_unicode);
                CREATE TABLE group_members (
                    resource_id INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
                    collection_id INTEGER NOT NULL,
                    member_uid TEXT NOT NULL
                );
                CREATE INDEX group_members_resource ON group_members(resource_id);
                CREATE INDEX group_members_uid ON group_members(collection_id, member_uid);
                -- The change log keeps the latest change per name: what a sync needs.
                CREATE TABLE changes (
                    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                    seq INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    deleted INTEGER NOT NULL,
                    at REAL NOT NULL,
                    PRIMARY KEY (collection_id, seq),
                    UNIQUE (collection_id, name)
                ) WITHOUT ROWID;
                -- resource '' holds the collection's own properties.
                CREATE TABLE dead_properties (
                    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                    resource TEXT NOT NULL,
                    namespace TEXT NOT NULL,
                    name TEXT NOT NULL,
                    xml TEXT NOT NULL,
                    PRIMARY KEY (collection_id, resource, namespace, name)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v2-lean-card-index") { db in
            // Each index entry cost three b-tree inserts (table, ASCII index, Unicode index)
            // and a foreign-key lookup. Most values are ASCII, whose two folds are equal, and
            // many are already their own fold, so v2 stores a fold or the verbatim value only
            // where it differs (NULL otherwise) and indexes the ASCII fold only for the rows
            // that have one. The index is derived data written with its resource: a trigger
            // removes it with the resource (also on cascades), instead of a foreign key
            // checked on every one of a card's inserts; integrityCheck() looks for orphans.
            try db.execute(sql: """
                CREATE TABLE card_index_v2 (
                    resource_id INTEGER NOT NULL,
                    position INTEGER NOT NULL,
                    collection_id INTEGER NOT NULL,
                    property TEXT NOT NULL,
                    -- i;unicode-casemap fold.
                    value_unicode TEXT NOT NULL,
                    -- i;ascii-casemap fold; NULL when equal to value_unicode.
                    value_ascii TEXT,
                    -- The value verbatim (i;octet); NULL when equal to its ASCII fold.
                    value TEXT,
                    PRIMARY KEY (resource_id, position)
                ) WITHOUT ROWID;
                INSERT INTO card_index_v2 (resource_id, position, collection_id, property, value_unicode, value_ascii, value)
                    SELECT resource_id, position, collection_id, property, value_unicode,
                           NULLIF(value_ascii, value_unicode), NULLIF(value, value_ascii)
                    FROM card_index;
                DROP TABLE card_index;
                ALTER TABLE card_index_v2 RENAME TO card_index;
                -- Covers every query: value_ascii IS NULL tells that the Unicode fold is
                -- also the ASCII one.
                CREATE INDEX card_index_unicode ON card_index(collection_id, property, value_unicode, value_ascii);
                CREATE INDEX card_index_ascii ON card_index(collection_id, property, value_ascii)
                    WHERE value_ascii IS NOT NULL;
                CREATE TRIGGER resources_delete_index AFTER DELETE ON resources BEGIN
                    DELETE FROM card_index WHERE resource_id = OLD.id;
                END;
                """)
        }
        migrator.registerMigration("v3-resource-bodies") { db in
            // Listings, syncs and index hits read the names, ETags and sizes of many
            // resources; with the bodies inline those rows spread over four times the pages.
            // Bodies live apart, keyed by resource id, and go with their resource.
            try db.execute(sql: """
                CREATE TABLE resource_bodies (
                    resource_id INTEGER PRIMARY KEY REFERENCES resources(id) ON DELETE CASCADE,
                    data BLOB NOT NULL
                );
                INSERT INTO resource_bodies (resource_id, data) SELECT id, data FROM resources;
                ALTER TABLE resources DROP COLUMN data;
                """)
        }
        migrator.registerMigration("v4-listing-index") { db in
            // Listings (PROPFIND Depth 1, initial sync, index hits, multiget) read a card's
            // name, ETag, size, date and content type by name. Through the unique name index
            // each row costs a lookup in the table b-tree, on a page that name order visits
            // at random: 40% of the SQLite time of a 10,000-card listing, and at 100,000 cards
            // a pread per row. This index covers them, in name order; the rowid it carries
            // joins the bodies. One more b-tree entry per write, measured in
            // Docs/performance.md ("Listings from a covering index").
            try db.execute(sql: """
                CREATE INDEX resources_listing ON resources(collection_id, name, etag, size, modified, seq, content_type);
                """)
        }
        migrator.registerMigration("v5-pending-index") { db in
            // A card's index entries land at random places of the two value indexes: about
            // nine b-tree leaves written per card on every commit, half the log a PUT
            // writes. New entries are appended to this table instead (clustered by
            // resource, like card_index) and moved into card_index in batches by the writer
            // between bursts of writes (`SQLiteStore.mergePendingIndex`), where each leaf
            // is written once per batch. Queries read both tables. A resource's entries are
            // always all in one of them: writes replace them whole.
            try db.execute(sql: """
                CREATE TABLE card_index_pending (
                    resource_id INTEGER NOT NULL,
                    position INTEGER NOT NULL,
                    collection_id INTEGER NOT NULL,
                    property TEXT NOT NULL,
                    value_unicode TEXT NOT NULL,
                    value_ascii TEXT,
                    value TEXT,
                    PRIMARY KEY (resource_id, position)
                ) WITHOUT ROWID;
                DROP TRIGGER resources_delete_index;
                CREATE TRIGGER resources_delete_index AFTER DELETE ON resources BEGIN
                    DELETE FROM card_index WHERE resource_id = OLD.id;
                    DELETE FROM card_index_pending WHERE resource_id = OLD.id;
                END;
                """)
        }
        migrator.registerMigration("v6-sharing") { db in
            // Shared books, app passwords and the access history (issue 17). Existing rows
            // are kept as they are: every card, ETag and sync token stays valid.
            try db.execute(sql: """
                ALTER TABLE users ADD COLUMN display_name TEXT;
                ALTER TABLE users ADD COLUMN email TEXT;
                ALTER TABLE users ADD COLUMN app_passwords_only INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE users ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;
                -- The home's ctag: moves when the collections listed in the home change.
                ALTER TABLE users ADD COLUMN home_seq INTEGER NOT NULL DEFAULT 0;
                -- Who made each change (NULL for changes made before v6 and by bulk tools);
                -- credential 0 is the account password.
                ALTER TABLE changes ADD COLUMN actor_user TEXT;
                ALTER TABLE changes ADD COLUMN actor_credential INTEGER;
                -- Server-wide secrets made once (the app-password pepper, later push keys).
                CREATE TABLE settings (
                    key TEXT PRIMARY KEY,
                    value BLOB NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE shares (
                    id INTEGER PRIMARY KEY,
                    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                    sharee_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    access TEXT NOT NULL CHECK (access IN ('read', 'read-write')),
                    state TEXT NOT NULL CHECK (state IN ('pending', 'accepted')),
                    mount_name TEXT NOT NULL,
                    mount_display_name TEXT,
                    created REAL NOT NULL,
                    modified REAL NOT NULL,
                    UNIQUE (collection_id, sharee_id),
                    UNIQUE (sharee_id, mount_name)
                );
                -- secret_hash: HMAC-SHA-256 under the pepper; public_id: the lookup key
                -- the token carries (rolo_<public_id>_<secret>).
                CREATE TABLE app_passwords (
                    id INTEGER PRIMARY KEY,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    public_id TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL,
                    secret_hash BLOB NOT NULL,
                    read_only INTEGER NOT NULL,
                    all_books INTEGER NOT NULL,
                    created REAL NOT NULL,
                    last_used REAL,
                    last_address TEXT,
                    last_user_agent TEXT,
                    revoked REAL
                );
                CREATE UNIQUE INDEX app_passwords_live_name ON app_passwords(user_id, name) WHERE revoked IS NULL;
                CREATE TABLE app_password_books (
                    app_password_id INTEGER NOT NULL REFERENCES app_passwords(id) ON DELETE CASCADE,
                    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                    PRIMARY KEY (app_password_id, collection_id)
                ) WITHOUT ROWID;
                -- Counts only, never which cards. book_id 0: requests that touched no book.
                -- period_start: the hour (access_hourly) or the UTC day (access_daily).
                CREATE TABLE access_hourly (
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    credential_id INTEGER NOT NULL,
                    book_id INTEGER NOT NULL,
                    period_start INTEGER NOT NULL,
                    requests INTEGER NOT NULL,
                    cards_read INTEGER NOT NULL,
                    cards_written INTEGER NOT NULL,
                    cards_deleted INTEGER NOT NULL,
                    full_download INTEGER NOT NULL,
                    PRIMARY KEY (user_id, credential_id, book_id, period_start)
                ) WITHOUT ROWID;
                CREATE INDEX access_hourly_book ON access_hourly(book_id, period_start);
                CREATE TABLE access_daily (
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    credential_id INTEGER NOT NULL,
                    book_id INTEGER NOT NULL,
                    period_start INTEGER NOT NULL,
                    requests INTEGER NOT NULL,
                    cards_read INTEGER NOT NULL,
                    cards_written INTEGER NOT NULL,
                    cards_deleted INTEGER NOT NULL,
                    full_download INTEGER NOT NULL,
                    PRIMARY KEY (user_id, credential_id, book_id, period_start)
                ) WITHOUT ROWID;
                CREATE INDEX access_daily_book ON access_daily(book_id, period_start);
                -- A book's history goes with the book (the users' rows cascade).
                CREATE TRIGGER collections_delete_history AFTER DELETE ON collections BEGIN
                    DELETE FROM access_hourly WHERE book_id = OLD.id;
                    DELETE FROM access_daily WHERE book_id = OLD.id;
                END;
                """)
        }
        migrator.registerMigration("v7-substring-index") { db in
            // contains and ends-with scanned every value of the property in the book, so
            // their cost grew with the book, not with the matches. card_trigrams finds the
            // cards whose values hold every trigram of the needle; the query then checks
            // each candidate's card_index rows exactly (`SQLiteStore.substringMatchSQL`).
            // One row per card (rowid = resource id) whose text is its merged values: the
            // Unicode fold, and the ASCII fold where it differs (`SQLiteStore.trigramText`).
            // detail=none keeps no positions: half the size of detail=full and measured as
            // fast, since the exact check does what phrase positions would. columnsize=0
            // drops ranking data nothing uses. Like card_index it is written when pending
            // entries are merged, never by a PUT: a replaced card's row is replaced then, and
            // a deleted card's row (or one left without entries) is only noted in
            // card_trigram_stale and dropped then (`mergePendingIndex`). Until then a stale
            // row adds candidates that fail the exact check, nothing more.
            try db.execute(sql: """
                CREATE VIRTUAL TABLE card_trigrams USING fts5(
                    text, tokenize = 'trigram case_sensitive 1', detail = none, columnsize = 0);
                CREATE TABLE card_trigram_stale (resource_id INTEGER PRIMARY KEY);
                INSERT INTO card_trigrams (rowid, text)
                    SELECT resource_id, \(SQLiteStore.trigramText) FROM card_index GROUP BY resource_id;
                DROP TRIGGER resources_delete_index;
                CREATE TRIGGER resources_delete_index AFTER DELETE ON resources BEGIN
                    DELETE FROM card_index WHERE resource_id = OLD.id;
                    DELETE FROM card_index_pending WHERE resource_id = OLD.id;
                    INSERT OR IGNORE INTO card_trigram_stale (resource_id) VALUES (OLD.id);
                END;
                """)
        }
        migrator.registerMigration("v8-push") { db in
            // WebDAV-Push (issue 18). Every book gets a topic: random, so that it says
            // nothing about the book and survives a rename, and never reused (unique).
            // A trigger gives new books theirs, whichever statement creates them.
            try db.execute(sql: """
                ALTER TABLE collections ADD COLUMN push_topic TEXT;
                UPDATE collections SET push_topic = lower(hex(randomblob(16)));
                CREATE UNIQUE INDEX collections_push_topic ON collections(push_topic);
                CREATE TRIGGER collections_push_topic AFTER INSERT ON collections
                WHEN NEW.push_topic IS NULL BEGIN
                    UPDATE collections SET push_topic = lower(hex(randomblob(16))) WHERE id = NEW.id;
                END;
                -- One row per user, book and push resource: registering again renews it.
                -- credential_id 0 is the account password.
                CREATE TABLE push_registrations (
                    id TEXT PRIMARY KEY,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                    credential_id INTEGER NOT NULL,
                    push_resource TEXT NOT NULL,
                    public_key BLOB NOT NULL,
                    auth_secret BLOB NOT NULL,
                    expires REAL NOT NULL,
                    created REAL NOT NULL,
                    last_success REAL,
                    failures INTEGER NOT NULL DEFAULT 0,
                    first_failure REAL,
                    retry_after REAL,
                    UNIQUE (collection_id, user_id, push_resource)
                );
                CREATE INDEX push_registrations_user ON push_registrations(user_id);
                -- A registration lives no longer than the access that allowed it: the
                -- sharee's share, the app password that made it.
                CREATE TRIGGER shares_delete_push AFTER DELETE ON shares BEGIN
                    DELETE FROM push_registrations WHERE collection_id = OLD.collection_id AND user_id = OLD.sharee_id;
                END;
                CREATE TRIGGER app_passwords_revoke_push AFTER UPDATE OF revoked ON app_passwords
                WHEN NEW.revoked IS NOT NULL BEGIN
                    DELETE FROM push_registrations WHERE credential_id = NEW.id;
                END;
                CREATE TRIGGER app_passwords_delete_push AFTER DELETE ON app_passwords BEGIN
                    DELETE FROM push_registrations WHERE credential_id = OLD.id;
                END;
                """)
        }
        migrator.registerMigration("v9-web") { db in
            // The web UI (issue 19). card_listings: a card's list row, written with the card
            // (`CardMetadata.listing`), clustered by (book, group or not, sort key, name) so a
            // page of a list, a letter jump or a search in sort order reads consecutive rows
            // and never a card. Cards stored before v9 get theirs from
            // `backfillCardListings`, which needs a vCard parser the store does not have.
            // card_listing_trigrams: the search lines in an FTS5 trigram table, written at
            // the pending-index merge like card_trigrams (v7), for searches whose words are
            // rare in the book (`SQLiteStore.cardListings`).
            // trash: cards the web UI deleted, merged away or replaced in a merge, kept 30
            // days to put back. web_sessions: signed-in browsers, shared by every process and
            // ended with their user. users.disabled: an admin's switch.
            try db.execute(sql: """
                CREATE TABLE card_listings (
                    collection_id INTEGER NOT NULL,
                    is_group INTEGER NOT NULL,
                    sort_key TEXT NOT NULL,
                    name TEXT NOT NULL,
                    resource_id INTEGER NOT NULL UNIQUE,
                    display_name TEXT NOT NULL,
                    organization TEXT,
                    email TEXT,
                    phone TEXT,
                    has_photo INTEGER NOT NULL,
                    search_text TEXT NOT NULL,
                    PRIMARY KEY (collection_id, is_group, sort_key, name)
                ) WITHOUT ROWID;
                CREATE VIRTUAL TABLE card_listing_trigrams USING fts5(
                    text, tokenize = 'trigram case_sensitive 1', detail = none, columnsize = 0);
                DROP TRIGGER resources_delete_index;
                \(Self.resourcesDeleteIndexTriggerV9)
                CREATE TABLE trash (
                    id INTEGER PRIMARY KEY,
                    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                    batch TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    name TEXT NOT NULL,
                    uid TEXT NOT NULL,
                    display_name TEXT NOT NULL,
                    etag TEXT NOT NULL,
                    replaced_by TEXT,
                    content_type TEXT NOT NULL,
                    data BLOB NOT NULL,
                    trashed REAL NOT NULL,
                    user TEXT
                );
                CREATE INDEX trash_collection ON trash(collection_id, trashed);
                CREATE INDEX trash_batch ON trash(batch);
                CREATE TABLE web_sessions (
                    token_hash TEXT PRIMARY KEY,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    csrf_token TEXT NOT NULL,
                    created REAL NOT NULL,
                    last_seen REAL NOT NULL
                );
                CREATE INDEX web_sessions_user ON web_sessions(user_id);
                ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
                """)
        }
        migrator.registerMigration("v10-coordination") { db in
            // Several processes on one database (issue 20), kept alike in SQLite so that one
            // code path serves both. locks: WebDAV write locks (were in memory); home is the
            // first component of root, the only locks one can conflict with. last_sent_seq:
            // the book's seq of the last message claimed for a registration, so that
            // exactly one process sends each (starting at the book's current seq: nothing
            // is owed for changes before the upgrade). login_failures: the failed-login
            // throttle's counts per subnet and per account, kept by every process alike.
            try db.execute(sql: """
                CREATE TABLE locks (
                    token TEXT PRIMARY KEY,
                    user TEXT NOT NULL,
                    home TEXT NOT NULL,
                    root TEXT NOT NULL,
                    root_href TEXT NOT NULL,
                    scope TEXT NOT NULL,
                    infinite INTEGER NOT NULL,
                    owner_xml TEXT NOT NULL,
                    timeout INTEGER NOT NULL,
                    expires REAL NOT NULL
                );
                CREATE INDEX locks_home ON locks(home);
                CREATE INDEX locks_user ON locks(user);
                CREATE TABLE login_failures (
                    kind TEXT NOT NULL,
                    key TEXT NOT NULL,
                    failures INTEGER NOT NULL,
                    last_failure REAL NOT NULL,
                    PRIMARY KEY (kind, key)
                ) WITHOUT ROWID;
                CREATE INDEX login_failures_last ON login_failures(last_failure);
                ALTER TABLE push_registrations ADD COLUMN last_sent_seq INTEGER NOT NULL DEFAULT 0;
                UPDATE push_registrations
                SET last_sent_seq = (SELECT sync_seq FROM collections WHERE id = push_registrations.collection_id);
                """)
        }
        migrator.registerMigration("v11-dead-property-language") { db in
            // The xml:lang a dead property was set under (RFC 4918 §4.3); properties set
            // before had none kept, so NULL.
            try db.execute(sql: "ALTER TABLE dead_properties ADD COLUMN language TEXT")
        }
        migrator.registerMigration("v12-feeds") { db in
            // Feeds at secret URLs (issue 33): only the secret's SHA-256 is kept; books holds
            // the chosen collection ids, space-separated ('' for every book the user can read),
            // checked against the user's access again at every read.
            try db.execute(sql: """
                CREATE TABLE feeds (
                    id INTEGER PRIMARY KEY,
                    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    secret_hash BLOB NOT NULL UNIQUE,
                    books TEXT NOT NULL,
                    created REAL NOT NULL,
                    last_read REAL
                );
                CREATE INDEX feeds_user ON feeds(user_id);
                """)
        }
        migrator.registerMigration("v13-account-source") { db in
            // Where each user comes from (issue 30): everyone before it was made locally.
            try db.execute(sql: "ALTER TABLE users ADD COLUMN source TEXT NOT NULL DEFAULT 'local'")
        }
        migrator.registerMigration("v14-card-versions") { db in
            // Every version of every card (issue 31): each change-log row a write makes or
            // replaces records the card as that change left it, by triggers, so every write
            // path (PUT, MOVE, import, merge, restore, delete) keeps its version in its own
            // transaction. Bodies are kept once per ETag (a hash of the bytes) in
            // card_version_bodies, shared by every version and book with those bytes, and
            // their large properties (a photo) once per hash in card_version_parts
            // (`VersionBody`: written by the write path, which has the bytes at hand; the
            // triggers keep a whole body only where no write path put one). The pruning
            // drops what no version names. etag NULL: a deletion. Cards stored before this
            // migration get their current version now.
            // What both triggers do: the card as the change left it (its body once per ETag).
            let keepVersion = Self.keepVersionV14
            try db.execute(sql: """
                CREATE TABLE card_versions (
                    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                    seq INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    at REAL NOT NULL,
                    etag TEXT,
                    content_type TEXT,
                    actor_user TEXT,
                    actor_credential INTEGER,
                    PRIMARY KEY (collection_id, seq)
                ) WITHOUT ROWID;
                CREATE INDEX card_versions_name ON card_versions(collection_id, name, seq);
                CREATE INDEX card_versions_at ON card_versions(collection_id, at);
                CREATE INDEX card_versions_etag ON card_versions(etag) WHERE etag IS NOT NULL;
                CREATE TABLE card_version_bodies (
                    etag TEXT PRIMARY KEY,
                    data BLOB NOT NULL
                );
                CREATE TABLE card_version_parts (
                    hash TEXT PRIMARY KEY,
                    data BLOB NOT NULL
                );
                CREATE TABLE card_version_part_refs (
                    etag TEXT NOT NULL,
                    hash TEXT NOT NULL,
                    PRIMARY KEY (etag, hash)
                ) WITHOUT ROWID;
                CREATE INDEX card_version_part_refs_hash ON card_version_part_refs(hash);
                CREATE TRIGGER changes_keep_version_insert AFTER INSERT ON changes BEGIN
                \(keepVersion)
                END;
                CREATE TRIGGER changes_keep_version_update AFTER UPDATE ON changes BEGIN
                \(keepVersion)
                END;
                INSERT OR IGNORE INTO card_version_bodies (etag, data)
                    SELECT r.etag, b.data FROM resources r JOIN resource_bodies b ON b.resource_id = r.id;
                INSERT INTO card_versions (collection_id, seq, name, at, etag, content_type, actor_user, actor_credential)
                    SELECT c.collection_id, c.seq, c.name, c.at, r.etag, r.content_type, c.actor_user, c.actor_credential
                    FROM changes c JOIN resources r ON r.collection_id = c.collection_id AND r.name = c.name
                    WHERE NOT c.deleted;
                """)
        }
        migrator.registerMigration("v15-parts-from-current-cards") { db in
            // A photo the current card holds is no longer kept a second time in the history
            // (`VersionBody`): its versions name it, and a write that replaces, deletes or
            // moves the card first copies each part the new body no longer holds out of the
            // old one, by where it starts (`start`, `length`). Filled here for the bodies
            // cards hold now; then each part every version's card still holds is dropped.
            try db.execute(sql: """
                ALTER TABLE card_version_part_refs ADD COLUMN start INTEGER;
                ALTER TABLE card_version_part_refs ADD COLUMN length INTEGER;
                UPDATE card_version_part_refs SET
                    start = (SELECT NULLIF(instr(b.data, p.data), 0) - 1
                             FROM resources r JOIN resource_bodies b ON b.resource_id = r.id, card_version_parts p
                             WHERE r.etag = card_version_part_refs.etag AND p.hash = card_version_part_refs.hash LIMIT 1),
                    length = (SELECT length(p.data) FROM card_version_parts p WHERE p.hash = card_version_part_refs.hash)
                WHERE etag IN (SELECT etag FROM resources);
                UPDATE card_version_part_refs SET length = NULL WHERE start IS NULL;
                \(Self.dropPartsCardsHold)
                """)
        }
        migrator.registerMigration("v16-directory") { db in
            // The organisation's directory (issue 32): each user's entry (`DirectoryEntry`,
            // JSON), what the directory book is built from. The book itself is an ordinary
            // collection of the directory's owner account.
            try db.execute(sql: """
                CREATE TABLE directory_entries (
                    user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                    entry BLOB NOT NULL
                );
                """)
        }
        migrator.registerMigration("v17-current-version-body") { db in
            // The current version's text is the card's own body (issue 34): the history
            // holds a version's text only once a write replaces, deletes or moves its card
            // (`SQLiteStore.keepReplacedBody`), so a new card writes its text once. The
            // triggers stop copying bodies, and each body every version naming it can read
            // from its card is dropped. Its part refs stay: they say where the card's photos
            // are, for when it is replaced.
            try db.execute(sql: """
                DROP TRIGGER changes_keep_version_insert;
                DROP TRIGGER changes_keep_version_update;
                CREATE TRIGGER changes_keep_version_insert AFTER INSERT ON changes BEGIN
                \(Self.keepVersion)
                END;
                CREATE TRIGGER changes_keep_version_update AFTER UPDATE ON changes BEGIN
                \(Self.keepVersion)
                END;
                DELETE FROM card_version_bodies WHERE etag IN (SELECT etag FROM resources) AND NOT EXISTS (
                    SELECT 1 FROM card_versions v WHERE v.etag = card_version_bodies.etag AND NOT EXISTS (
                        SELECT 1 FROM resources cur
                        WHERE cur.collection_id = v.collection_id AND cur.name = v.name AND cur.etag = v.etag));
                """)
        }
        migrator.registerMigration("v18-current-version-in-changes") { db in
            // A card's current version is its change row (issue 34): the row already holds
            // its seq, time and author, and now its ETag and content type too. card_versions
            // keeps only the versions a later change replaced: a trigger copies the change
            // row out when a newer change replaces it, another when `compactChanges` drops a
            // tombstone. A new card writes no version row and none of its three index
            // entries (an import wrote 14 pages a card, b58cfd7 before the history 8).
            // Readers see both tables as one (`SnapshotTable.allCardVersions`).
            try db.execute(sql: """
                ALTER TABLE changes ADD COLUMN etag TEXT;
                ALTER TABLE changes ADD COLUMN content_type TEXT;
                UPDATE changes SET (etag, content_type) = (
                    SELECT r.etag, r.content_type FROM resources r WHERE r.collection_id = changes.collection_id AND r.name = changes.name)
                WHERE NOT deleted;
                DROP TRIGGER changes_keep_version_insert;
                DROP TRIGGER changes_keep_version_update;
                \(Self.keepReplacedVersionTriggers)
                DELETE FROM card_versions WHERE (collection_id, seq) IN (SELECT collection_id, seq FROM changes);
                """)
        }
        migrator.registerMigration("v19-rows-in-write-order") { db in
            // Two tables every new card writes, kept in the order cards are written (issue
            // 34), so a commit's rows share the last page, where SQLite splits by moving a
            // row to a new page: a one-card commit writes 15.7 pages, where it wrote 18.6 and
            // b58cfd7 13.7 (Docs/performance.md).
            // - card_listings by resource id, the list order in an index of small entries.
            //   Clustered by sort key, each new card's row of some 330 bytes went to a random
            //   leaf of ten rows, which split every few cards: 2.8 pages a card, with its
            //   resource-id index 4.1, now 2.7. The web UI's list reads the index and then
            //   each row by id.
            // - card_index_pending by `id`, the resource's id above its entry's position
            //   (`SQLiteStore.pendingEntryID`), with the two as generated columns: 2.45 pages
            //   a card as a WITHOUT ROWID table, whose split at the last page rebalances it
            //   with its neighbours, 1.2 now. A resource's entries are a range of ids
            //   (`pendingEntries(of:)`).
            // The trigger that deletes a card's rows is dropped first (SQLite's rename
            // checks every trigger that names a table) and made again with the new test.
            try db.execute(sql: """
                DROP TRIGGER resources_delete_index;
                ALTER TABLE card_listings RENAME TO card_listings_v18;
                CREATE TABLE card_listings (
                    resource_id INTEGER PRIMARY KEY,
                    collection_id INTEGER NOT NULL,
                    is_group INTEGER NOT NULL,
                    sort_key TEXT NOT NULL,
                    name TEXT NOT NULL,
                    display_name TEXT NOT NULL,
                    organization TEXT,
                    email TEXT,
                    phone TEXT,
                    has_photo INTEGER NOT NULL,
                    search_text TEXT NOT NULL
                );
                INSERT INTO card_listings (resource_id, collection_id, is_group, sort_key, name, display_name, organization,
                                           email, phone, has_photo, search_text)
                    SELECT resource_id, collection_id, is_group, sort_key, name, display_name, organization,
                           email, phone, has_photo, search_text
                    FROM card_listings_v18 ORDER BY resource_id;
                DROP TABLE card_listings_v18;
                CREATE UNIQUE INDEX card_listings_order ON card_listings(collection_id, is_group, sort_key, name);
                ALTER TABLE card_index_pending RENAME TO card_index_pending_v18;
                CREATE TABLE card_index_pending (
                    id INTEGER PRIMARY KEY,
                    collection_id INTEGER NOT NULL,
                    property TEXT NOT NULL,
                    value_unicode TEXT NOT NULL,
                    value_ascii TEXT,
                    value TEXT,
                    resource_id INTEGER GENERATED ALWAYS AS (id >> \(Self.pendingPositionBits)) VIRTUAL,
                    position INTEGER GENERATED ALWAYS AS (id & \(Self.pendingPositionLimit - 1)) VIRTUAL
                );
                INSERT INTO card_index_pending (id, collection_id, property, value_unicode, value_ascii, value)
                    SELECT (resource_id << \(Self.pendingPositionBits)) + position, collection_id, property, value_unicode,
                           value_ascii, value
                    FROM card_index_pending_v18 ORDER BY resource_id, position;
                DROP TABLE card_index_pending_v18;
                \(Self.resourcesDeleteIndexTrigger)
                """)
        }
        return migrator
    }

    /// What deleting a resource deletes beside it, as v9 made it: its index entries, merged
    /// or pending, its list row, and a mark that its trigram rows go at the next merge.
    static let resourcesDeleteIndexTriggerV9 = """
        CREATE TRIGGER resources_delete_index AFTER DELETE ON resources BEGIN
            DELETE FROM card_index WHERE resource_id = OLD.id;
            DELETE FROM card_index_pending WHERE resource_id = OLD.id;
            INSERT OR IGNORE INTO card_trigram_stale (resource_id) VALUES (OLD.id);
            DELETE FROM card_listings WHERE resource_id = OLD.id;
        END;
        """

    /// The same since v19, which keys the pending entries by `id`: a range of it, not a test
    /// of the generated `resource_id`, which would read the whole table.
    static let resourcesDeleteIndexTrigger = """
        CREATE TRIGGER resources_delete_index AFTER DELETE ON resources BEGIN
            DELETE FROM card_index WHERE resource_id = OLD.id;
            DELETE FROM card_index_pending WHERE \(pendingEntries(of: "OLD.id"));
            INSERT OR IGNORE INTO card_trigram_stale (resource_id) VALUES (OLD.id);
            DELETE FROM card_listings WHERE resource_id = OLD.id;
        END;
        """

    /// The triggers since v18: the version a change row held moves into `card_versions` when
    /// a newer change replaces it, or when a tombstone is compacted (`compactChanges`) while
    /// its book lives; a deleted book's rows all go.
    static let keepReplacedVersionTriggers = """
        CREATE TRIGGER changes_keep_replaced_version AFTER UPDATE ON changes WHEN OLD.seq IS NOT NEW.seq BEGIN
            \(keepOldVersion)
        END;
        CREATE TRIGGER changes_keep_compacted_version AFTER DELETE ON changes
        WHEN EXISTS (SELECT 1 FROM collections WHERE id = OLD.collection_id) BEGIN
            \(keepOldVersion)
        END;
        """

    private static let keepOldVersion = """
        INSERT OR REPLACE INTO card_versions (collection_id, seq, name, at, etag, content_type, actor_user, actor_credential)
            VALUES (OLD.collection_id, OLD.seq, OLD.name, OLD.at, OLD.etag, OLD.content_type, OLD.actor_user, OLD.actor_credential);
        """

    /// The v14 triggers' body: the card as the change left it, its body once per ETag (the
    /// triggers kept a whole body only where no write path had put one). Kept for the
    /// migration tests, which rebuild a v16 database.
    static let keepVersionV14 = """
            INSERT OR IGNORE INTO card_version_bodies (etag, data)
                SELECT r.etag, b.data FROM resources r JOIN resource_bodies b ON b.resource_id = r.id
                WHERE NOT NEW.deleted AND r.collection_id = NEW.collection_id AND r.name = NEW.name
                    AND NOT EXISTS (SELECT 1 FROM card_version_bodies v WHERE v.etag = r.etag);
        \(keepVersion)
        """

    /// The triggers' body in v17: the version row only; its text is the card's body. Kept for
    /// the migration tests, which rebuild a v17 database.
    static let keepVersion = """
            INSERT OR REPLACE INTO card_versions (collection_id, seq, name, at, etag, content_type, actor_user, actor_credential)
                SELECT NEW.collection_id, NEW.seq, NEW.name, NEW.at, r.etag, r.content_type, NEW.actor_user, NEW.actor_credential
                FROM (SELECT 1) LEFT JOIN resources r
                    ON NOT NEW.deleted AND r.collection_id = NEW.collection_id AND r.name = NEW.name
                WHERE NEW.deleted OR r.id IS NOT NULL;
        """

    /// Drops each history part that every version naming it can read from its card's current
    /// body (`VersionBody`): the one rule of where a part may be, kept by the v15 migration.
    static let dropPartsCardsHold = """
        DELETE FROM card_version_parts WHERE NOT EXISTS (
            SELECT 1 FROM card_version_part_refs r JOIN card_versions v ON v.etag = r.etag
            WHERE r.hash = card_version_parts.hash AND NOT EXISTS (
                SELECT 1 FROM resources cur JOIN card_version_part_refs held ON held.etag = cur.etag
                WHERE cur.collection_id = v.collection_id AND cur.name = v.name AND held.hash = r.hash
                      AND held.start IS NOT NULL));
        """
}
