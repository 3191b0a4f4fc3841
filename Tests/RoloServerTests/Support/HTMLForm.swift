import Foundation

/// The fields a browser would submit from one form of a page, read from the markup the web
/// UI writes (one element per tag, attributes in double quotes): inputs (checked boxes and
/// radios only, no files), selects (the selected option) and textareas.
struct HTMLForm {
    var action: String
    var fields: [(name: String, value: String)]

    init?(in html: String, id: String) {
        guard let idRange = html.range(of: " id=\"\(id)\""),
              let formStart = html[..<idRange.lowerBound].range(of: "<form", options: .backwards),
              let formEnd = html[idRange.upperBound...].range(of: "</form>") else { return nil }
        let form = String(html[formStart.lowerBound..<formEnd.lowerBound])
        let openTag = String(form[..<(form.firstIndex(of: ">") ?? form.endIndex)])
        action = Self.attribute("action", in: openTag).map(Self.unescape) ?? ""
        fields = []
        let pattern = #"<(input|select|textarea)\b([^>]*)>"#
        let regex = try! NSRegularExpression(pattern: pattern)
        let text = form as NSString
        for match in regex.matches(in: form, range: NSRange(location: 0, length: text.length)) {
            let tag = text.substring(with: match.range(at: 1))
            let attributes = text.substring(with: match.range(at: 2))
            guard let name = Self.attribute("name", in: attributes).map(Self.unescape) else { continue }
            switch tag {
            case "input":
                let type = Self.attribute("type", in: attributes) ?? "text"
                if type == "file" || type == "submit" { continue }
                if (type == "checkbox" || type == "radio") && !attributes.contains(" checked") { continue }
                fields.append((name, Self.attribute("value", in: attributes).map(Self.unescape) ?? (type == "checkbox" ? "on" : "")))
            case "select":
                let after = text.substring(from: match.range.location + match.range.length)
                let body = String(after[..<(after.range(of: "</select>")?.lowerBound ?? after.endIndex)])
                let options = body.components(separatedBy: "<option").dropFirst()
                let chosen = options.first { $0.contains(" selected") } ?? options.first
                fields.append((name, chosen.flatMap { Self.attribute("value", in: $0) }.map(Self.unescape) ?? ""))
            default:
                let after = text.substring(from: match.range.location + match.range.length)
                fields.append((name, Self.unescape(String(after[..<(after.range(of: "</textarea>")?.lowerBound ?? after.endIndex)]))))
            }
        }
    }

    static func attribute(_ name: String, in tag: String) -> String? {
        guard let range = tag.range(of: " \(name)=\"") else { return nil }
        let rest = tag[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// Values of every field named `name`, in order.
    func values(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }

    /// Sets the `index`-th field named `name`.
    mutating func set(_ name: String, at index: Int = 0, to value: String) {
        var seen = 0
        for position in fields.indices where fields[position].name == name {
            if seen == index {
                fields[position].value = value
                return
            }
            seen += 1
        }
        fields.append((name, value))
    }

    var urlEncoded: Data {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return Data(fields.map { ($0.name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "") + "="
            + ($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "") }.joined(separator: "&").utf8)
    }
}
