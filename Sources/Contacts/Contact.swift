import VCard

/// What a card stands for.
public enum ContactKind: String, Sendable, Hashable, CaseIterable {
    case person, organization, group
}

/// A contact as Apple's Contacts framework models it: single values plus arrays of
/// labeled values. Immutable to its users (build one from a vCard with
/// `Contact(vCard:)`, or with the initialiser); what the vCard said that the model
/// does not map is kept inside, so writing it back loses nothing.
public struct Contact: Sendable, Hashable {
    /// The vCard UID as written (`urn:uuid:` kept); nil when the card has none.
    public internal(set) var identifier: String?
    public internal(set) var kind: ContactKind
    /// FN exactly as written; nil when the card has no FN.
    public internal(set) var formattedName: String?

    public internal(set) var namePrefix: String
    public internal(set) var givenName: String
    public internal(set) var middleName: String
    public internal(set) var familyName: String
    public internal(set) var nameSuffix: String
    public internal(set) var nickname: String
    public internal(set) var phoneticGivenName: String
    public internal(set) var phoneticMiddleName: String
    public internal(set) var phoneticFamilyName: String

    public internal(set) var organizationName: String
    public internal(set) var departmentName: String
    public internal(set) var jobTitle: String

    public internal(set) var birthday: ContactDate?
    public internal(set) var note: String?
    public internal(set) var image: ContactImage?
    public internal(set) var categories: [String]

    public internal(set) var phoneNumbers: [LabeledValue<String>]
    public internal(set) var emailAddresses: [LabeledValue<String>]
    public internal(set) var postalAddresses: [LabeledValue<PostalAddress>]
    public internal(set) var urlAddresses: [LabeledValue<String>]
    public internal(set) var dates: [LabeledValue<ContactDate>]
    public internal(set) var relatedNames: [LabeledValue<String>]
    public internal(set) var socialProfiles: [LabeledValue<SocialProfile>]
    public internal(set) var instantMessageAddresses: [LabeledValue<InstantMessageAddress>]

    /// Group members' UIDs (leading `urn:uuid:` removed), for `kind == .group`.
    public internal(set) var memberIdentifiers: [String]

    /// Properties the model does not map, in their original order, written back unchanged.
    public internal(set) var unmappedProperties: [VCardProperty]
    /// Parameters of mapped single-valued properties (N;LANGUAGE=…) keyed by property name.
    var singleValueParameters: [String: [VCardParameter]]
    /// ORG components after the department.
    var extraOrganizationUnits: [String]

    public init(
        identifier: String?, kind: ContactKind = .person, formattedName: String? = nil,
        namePrefix: String = "", givenName: String = "", middleName: String = "", familyName: String = "",
        nameSuffix: String = "", nickname: String = "",
        phoneticGivenName: String = "", phoneticMiddleName: String = "", phoneticFamilyName: String = "",
        organizationName: String = "", departmentName: String = "", jobTitle: String = "",
        birthday: ContactDate? = nil, note: String? = nil, image: ContactImage? = nil, categories: [String] = [],
        phoneNumbers: [LabeledValue<String>] = [], emailAddresses: [LabeledValue<String>] = [],
        postalAddresses: [LabeledValue<PostalAddress>] = [], urlAddresses: [LabeledValue<String>] = [],
        dates: [LabeledValue<ContactDate>] = [], relatedNames: [LabeledValue<String>] = [],
        socialProfiles: [LabeledValue<SocialProfile>] = [],
        instantMessageAddresses: [LabeledValue<InstantMessageAddress>] = [],
        memberIdentifiers: [String] = [], unmappedProperties: [VCardProperty] = []
    ) {
        self.identifier = identifier
        self.kind = kind
        self.formattedName = formattedName
        self.namePrefix = namePrefix
        self.givenName = givenName
        self.middleName = middleName
        self.familyName = familyName
        self.nameSuffix = nameSuffix
        self.nickname = nickname
        self.phoneticGivenName = phoneticGivenName
        self.phoneticMiddleName = phoneticMiddleName
        self.phoneticFamilyName = phoneticFamilyName
        self.organizationName = organizationName
        self.departmentName = departmentName
        self.jobTitle = jobTitle
        self.birthday = birthday
        self.note = note
        self.image = image
        self.categories = categories
        self.phoneNumbers = phoneNumbers
        self.emailAddresses = emailAddresses
        self.postalAddresses = postalAddresses
        self.urlAddresses = urlAddresses
        self.dates = dates
        self.relatedNames = relatedNames
        self.socialProfiles = socialProfiles
        self.instantMessageAddresses = instantMessageAddresses
        self.memberIdentifiers = memberIdentifiers
        self.unmappedProperties = unmappedProperties
        self.singleValueParameters = [:]
        self.extraOrganizationUnits = []
    }

    /// The name to show when the card has no FN: the personal name, else the organisation.
    public var displayName: String {
        let personal = [namePrefix, givenName, middleName, familyName, nameSuffix].filter { !$0.isEmpty }
        if kind != .organization, !personal.isEmpty { return personal.joined(separator: " ") }
        return organizationName.isEmpty ? personal.joined(separator: " ") : organizationName
    }

    /// An empty contact, the starting point of the vCard reader.
    static var empty: Contact { Contact(identifier: nil) }
}

/// A contact's picture: the decoded bytes and their media type.
public struct ContactImage: Sendable, Hashable {
    /// `image/jpeg`, `image/png`…
    public var mediaType: String
    public var data: [UInt8]

    public init(mediaType: String, data: [UInt8]) {
        self.mediaType = mediaType
        self.data = data
    }
}
