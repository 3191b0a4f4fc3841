#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Legacy character sets to UTF-8 through the C library's iconv (glibc on Linux): the
/// `CHARSET=` of vCard 2.1 values (Shift_JIS, ISO-2022-JP, EUC-JP, GB2312/GBK/GB18030,
/// Big5, EUC-KR, ISO-8859-x, windows-125x, KOI8-R, UTF-16…) and whole UTF-16 files.
///
/// Labels are mapped to the superset the writing devices really used (Shift_JIS phones
/// wrote Microsoft's CP932, GB2312 phones wrote GBK, EUC-KR ones UHC/CP949, ISO-8859-1
/// writers windows-1252), so that every byte those devices produced has a meaning.
enum CharsetDecoding {
    enum Outcome {
        case decoded(String)
        /// iconv does not know the label (nor any alias of it).
        case unknownCharset
        /// The bytes are not valid in that charset; `lossy` replaced each bad sequence by U+FFFD.
        case invalidBytes(lossy: String)
    }

    /// Normalised label: lower-case, `_`/space -> `-`, surrounding quotes and spaces dropped.
    static func normalize(_ label: String) -> String {
        var out = ""
        for scalar in label.unicodeScalars {
            switch scalar {
            case "\"", "'", " ", "\t": continue
            case "_": out.append("-")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out.lowercased()
    }

    /// True for labels that mean UTF-8 (or its ASCII subset).
    static func isUTF8(_ normalized: String) -> Bool {
        switch normalized {
        case "utf-8", "utf8", "us-ascii", "ascii", "x-utf-8", "unicode-1-1-utf-8": return true
        default: return false
        }
    }

    /// True for the UTF-16 / UCS-2 family.
    static func isUTF16(_ normalized: String) -> Bool {
        normalized.hasPrefix("utf-16") || normalized.hasPrefix("utf16") || normalized.hasPrefix("ucs-2")
            || normalized == "unicode" || normalized == "ucs2"
    }

    /// Stateful 7-bit encodings that need ESC / SO / SI bytes inside a value.
    static func usesEscapes(_ normalized: String) -> Bool {
        normalized.hasPrefix("iso-2022") || normalized.hasPrefix("csiso2022") || normalized == "jis"
    }

    /// The iconv names to try for a label, best first.
    static func iconvNames(for normalized: String) -> [String] {
        switch normalized {
        case "shift-jis", "sjis", "x-sjis", "shiftjis", "ms-kanji", "csshiftjis", "windows-31j", "cp932", "ms932",
             "x-ms-cp932", "shift-jis-2004", "x-shift-jis":
            return ["CP932", "SHIFT_JIS"]
        case "euc-jp", "eucjp", "x-euc-jp", "cseucpkdfmtjapanese", "ujis":
            return ["EUC-JP-MS", "EUC-JP"]
        case "iso-2022-jp", "csiso2022jp", "jis", "iso-2022-jp-1", "iso-2022-jp-2", "iso-2022-jp-3":
            // ISO-2022-JP-2 reads plain ISO-2022-JP and the JIS X 0212 / Latin escapes some phones used.
            return ["ISO-2022-JP-2", "ISO-2022-JP"]
        case "gb2312", "gbk", "gb-2312", "csgb2312", "euc-cn", "x-euc-cn", "cp936", "ms936", "windows-936", "x-gbk",
             "gb18030", "chinese", "iso-ir-58":
            return ["GB18030"]
        case "big5", "big-5", "csbig5", "x-x-big5", "cn-big5", "cp950", "ms950", "windows-950":
            return ["CP950", "BIG5"]
        case "big5-hkscs", "big5hkscs":
            return ["BIG5-HKSCS"]
        case "euc-kr", "euckr", "cseuckr", "ks-c-5601-1987", "ks-c-5601", "ksc5601", "korean", "cp949", "ms949",
             "windows-949", "uhc", "x-windows-949":
            return ["CP949", "EUC-KR"]
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso-ir-100", "cp819", "ibm819", "windows-1252",
             "cp1252", "x-cp1252", "us":
            return ["WINDOWS-1252"]
        case "koi8-r", "koi8r", "cskoi8r", "koi8":
            return ["KOI8-R"]
        case "koi8-u", "koi8u":
            return ["KOI8-U"]
        case "utf-16", "utf16", "unicode", "ucs-2", "ucs2", "iso-10646-ucs-2":
            return ["UTF-16"]
        case "utf-16le", "utf16le", "ucs-2le": return ["UTF-16LE"]
        case "utf-16be", "utf16be", "ucs-2be": return ["UTF-16BE"]
        default:
            if normalized.hasPrefix("cp125"), let digit = normalized.last, normalized.count == 6 {
                return ["WINDOWS-125\(digit)"]
            }
            if normalized.hasPrefix("x-cp125"), let digit = normalized.last, normalized.count == 8 {
                return ["WINDOWS-125\(digit)"]
            }
            if normalized.hasPrefix("iso8859-") {
                return ["ISO-8859-" + normalized.dropFirst("iso8859-".count)]
            }
            if normalized.hasPrefix("iso-8859-"), normalized.hasSuffix("-i") || normalized.hasSuffix("-e") {
                return [String(normalized.dropLast(2)).uppercased()]
            }
            return [normalized.uppercased()]
        }
    }

    /// Decodes `bytes` in the charset `label` (any spelling phones used).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, label: String) -> Outcome {
        let normalized = normalize(label)
        if isUTF8(normalized) {
            if let text = String(validating: bytes, as: UTF8.self) { return .decoded(text) }
            return .invalidBytes(lossy: String(decoding: bytes, as: UTF8.self))
        }
        for name in iconvNames(for: normalized) {
            if let outcome = IconvConverter.convert(bytes, from: name) { return outcome }
        }
        return .unknownCharset
    }

    /// Like `decode`, for an array.
    static func decode(_ bytes: [UInt8], label: String) -> Outcome {
        bytes.withUnsafeBufferPointer { decode($0, label: label) }
    }
}

/// One iconv conversion to UTF-8. A descriptor is opened per call: iconv_t holds shift
/// state and must not be shared between threads; glibc caches the loaded tables.
enum IconvConverter {
    /// nil when iconv cannot open `name`.
    static func convert(_ bytes: UnsafeBufferPointer<UInt8>, from name: String) -> CharsetDecoding.Outcome? {
        #if canImport(Glibc) || canImport(Musl)
        guard let descriptor = iconv_open("UTF-8", name), descriptor != UnsafeMutableRawPointer(bitPattern: -1) else {
            return nil
        }
        defer { iconv_close(descriptor) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 3 + 16)
        var chunk = [UInt8](repeating: 0, count: max(64, bytes.count * 3 + 16))
        var valid = true
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .decoded("") }
        var input = UnsafeMutablePointer(mutating: UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self))
        var inputLeft = bytes.count
        let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
        func run(_ input: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ inputLeft: UnsafeMutablePointer<Int>?) -> (Int, Int32) {
            chunk.withUnsafeMutableBufferPointer { buffer -> (Int, Int32) in
                var out: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
                var outLeft = buffer.count
                let result = iconv(descriptor, input, inputLeft, &out, &outLeft)
                let code = result == -1 ? errno : 0
                output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<(buffer.count - outLeft)]))
                return (result, code)
            }
        }
        while inputLeft > 0 {
            var cursor: UnsafeMutablePointer<CChar>? = input
            let (result, code) = run(&cursor, &inputLeft)
            input = cursor!
            if result != -1 { break }
            switch code {
            case E2BIG:
                continue
            case EILSEQ:
                valid = false
                output.append(contentsOf: replacement)
                input += 1
                inputLeft -= 1
            default:  // EINVAL: truncated sequence at the end.
                valid = false
                output.append(contentsOf: replacement)
                inputLeft = 0
            }
        }
        _ = run(nil, nil)  // Flush the shift state (ISO-2022-*).
        let text = String(decoding: output, as: UTF8.self)
        return valid ? .decoded(text) : .invalidBytes(lossy: text)
        #else
        return nil
        #endif
    }
}
