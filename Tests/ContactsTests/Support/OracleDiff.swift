import Contacts

/// Field-by-field comparison against the oracle: every key the oracle gives is checked,
/// keys it leaves out are not. Returns one readable line per difference.
enum OracleDiff {
    static func differences(expected: JSONValue, actual: JSONValue, path: String = "", ignoring: Set<String> = [])
        -> [String] {
        switch (expected, actual) {
        case (.object(let expectedMembers), .object(let actualMembers)):
            return expectedMembers.keys.sorted().filter { !ignoring.contains($0) }.flatMap { key -> [String] in
                guard let actualValue = actualMembers[key] else { return ["\(path).\(key): missing"] }
                return differences(expected: expectedMembers[key] ?? .null, actual: actualValue,
                                   path: "\(path).\(key)", ignoring: ignoring)
            }
        case (.array(let expectedValues), .array(let actualValues)):
            var lines: [String] = []
            if expectedValues.count != actualValues.count {
                lines.append("\(path): expected \(expectedValues.count) entries, got \(actualValues.count)")
            }
            for index in 0..<min(expectedValues.count, actualValues.count) {
                lines += differences(expected: expectedValues[index], actual: actualValues[index],
                                     path: "\(path)[\(index)]", ignoring: ignoring)
            }
            return lines
        default:
            guard expected != actual else { return [] }
            return ["\(path): expected \(expected.serialized(pretty: false)), got \(actual.serialized(pretty: false))"]
        }
    }
}
