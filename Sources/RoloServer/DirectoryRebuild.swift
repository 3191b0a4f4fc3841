import CardIndexing
import Foundation
import RoloStore

/// One rebuild of the organisation's directory (issue 32) as serve's upkeep, the web UI's
/// "My card" and `rolo directory sync` all run it: with the `ldap` source on, the
/// directory's people are read first (`LDAPDirectoryPeople`) and fill the cards of its users;
/// a directory that cannot be read stops the rebuild before anything is written, so an
/// outage never takes its people out of the book.
public struct DirectoryRebuild: Sendable {
    public let store: any RoloStore & DirectoryStore
    public let mode: DirectoryMode
    /// The `ldap` source's settings when `auth_sources` lists it; nil: entries from accounts alone.
    public let ldap: LDAPSourceSettings?
    /// `directory_groups`: the group DNs that get a directory of their own with `groups`.
    public let groups: [String]
    /// `directory_exclude_groups`: the group DNs whose members have no card.
    public let excludedGroups: [String]
    /// `directory_fields`: the fields the cards carry (the name always).
    public let fields: Set<DirectoryField>

    public init(store: any RoloStore & DirectoryStore, mode: DirectoryMode, ldap: LDAPSourceSettings?, groups: [String] = [],
                excludedGroups: [String] = [], fields: Set<DirectoryField> = Set(DirectoryField.allCases)) {
        self.store = store
        self.mode = mode
        self.ldap = ldap
        self.groups = groups
        self.excludedGroups = excludedGroups
        self.fields = fields
    }

    /// The rebuild `configuration` asks for (serve's upkeep and the web UI's "My card" run the same one).
    public init(store: any RoloStore & DirectoryStore, configuration: ServerConfiguration) {
        self.init(store: store, mode: configuration.directory,
                  ldap: configuration.authSources.contains(.ldap) ? configuration.ldap : nil,
                  groups: configuration.directoryGroups, excludedGroups: configuration.directoryExcludeGroups,
                  fields: configuration.directoryFields)
    }

    /// Rebuilds now; `skipped` hears each LDAP value left out (a phone with letters, a photo
    /// too large, text that is not UTF-8), naming the user and the attribute. With `only`,
    /// that user's cards and mounts alone, LDAP asked for that one person (a save on "My card").
    public func run(only: String? = nil, skipped: (String) -> Void = { _ in }) async throws -> DirectorySyncReport {
        var people: DirectoryPeople?
        if let ldap, mode != .off {
            let read = try await LDAPDirectoryPeople.read(ldap, only: only)
            read.skipped.forEach(skipped)
            people = read.people
        }
        return try await DirectorySync.run(store: store, mode: mode, people: people, groups: groups, excludedGroups: excludedGroups,
                                           fields: fields, only: only)
    }
}
