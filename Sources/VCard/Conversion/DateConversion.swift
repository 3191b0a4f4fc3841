/// Plain dates between 3.0 (extended `YYYY-MM-DD`, Apple `X-APPLE-OMIT-YEAR` for year-less
/// dates) and 4.0 (basic `YYYYMMDD`, `--MMDD` without a year). Date-times and text are untouched.
enum DateConversion {
    static let appleOmitYear = "X-APPLE-OMIT-YEAR"
    static let placeholderYear = "1604"

    static func toV40(_ property: inout VCardProperty) {
        let bytes = Array(property.rawValue.utf8)
        // A date, extended or basic: its year, month and day.
        var parts: (year: ArraySlice<UInt8>, month: ArraySlice<UInt8>, day: ArraySlice<UInt8>)?
        if bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
           isDigits(bytes[0..<4]), isDigits(bytes[5..<7]), isDigits(bytes[8..<10]) {
            parts = (bytes[0..<4], bytes[5..<7], bytes[8..<10])
        } else if bytes.count == 8, isDigits(bytes[0..<8]) {
            parts = (bytes[0..<4], bytes[4..<6], bytes[6..<8])
        }
        // The year is left out only when X-APPLE-OMIT-YEAR names exactly this date's year:
        // an empty or partial value (`X-APPLE-OMIT-YEAR=` matched every year) leaves the
        // date whole (found by fuzzing).
        if let parts, let omitted = property.parameter(appleOmitYear)?.first, Array(omitted.utf8)[...] == parts.year {
            property.rawValue = "--" + String(decoding: parts.month + parts.day, as: UTF8.self)
            VersionConversion.removeParameters(&property, named: [appleOmitYear])
            return
        }
        if let parts, bytes.count == 10 {
            property.rawValue = String(decoding: parts.year + parts.month + parts.day, as: UTF8.self)
        } else if bytes.count == 7, bytes[0] == UInt8(ascii: "-"), bytes[1] == UInt8(ascii: "-"),
                  bytes[4] == UInt8(ascii: "-"), isDigits(bytes[2..<4]), isDigits(bytes[5..<7]) {
            property.rawValue = String(decoding: bytes[0..<4] + bytes[5..<7], as: UTF8.self)
        }
    }

    static func toV30(_ property: inout VCardProperty) {
        let bytes = Array(property.rawValue.utf8)
        if bytes.count == 8, isDigits(bytes[0..<8]) {
            property.rawValue = String(decoding: bytes[0..<4] + [UInt8(ascii: "-")] + bytes[4..<6] + [UInt8(ascii: "-")] + bytes[6..<8], as: UTF8.self)
            return
        }
        var month: ArraySlice<UInt8>?
        var day: ArraySlice<UInt8>?
        if bytes.count == 6, bytes[0] == UInt8(ascii: "-"), bytes[1] == UInt8(ascii: "-"), isDigits(bytes[2..<6]) {
            month = bytes[2..<4]
            day = bytes[4..<6]
        } else if bytes.count == 7, bytes[0] == UInt8(ascii: "-"), bytes[1] == UInt8(ascii: "-"),
                  bytes[4] == UInt8(ascii: "-"), isDigits(bytes[2..<4]), isDigits(bytes[5..<7]) {
            month = bytes[2..<4]
            day = bytes[5..<7]
        }
        guard let month, let day else { return }
        property.rawValue = placeholderYear + "-" + String(decoding: month, as: UTF8.self) + "-" + String(decoding: day, as: UTF8.self)
        property.parameters.insert(VCardParameter(upperName: appleOmitYear, values: [placeholderYear]), at: 0)
    }

    private static func isDigits(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
