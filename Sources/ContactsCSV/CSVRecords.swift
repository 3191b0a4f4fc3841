/// RFC 4180 records with the line each begins on, so a row that cannot be read is reported
/// where an editor shows it. A small reader of our own rather than SwiftCSV or CSV.swift:
/// neither reports line numbers of records (a quoted field may span lines), and each would be
/// one more package to pin for about a hundred lines.
struct CSVRecords {
    struct Record: Sendable, Hashable {
        /// The 1-based line of the record's first character.
        var line: Int
        var fields: [String]
    }

    var records: [Record] = []
    /// The line of a quoted field the text ends inside, if any: that record is not in `records`.
    var unterminatedQuoteLine: Int?

    /// Reads `text` with `delimiter`. Lenient where exporters stray from the RFC: a quote inside
    /// an unquoted field is kept as a character, text after a closing quote is appended, line
    /// ends may be CRLF, LF or CR. Lines holding nothing at all are skipped.
    init(_ text: String, delimiter: Unicode.Scalar) {
        var fields: [String] = [], field = String.UnicodeScalarView()
        var quoted = false, fieldWasQuoted = false, atFieldStart = true
        var line = 1, recordLine = 1, previousWasCR = false
        func endField() {
            fields.append(String(field))
            field = String.UnicodeScalarView()
            fieldWasQuoted = false
            atFieldStart = true
        }
        func endRecord() {
            let lastWasQuoted = fieldWasQuoted
            endField()
            if fields.count > 1 || !fields[0].isEmpty || lastWasQuoted { records.append(Record(line: recordLine, fields: fields)) }
            fields = []
        }
        var scalars = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar?
        while let scalar = pending ?? scalars.next() {
            pending = nil
            let isLF = scalar == "\n", isCR = scalar == "\r"
            if isLF, previousWasCR { previousWasCR = false; if !quoted { continue } else { field.append(scalar); continue } }
            previousWasCR = isCR
            if isLF || isCR { line += 1 }
            if quoted {
                if scalar == "\"" {
                    if let next = scalars.next() {
                        if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(scalar)
                }
                continue
            }
            if scalar == "\"", atFieldStart {
                quoted = true
                fieldWasQuoted = true
                atFieldStart = false
            } else if scalar == delimiter {
                endField()
            } else if isLF || isCR {
                endRecord()
                recordLine = line
            } else {
                field.append(scalar)
                atFieldStart = false
            }
        }
        if quoted {
            unterminatedQuoteLine = recordLine
        } else if !fields.isEmpty || !field.isEmpty || fieldWasQuoted {
            endRecord()
        }
    }

    /// The delimiter of a header line: the most frequent of comma, semicolon (Excel with a
    /// German list separator) and tab outside quotes; comma when none occurs.
    static func delimiter(of text: String) -> Unicode.Scalar {
        var counts: [Unicode.Scalar: Int] = [",": 0, ";": 0, "\t": 0], quoted = false
        for scalar in text.unicodeScalars {
            if scalar == "\"" { quoted.toggle() }
            if !quoted, scalar == "\n" || scalar == "\r" { break }
            if !quoted, counts[scalar] != nil { counts[scalar]! += 1 }
        }
        let best = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key != ",") }!
        return best.value == 0 ? "," : best.key
    }

    /// One record as RFC 4180 text: a field is quoted when it holds the delimiter, a quote, a
    /// line break or edge spaces; quotes are doubled. No line end.
    static func line(_ fields: [String], delimiter: Character = ",") -> String {
        fields.map { field in
            let needsQuotes = field.contains(delimiter) || field.unicodeScalars.contains { $0 == "\"" || $0 == "\n" || $0 == "\r" }
                || field.first == " " || field.last == " "
            return needsQuotes ? "\"" + field.replacingQuotes() + "\"" : field
        }.joined(separator: String(delimiter))
    }
}

private extension String {
    func replacingQuotes() -> String {
        var out = ""
        for character in self { out += character == "\"" ? "\"\"" : String(character) }
        return out
    }
}
