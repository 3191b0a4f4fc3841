/// A JSON document: what the corpus oracle (`expected.json`) and `rolo vcard inspect`
/// exchange. Written deterministically (sorted keys) without Foundation's formatting quirks.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Serialises with object keys sorted; `pretty` indents by two spaces.
    public func serialized(pretty: Bool = true) -> String {
        var output = ""
        write(into: &output, pretty: pretty, indent: 0)
        return output
    }

    private func write(into output: inout String, pretty: Bool, indent: Int) {
        let newline = pretty ? "\n" : ""
        let padding = pretty ? String(repeating: "  ", count: indent + 1) : ""
        let closingPadding = pretty ? String(repeating: "  ", count: indent) : ""
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let value):
            output += value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .string(let value): JSONValue.writeString(value, into: &output)
        case .array(let values):
            guard !values.isEmpty else { output += "[]"; return }
            output += "[" + newline
            for (index, value) in values.enumerated() {
                output += padding
                value.write(into: &output, pretty: pretty, indent: indent + 1)
                output += (index < values.count - 1 ? "," : "") + newline
            }
            output += closingPadding + "]"
        case .object(let members):
            guard !members.isEmpty else { output += "{}"; return }
            output += "{" + newline
            let keys = members.keys.sorted()
            for (index, key) in keys.enumerated() {
                output += padding
                JSONValue.writeString(key, into: &output)
                output += pretty ? ": " : ":"
                members[key]?.write(into: &output, pretty: pretty, indent: indent + 1)
                output += (index < keys.count - 1 ? "," : "") + newline
            }
            output += closingPadding + "}"
        }
    }

    private static func writeString(_ value: String, into output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }

    /// The member at `key` of an object; nil otherwise.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}
