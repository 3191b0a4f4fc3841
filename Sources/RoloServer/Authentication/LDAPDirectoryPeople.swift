import Contacts
import Foundation
import LDAPClient
import RoloStore

/// The organisation's people as the `ldap` source lists them, for a directory rebuild
/// (issue 32): every entry the login filter finds (`{user}` as `*`), in the required group
/// if one is set, with the directory's attributes as card fields. The mapping is fixed
/// (Docs/directory.md): display name from `displayName`, else `ldap_display_name_attribute`;
/// e-mail from `ldap_email_attribute`; phones from `telephoneNumber` and `mobile`; `title`;
/// department from `departmentNumber`, else `ou`; organisation from `o`; photo from `jpegPhoto`.
public struct LDAPDirectoryPeople: Sendable {
    /// The people, by user name.
    public var people: DirectoryPeople
    /// Each value left out (`alice: telephoneNumber "call me" is not a phone number`), for the log.
    public var skipped: [String]

    /// Reads them all with the service account, in pages (a size limit never shortens the
    /// list: a directory that cannot answer whole throws, and the rebuild changes nothing).
    /// With `only`, that one person (the login filter with their name), for a rebuild of
    /// their card alone. Throws `LDAPError`.
    public static func read(_ settings: LDAPSourceSettings, only: String? = nil) async throws -> LDAPDirectoryPeople {
        let connection = try await LDAPConnection.open(settings.connection)
        defer { connection.close() }
        if let bindDN = settings.bindDN, let bindPassword = settings.bindPassword {
            try await connection.bind(dn: bindDN, password: bindPassword)
        }
        let filter = settings.userFilter.replacingOccurrences(of: "{user}", with: only.map(LDAPFilter.escape) ?? "*")
        var attributes = [settings.userAttribute, settings.displayNameAttribute, settings.emailAttribute] + Self.mapped
        if let groups = settings.userGroupsAttribute { attributes.append(groups) }
        let entries = try await connection.searchAll(base: settings.baseDN, filter: filter, attributes: attributes)

        // The groups each member is in, from one listing of the groups (not one search per person).
        var groupsOf: [String: [String]] = [:]
        if let groupBase = settings.groupBaseDN {
            let memberAttribute = settings.groupMemberAttribute
            let groups = try await connection.searchAll(base: groupBase, filter: "(\(memberAttribute)=*)",
                                                        attributes: [memberAttribute])
            for group in groups {
                for member in group.values(memberAttribute) { groupsOf[Self.folded(member), default: []].append(group.dn) }
            }
        }
        let byName = settings.groupMemberAttribute.caseInsensitiveCompare("memberUid") == .orderedSame

        var people: [String: DirectoryEntry] = [:]
        var groupsByName: [String: [String]] = [:]
        var skipped: [String] = []
        for entry in entries {
            guard let name = entry.values(settings.userAttribute).first, (try? Naming.validate(name, what: "user")) != nil else {
                skipped.append("\(entry.dn): no usable \(settings.userAttribute), left out")
                continue
            }
            var groups = settings.userGroupsAttribute.map { entry.values($0) } ?? []
            groups += groupsOf[Self.folded(byName ? name : entry.dn)] ?? []
            if let required = settings.requiredGroup, !groups.contains(where: { LDAPSource.sameDN($0, required) }) { continue }
            if people[name] != nil {
                skipped.append("\(name): listed twice (\(entry.dn)), the first kept")
                continue
            }
            var reader = FieldReader(entry: entry, user: name)
            let displayName = reader.text("displayName") ?? reader.text(settings.displayNameAttribute)
            let email = reader.text(settings.emailAttribute)
            let phones = reader.phones("telephoneNumber") + reader.phones("mobile")
            let title = reader.text("title")
            let department = reader.text("departmentNumber") ?? reader.text("ou")
            let organization = reader.text("o")
            let photo = reader.photo("jpegPhoto")
            groupsByName[name] = groups
            people[name] = DirectoryEntry(displayName: displayName, email: email, phones: phones, title: title,
                                          department: department, organization: organization, photo: photo)
            skipped += reader.skipped
        }
        return LDAPDirectoryPeople(people: DirectoryPeople(source: AuthenticationSourceKind.ldap.rawValue, people: people,
                                                                   groups: groupsByName),
                                   skipped: skipped)
    }

    /// The attributes the mapping reads beside the configured ones.
    static let mapped = ["displayName", "telephoneNumber", "mobile", "title", "departmentNumber", "ou", "o", "jpegPhoto"]

    /// A DN (or a name) as group members are compared: case aside, spaces after commas aside.
    static func folded(_ dn: String) -> String {
        dn.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ",").lowercased()
    }

    /// Reads one person's values, noting each one left out.
    struct FieldReader {
        let entry: LDAPEntry
        let user: String
        var skipped: [String] = []

        /// The first value as text; one that is not UTF-8 is left out (and the next tried).
        mutating func text(_ attribute: String) -> String? {
            for value in entry.data(attribute) {
                guard let text = String(data: value, encoding: .utf8), !text.contains("\u{0}") else {
                    skipped.append("\(user): \(attribute) is not UTF-8, left out")
                    continue
                }
                let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                if !trimmed.isEmpty { return trimmed }
            }
            return nil
        }

        /// Every value that is a phone number (`DirectoryCard.isPhoneNumber`); others left out.
        mutating func phones(_ attribute: String) -> [String] {
            entry.data(attribute).compactMap { value in
                guard let text = String(data: value, encoding: .utf8) else {
                    skipped.append("\(user): \(attribute) is not UTF-8, left out")
                    return nil
                }
                guard DirectoryCard.isPhoneNumber(text) else {
                    skipped.append("\(user): \(attribute) \"\(text.prefix(40))\" is not a phone number, left out")
                    return nil
                }
                return text.trimmingCharacters(in: .whitespaces)
            }
        }

        /// The first value if it is a JPEG or PNG within `DirectoryCard.maximumPhotoBytes`.
        mutating func photo(_ attribute: String) -> Data? {
            guard let value = entry.data(attribute).first else { return nil }
            guard value.count <= DirectoryCard.maximumPhotoBytes else {
                skipped.append("\(user): \(attribute) of \(value.count) bytes is over \(DirectoryCard.maximumPhotoBytes), left out")
                return nil
            }
            guard DirectoryCard.photoType(Array(value.prefix(4))) != nil else {
                skipped.append("\(user): \(attribute) is not a JPEG or PNG image, left out")
                return nil
            }
            return value
        }
    }
}
