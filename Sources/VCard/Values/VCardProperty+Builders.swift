/// Builders that escape a value for its value type, so callers never hand-escape.
extension VCardProperty {
    /// A TEXT property (FN, NOTE, TITLE…): `\`, `,`, `;` and newlines escaped.
    public init(group: String? = nil, name: String, parameters: [VCardParameter] = [], text: String) {
        self.init(group: group, name: name, parameters: parameters, rawValue: VCardEscaping.escape(text))
    }

    /// A structured property (N, ADR, ORG…): each component escaped, joined with `;`.
    public init(group: String? = nil, name: String, parameters: [VCardParameter] = [], components: [String]) {
        self.init(
            group: group, name: name, parameters: parameters,
            rawValue: components.map(VCardEscaping.escape).joined(separator: ";"))
    }

    /// A list property (CATEGORIES, NICKNAME): each value escaped, joined with `,`.
    public init(group: String? = nil, name: String, parameters: [VCardParameter] = [], list: [String]) {
        self.init(
            group: group, name: name, parameters: parameters,
            rawValue: list.map(VCardEscaping.escape).joined(separator: ","))
    }

    /// A URI or other unescaped value (URL, TEL;VALUE=uri, PHOTO data: URI, dates), written as given.
    public init(group: String? = nil, name: String, parameters: [VCardParameter] = [], uri: String) {
        self.init(group: group, name: name, parameters: parameters, rawValue: uri)
    }
}
