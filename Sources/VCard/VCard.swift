/// The vCard versions Rolo reads. 2.1 is import-only: it is parsed but never written.
public enum VCardVersion: String, Sendable, Hashable, CaseIterable {
    case v21 = "2.1"
    case v30 = "3.0"
    case v40 = "4.0"
}

/// One parameter of a content line (`TYPE=HOME,pref`), name upper-cased, values
/// unquoted and RFC 6868-decoded. A vCard 2.1 bare token (`TEL;CELL`) is read as `TYPE=CELL`.
public struct VCardParameter: Sendable, Hashable {
    public var name: String
    public var values: [String]

    public init(name: String, values: [String]) {
        self.name = name.uppercased()
        self.values = values
    }

    /// For the parser and converter: `name` is already upper-case.
    init(upperName: String, values: [String]) {
        self.name = upperName
        self.values = values
    }
}

/// One content line after unfolding and transfer decoding (2.1 QUOTED-PRINTABLE/CHARSET).
///
/// `rawValue` keeps the value *as escaped text* (vCard escaping still applied) so that a
/// property Rolo does not understand is written back byte-for-byte equivalent; typed
/// accessors (`text`, `components`, `listValues`) unescape on demand.
public struct VCardProperty: Sendable, Hashable {
    /// Property group (`item1` in `item1.TEL`), as written; nil when absent.
    public var group: String?
    /// Property name, upper-cased (`TEL`, `X-ABLABEL`).
    public var name: String
    public var parameters: [VCardParameter]
    /// The value as it appears on the (unfolded, transfer-decoded) line, still escaped.
    public var rawValue: String
    /// 1-based physical line where the property starts in the parsed input; 0 when built in code.
    public var line: Int

    public init(group: String? = nil, name: String, parameters: [VCardParameter] = [], rawValue: String, line: Int = 0) {
        self.group = group
        self.name = name.uppercased()
        self.parameters = parameters
        self.rawValue = rawValue
        self.line = line
    }

    /// For the parser and converter: `name` is already upper-case.
    init(group: String?, upperName: String, parameters: [VCardParameter], rawValue: String, line: Int) {
        self.group = group
        self.name = upperName
        self.parameters = parameters
        self.rawValue = rawValue
        self.line = line
    }
}

/// One `BEGIN:VCARD … END:VCARD` block: an ordered list of properties (BEGIN/END excluded,
/// VERSION included) and the version it declared.
public struct VCard: Sendable, Hashable {
    public var version: VCardVersion
    public var properties: [VCardProperty]
    /// 1-based physical line of the BEGIN line in the parsed input; 0 when built in code.
    public var line: Int

    public init(version: VCardVersion, properties: [VCardProperty], line: Int = 0) {
        self.version = version
        self.properties = properties
        self.line = line
    }
}

/// Why a vCard stream could not be read, and where: `line` is the 1-based physical line,
/// or nil when the fault is the card as a whole (e.g. no FN).
public struct VCardError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var line: Int?

    public init(_ message: String, line: Int? = nil) {
        self.message = message
        self.line = line
    }

    public var description: String {
        if let line { return "line \(line): \(message)" }
        return message
    }
}
