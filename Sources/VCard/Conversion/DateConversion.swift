/// Plain dates between 3.0 (extended `YYYY-MM-DD`, Apple `X-APPLE-OMIT-YEAR` for year-less
/// dates) and 4.0 (basic `YYYYMMDD`, `--MMDD` without a year). Date-times and text are untouched.
enum DateConversion {
    static let appleOmitYear = "X-APPLE-OMIT-YEAR"
    static let placeholderYear = "1604"

    static func toV40(_ property: inout VCardProperty) {
        let value = property.rawValue
        if let omitted = property.parameter(appleOmitYear)?.first {
            let digits = value.filter(\.isNumber)
            if digits.count == 8, digits.hasPrefix(omitted), value.hasPrefix(omitted) {
                property.rawValue = "--" + digits.suffix(4)
                VersionConversion.removeParameters(&property, named: [appleOmitYear])
                return
            }
        }
        let bytes = Array(value.utf8)
        if bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
           isDigits(bytes[0..<4]), isDigits(bytes[5..<7]), isDigits(bytes[8..<10]) {
            property.rawValue = String(decoding: bytes[0..<4] + bytes[5..<7] + bytes[8..<10], as: UTF8.self)
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
