import VCard

/// One entry of a multi-valued contact field (a phone number, an email address…) with
/// the label, preference and stable identifier clients use to tell entries apart, like
/// `CNLabeledValue`.
public struct LabeledValue<Value: Sendable & Hashable>: Sendable, Hashable {
    /// Stable identifier: `pid:<PID>` when the vCard 4 PID parameter is present, otherwise
    /// derived from the property name and position (`TEL#3`), so re-reading the same card
    /// gives the same identifiers.
    public internal(set) var identifier: String
    public internal(set) var label: Label?
    public internal(set) var value: Value
    public internal(set) var isPreferred: Bool
    /// The vCard 4 `PID` parameter text as written (`2.1,2.2`), when present.
    public internal(set) var pid: String?
    /// What the vCard said that the model does not map; written back unchanged.
    var extras: PropertyExtras

    public init(identifier: String, label: Label?, value: Value, isPreferred: Bool = false, pid: String? = nil) {
        self.identifier = identifier
        self.label = label
        self.value = value
        self.isPreferred = isPreferred
        self.pid = pid
        self.extras = PropertyExtras()
    }

    /// A copy with another label (the rest, identifier included, unchanged).
    public func withLabel(_ label: Label?) -> LabeledValue {
        var copy = self
        copy.label = label
        return copy
    }

    /// A copy with another value.
    public func withValue(_ value: Value) -> LabeledValue {
        var copy = self
        copy.value = value
        return copy
    }

    /// A copy with another preferred flag.
    public func withPreferred(_ isPreferred: Bool) -> LabeledValue {
        var copy = self
        copy.isPreferred = isPreferred
        return copy
    }
}

/// The parts of a vCard property that the model does not interpret, kept so that
/// vCard -> Contact -> vCard loses nothing.
struct PropertyExtras: Sendable, Hashable {
    /// Property group to write back, kept only when an unmapped property shares it.
    var group: String?
    /// TYPE tokens the label does not imply (`VOICE`, `INTERNET`…), as written.
    var typeTokens: [String] = []
    /// Every other parameter (VALUE, LANGUAGE, X-…), as written.
    var parameters: [VCardParameter] = []
}
