import Contacts
import Foundation
import RoloStore
import VCard

/// What a directory rebuild changed: cards added, changed and removed (by user), and the
/// homes the directory was mounted in or taken out of. Empty when nothing changed, and
/// then no ETag, ctag or sync token moved.
public struct DirectorySyncReport: Sendable, Hashable {
    public var added: [String] = []
    public var changed: [String] = []
    public var removed: [String] = []
    public var mounted: [String] = []
    public var unmounted: [String] = []

    public init() {}

    public var isEmpty: Bool { added.isEmpty && changed.isEmpty && removed.isEmpty && mounted.isEmpty && unmounted.isEmpty }

    /// One line per change (`added alice`, `mounted for bob`), for `rolo directory sync`.
    public var lines: [String] {
        added.map { "added \($0)" } + changed.map { "changed \($0)" } + removed.map { "removed \($0)" }
            + mounted.map { "mounted for \($0)" } + unmounted.map { "unmounted for \($0)" }
    }
}

/// Rebuilds the organisation's directory (issue 32) from the users' accounts and entries:
/// writes only the cards whose bytes changed and deletes only the cards of people no longer
/// listed (`DirectoryRules`), each through `CardStore` like any write, so each is one change
/// in the book's log; then mounts the book, read-only, in every member's home and takes it
/// out of the others'. Called by `rolo directory sync` and by the server's hourly upkeep.
public enum DirectorySync {
    /// With `people` (the users an LDAP directory lists, read by the caller), that source's
    /// users get their cards from it (`DirectoryRules.merged` with their own entry), a person
    /// without an account yet gets one too (they are in the organisation, whether or not they
    /// signed in), and an account of that source the directory no longer lists loses its card
    /// and its mount: they left the organisation. An account of another source keeps its name's
    /// card.
    ///
    /// With `mode` `groups`, each DN of `groups` has a book of its own
    /// (`DirectoryRules.groupBook`) holding the cards of the group's listed people and mounted
    /// in its members' homes (a person's groups come from `people`); the book of `all` is
    /// emptied and unmounted. Changes to a group's book are reported as `user (book)`.
    ///
    /// `fields` (`directory_fields`) are the fields the cards carry; the name always is.
    /// `excludedGroups` (`directory_exclude_groups`): a source's user in any of these groups
    /// (service accounts, a board, a group of external staff) has no card in any directory
    /// book; they still see the directory, as a member.
    ///
    /// `only`: bring one person's cards and mounts up to date and touch nobody else's (a save
    /// on "My card" is one user's change: rendering and comparing every card of a large
    /// directory would keep them waiting seconds). `people` then need list only that person.
    public static func run(store: any RoloStore & DirectoryStore, mode: DirectoryMode,
                           people: DirectoryPeople? = nil, groups: [String] = [], excludedGroups: [String] = [],
                           fields: Set<DirectoryField> = Set(DirectoryField.allCases),
                           only: String? = nil) async throws -> DirectorySyncReport {
        var report = DirectorySyncReport()
        var entries = try await store.directoryEntries()
        let all = try await store.directoryAccounts()
        let homes = Set(all.map(\.name))
        var accounts = all.filter { !DirectoryRules.isOwner($0) && (only == nil || $0.name == only) }
        if let people {
            // Gone from the directory: neither listed nor a member.
            accounts.removeAll { $0.source == people.source && people.people[$0.name] == nil }
            let sources = Dictionary(all.map { ($0.name, $0.source) }, uniquingKeysWith: { first, _ in first })
            for (name, fields) in people.people where only == nil || name == only {
                let source = sources[name]
                guard source == nil || source == people.source else { continue }  // another source's user: theirs
                entries[name] = DirectoryRules.merged(entries[name], over: fields)
                if source == nil {
                    // Not signed in yet: listed from the directory alone, with no home to mount in.
                    let person = UserAccount(name: name, displayName: nil, email: nil, appPasswordsOnly: false, admin: false,
                                             homeSeq: 0, source: people.source)
                    if DirectoryRules.isListed(person, entry: entries[name]) { accounts.append(person) }
                }
            }
        }
        func excluded(_ account: UserAccount) -> Bool {
            // Only a source's own users carry its groups.
            guard let people, account.source == people.source else { return false }
            return (people.groups[account.name] ?? []).contains { group in excludedGroups.contains { DirectoryRules.sameDN($0, group) } }
        }
        let listed = accounts.filter { DirectoryRules.isListed($0, entry: entries[$0.name]) && !excluded($0) }
        let members = accounts.filter { homes.contains($0.name) && DirectoryRules.isMember($0, entry: entries[$0.name], mode: mode) }

        if mode == .off {
            // Turned off: a book an earlier run made is taken out of every home.
            guard let account = try await store.account(name: DirectoryRules.owner), DirectoryRules.isOwner(account),
                  let book = try await directoryBook(store, path: DirectoryRules.book, displayName: DirectoryRules.displayName,
                                                     create: false) else { return report }
            try await sync(store, book: book, listed: listed, entries: entries, members: [], fields: fields, suffix: "",
                           only: only, into: &report)
            return report
        }
        try await directoryOwner(store)
        if mode == .all || mode == .gateway {
            // (With `gateway` nobody is a member: the book is searched, never mounted.)
            let book = try await directoryBook(store, path: DirectoryRules.book, displayName: DirectoryRules.displayName, create: true)!
            try await sync(store, book: book, listed: listed, entries: entries, members: Set(members.map(\.name)),
                           fields: fields, suffix: "", only: only, into: &report)
            return report
        }
        // groups: the book of `all`, if an earlier run made it, no longer holds anyone.
        if let book = try await directoryBook(store, path: DirectoryRules.book, displayName: DirectoryRules.displayName, create: false) {
            try await sync(store, book: book, listed: [], entries: entries, members: [], fields: fields, suffix: "",
                           only: only, into: &report)
        }
        for group in groups {
            guard let path = DirectoryRules.groupBook(group) else { continue }
            let book = try await directoryBook(store, path: path, displayName: DirectoryRules.groupDisplayName(group), create: true)!
            func inGroup(_ account: UserAccount) -> Bool {
                // Only a source's own users carry its groups.
                guard let people, account.source == people.source else { return false }
                return (people.groups[account.name] ?? []).contains { DirectoryRules.sameDN($0, group) }
            }
            try await sync(store, book: book, listed: listed.filter(inGroup), entries: entries,
                           members: Set(members.filter(inGroup).map(\.name)), fields: fields, suffix: " (\(path))",
                           only: only, into: &report)
        }
        return report
    }

    /// Brings one directory book to `listed`'s cards, mounted for `members` alone; with
    /// `only`, that person's card and mount alone (the others are not in `listed`).
    private static func sync(_ store: any RoloStore & DirectoryStore, book: CollectionInfo, listed: [UserAccount],
                             entries: [String: DirectoryEntry], members: Set<String>, fields: Set<DirectoryField>, suffix: String,
                             only: String?, into report: inout DirectorySyncReport) async throws {
        var wanted: [String: (user: String, data: Data)] = [:]
        for account in listed {
            let data = Data(card(for: account, entry: entries[account.name] ?? DirectoryEntry(), fields: fields).vCardText.utf8)
            wanted[DirectoryRules.resourceName(user: account.name)] = (account.name, data)
        }
        let scope = only.map(DirectoryRules.resourceName(user:))
        let existing = Dictionary(try await store.listResources(collectionID: book.id)
                                    .filter { scope == nil || $0.name == scope }.map { ($0.name, $0.etag) },
                                  uniquingKeysWith: { first, _ in first })
        for (name, card) in wanted.sorted(by: { $0.key < $1.key }) {
            let etag = ETag.of(card.data)
            if existing[name] == etag { continue }
            guard let parsed = try? VCardParser.parse(Array(card.data)).first else { continue }
            _ = try await store.putResource(collectionID: book.id, name: name, data: card.data, contentType: "text/vcard",
                                            card: CardMetadata(card: parsed), precondition: .none)
            if existing[name] == nil { report.added.append(card.user + suffix) } else { report.changed.append(card.user + suffix) }
        }
        for name in existing.keys.sorted() where wanted[name] == nil {
            try await store.deleteResource(collectionID: book.id, name: name, precondition: .none)
            report.removed.append((name.hasSuffix(".vcf") ? String(name.dropLast(4)) : name) + suffix)
        }

        let bookName = book.path[0]
        let mountName = Share.mountName(book: bookName, owner: DirectoryRules.owner)
        let shares = try await store.shares(bookID: book.id).filter { only == nil || $0.sharee == only }
        let sharees = Set(shares.map(\.sharee))
        for share in shares where !members.contains(share.sharee) || share.state != .accepted || share.access != .readOnly {
            try await store.removeShare(owner: DirectoryRules.owner, book: bookName, sharee: share.sharee)
            if members.contains(share.sharee) { continue }
            report.unmounted.append(share.sharee + suffix)
        }
        let correct = Set(shares.filter { $0.state == .accepted && $0.access == .readOnly }.map(\.sharee))
        for member in members.sorted() where !correct.contains(member) {
            try await store.shareBook(owner: DirectoryRules.owner, book: bookName, with: member, access: .readOnly, accepted: true)
            try await store.renameMount(sharee: member, name: mountName, displayName: book.displayName ?? DirectoryRules.displayName)
            if !sharees.contains(member) { report.mounted.append(member + suffix) }
        }
    }

    /// The person's card: the entry's fields, else the account's display name and e-mail. An
    /// e-mail the entry sets empty is hidden: the account's is not used either. A field the
    /// user hid, or that `fields` does not carry, is left out whoever holds it.
    public static func card(for account: UserAccount, entry: DirectoryEntry,
                            fields: Set<DirectoryField> = Set(DirectoryField.allCases)) -> DirectoryCard {
        func carried(_ field: DirectoryField) -> Bool { fields.contains(field) && !entry.hiddenFields.contains(field) }
        return DirectoryCard(
            uid: DirectoryRules.uid(user: account.name),
            displayName: nonEmpty(entry.displayName) ?? nonEmpty(account.displayName) ?? account.name,
            email: carried(.email) ? entry.email.map { nonEmpty($0) } ?? nonEmpty(account.email) : nil,
            phones: carried(.phone) ? entry.phones : [],
            title: carried(.title) ? nonEmpty(entry.title) : nil, department: carried(.department) ? nonEmpty(entry.department) : nil,
            organization: carried(.organisation) ? nonEmpty(entry.organization) : nil,
            photo: carried(.photo) ? entry.photo.map { Array($0) } : nil)
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
        return text
    }

    /// Makes the directory's owner account when absent. Throws `StoreError.invalid` when a
    /// real user holds the owner's name.
    static func directoryOwner(_ store: any RoloStore) async throws {
        if let account = try await store.account(name: DirectoryRules.owner) {
            guard DirectoryRules.isOwner(account) else {
                throw StoreError.invalid("a user named \(DirectoryRules.owner) exists; the directory's book needs that account name")
            }
            return
        }
        // Nobody signs in as the owner: a random password, and the account disabled.
        let password = (0..<4).map { _ in UUID().uuidString }.joined()
        try await store.createUser(name: DirectoryRules.owner, password: password)
        try await store.updateAccount(name: DirectoryRules.owner, UserAccountUpdate(
            displayName: .some(DirectoryRules.displayName), disabled: true, source: DirectoryRules.ownerSource))
    }

    /// A directory book of the owner (made when `create` and absent).
    static func directoryBook(_ store: any RoloStore, path: String, displayName: String,
                              create: Bool) async throws -> CollectionInfo? {
        if let book = try await store.collection(owner: DirectoryRules.owner, path: [path]) { return book }
        guard create else { return nil }
        return try await store.createCollection(owner: DirectoryRules.owner, path: [path], kind: .addressBook,
                                                displayName: displayName, description: nil)
    }
}
