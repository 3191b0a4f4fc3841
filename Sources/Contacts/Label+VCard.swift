import VCard

/// The label mapping table (design.md, expected.json `conventions.label`), both ways.
extension Label {
    /// TYPE tokens that say nothing about the label (`TEL;TYPE=VOICE`, `EMAIL;TYPE=INTERNET`).
    static let labelNeutralTypeTokens: Set<String> = [
        "PREF", "VOICE", "INTERNET", "MSG", "TEXT", "VIDEO", "POSTAL", "PARCEL", "DOM", "INTL", "X400",
    ]

    /// TYPE tokens that can decide a label.
    static let labelBearingTypeTokens: Set<String> = ["IPHONE", "FAX", "HOME", "WORK", "CELL", "MAIN", "PAGER", "OTHER"]

    /// Reads `X-ABLabel` text: `_$!<Name>!$_` is an Apple built-in, other text is custom,
    /// empty text is no label (nil). An Apple name outside the vocabulary stays custom, verbatim.
    public init?(abLabel text: String) {
        guard !text.isEmpty else { return nil }
        guard text.hasPrefix("_$!<"), text.hasSuffix(">!$_"), text.count > 8 else {
            self = .custom(text)
            return
        }
        var name = String(text.dropFirst(4).dropLast(4))
        if name.hasSuffix("FAX") { name = String(name.dropLast(3)) + "Fax" }
        name = name.prefix(1).lowercased() + name.dropFirst()
        self = Label(builtInNamed: name) ?? .custom(text)
    }

    /// Reads a label from TYPE tokens (any case), first rule that matches wins:
    /// IPHONE, FAX+HOME, FAX+WORK, FAX, CELL, MAIN, PAGER, HOME, WORK, OTHER. Nil when none does.
    public init?(typeTokens tokens: [String]) {
        let upper = Set(tokens.map { $0.uppercased() })
        if upper.contains("IPHONE") { self = .iPhone }
        else if upper.contains("FAX") {
            self = upper.contains("HOME") ? .homeFax : upper.contains("WORK") ? .workFax : .otherFax
        }
        else if upper.contains("CELL") { self = .mobile }
        else if upper.contains("MAIN") { self = .main }
        else if upper.contains("PAGER") { self = .pager }
        else if upper.contains("HOME") { self = .home }
        else if upper.contains("WORK") { self = .work }
        else if upper.contains("OTHER") { self = .other }
        else { return nil }
    }

    /// The Apple `X-ABLabel` spelling of this label: `_$!<HomeFAX>!$_` for built-ins, the text for custom ones.
    public var abLabelText: String {
        guard isBuiltIn else { return name }
        var appleName = name == "iPhone" ? name : name.prefix(1).uppercased() + name.dropFirst()
        if appleName.hasSuffix("Fax") { appleName = String(appleName.dropLast(3)) + "FAX" }
        return "_$!<\(appleName)>!$_"
    }

    /// How this label is written on a TEL/EMAIL/ADR/URL/X-ABDATE/IMPP… property in `version`:
    /// TYPE tokens (upper-case in 3.0, lower-case in 4.0) and/or an `X-ABLabel` text.
    public func vCardEncoding(version: VCardVersion) -> LabelEncoding {
        let v4 = version == .v40
        let tokens: [String]
        var abLabel: String?
        switch self {
        case .home: tokens = ["HOME"]
        case .work: tokens = ["WORK"]
        case .mobile: tokens = ["CELL"]
        case .iPhone:
            tokens = v4 ? ["CELL"] : ["IPHONE", "CELL"]
            if v4 { abLabel = abLabelText }
        case .main:
            tokens = v4 ? [] : ["MAIN"]
            if v4 { abLabel = abLabelText }
        case .homeFax: tokens = ["HOME", "FAX"]
        case .workFax: tokens = ["WORK", "FAX"]
        case .otherFax: tokens = ["FAX"]
        case .pager: tokens = ["PAGER"]
        default:
            tokens = []
            abLabel = abLabelText
        }
        return LabelEncoding(typeTokens: v4 ? tokens.map { $0.lowercased() } : tokens, abLabel: abLabel)
    }

    /// Every TYPE token (upper-case) some version writes for this label: what reading may consume.
    var impliedTypeTokens: Set<String> {
        Set(vCardEncoding(version: .v30).typeTokens + vCardEncoding(version: .v40).typeTokens.map { $0.uppercased() })
    }

    /// RFC 6350 §6.6.6 RELATED types: written as `RELATED;TYPE=…` in vCard 4.
    static let relatedTypeTokens: Set<String> = [
        "contact", "acquaintance", "friend", "met", "co-worker", "colleague", "co-resident", "neighbor",
        "child", "parent", "sibling", "spouse", "kin", "muse", "crush", "date", "sweetheart", "me", "agent",
        "emergency",
    ]

    /// Reads the label of a vCard 4 RELATED from its TYPE value (`spouse`).
    init(relatedType token: String) {
        self = Label(builtInNamed: token.lowercased()) ?? .custom(token)
    }

    /// The RELATED TYPE value for this label, nil when it is not an RFC 6350 type (write X-ABLabel then).
    var relatedTypeToken: String? {
        Label.relatedTypeTokens.contains(name.lowercased()) ? name.lowercased() : nil
    }
}

/// How a label appears on a vCard property: TYPE tokens, plus an `X-ABLabel` in the same group when needed.
public struct LabelEncoding: Sendable, Hashable {
    public var typeTokens: [String]
    public var abLabel: String?

    public init(typeTokens: [String], abLabel: String?) {
        self.typeTokens = typeTokens
        self.abLabel = abLabel
    }
}
