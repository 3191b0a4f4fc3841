/// The corpus oracle's view of a contact: exactly the shape of a `cards` entry of
/// `/work/shared/vcards/expected.json`, used by the corpus test and `rolo vcard inspect`.
extension Contact {
    /// `photoDigest` turns the decoded photo bytes into the hex SHA-256 the oracle lists;
    /// Contacts has no hashing, so callers that have one (the CLI) pass it, others leave it out.
    public func oracleJSON(photoDigest: (([UInt8]) -> String)? = nil) -> JSONValue {
        var object: [String: JSONValue] = [
            "uid": identifier.map(JSONValue.string) ?? .null,
            "kind": .string(kind.rawValue),
            "formatted_name": formattedName.map(JSONValue.string) ?? .null,
            "birthday": birthday.map { .string($0.description) } ?? .null,
            "phones": .array(phoneNumbers.map { $0.oracleJSON(.string($0.value)) }),
            "emails": .array(emailAddresses.map { $0.oracleJSON(.string($0.value)) }),
            "urls": .array(urlAddresses.map { $0.oracleJSON(.string($0.value)) }),
            "addresses": .array(postalAddresses.map { entry in
                var json = entry.oracleJSON(entry.value.oracleJSON)
                if let code = entry.value.isoCountryCode { json = json.adding("country_code", .string(code)) }
                return json
            }),
            "dates": .array(dates.map { $0.oracleJSON(.string($0.value.description)) }),
            "categories": .array(categories.map(JSONValue.string)),
            "related_names": .array(relatedNames.map { $0.oracleJSON(.string($0.value)) }),
            "social_profiles": .array(socialProfiles.map { entry in
                .object([
                    "service": entry.value.service.map(JSONValue.string) ?? .null,
                    "user": entry.value.username.map(JSONValue.string) ?? .null,
                    "value": .string(entry.value.urlString),
                ])
            }),
            "instant_messages": .array(instantMessageAddresses.map { entry in
                entry.oracleJSON(.string(entry.value.uri)).adding("service", .string(entry.value.service))
            }),
            "note": note.map(JSONValue.string) ?? .null,
            "name": .object([
                "family": .string(familyName), "given": .string(givenName), "additional": .string(middleName),
                "prefix": .string(namePrefix), "suffix": .string(nameSuffix),
            ]),
            "organization": .object(["name": .string(organizationName), "department": .string(departmentName)]),
            "photo": image.map { image in
                var photo: [String: JSONValue] = [
                    "media_type": .string(image.mediaType), "bytes": .number(Double(image.data.count)),
                ]
                if let photoDigest { photo["sha256"] = .string(photoDigest(image.data)) }
                return .object(photo)
            } ?? .null,
        ]
        if kind == .group { object["members"] = .array(memberIdentifiers.map(JSONValue.string)) }
        return .object(object)
    }
}

extension LabeledValue {
    /// `{label, value, preferred}` plus `pid` when the vCard had one.
    func oracleJSON(_ value: JSONValue) -> JSONValue {
        var object: [String: JSONValue] = [
            "label": label.map { .string($0.name) } ?? .null,
            "value": value,
            "preferred": .bool(isPreferred),
        ]
        if let pid { object["pid"] = .string(pid) }
        return .object(object)
    }
}

extension PostalAddress {
    var oracleJSON: JSONValue {
        .object([
            "pobox": .string(poBox), "extended": .string(extended), "street": .string(street),
            "locality": .string(locality), "region": .string(region), "postal_code": .string(postalCode),
            "country": .string(country),
        ])
    }
}

extension JSONValue {
    /// An object with one more member; other values unchanged.
    func adding(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        members[key] = value
        return .object(members)
    }
}
