import CQRencode
#if canImport(Glibc)
import Glibc
#endif

/// A QR code's modules, made by libqrencode (issue 33: a phone's camera reads a URL off the
/// web UI's page). Value type only: no image library, the server draws it as SVG (`svg`).
public struct QRCode: Sendable, Equatable {
    /// How much of the symbol may be damaged and still read (ISO/IEC 18004: about 7, 15, 25, 30 %).
    public enum Correction: Int32, Sendable {
        case low = 0, medium, quartile, high
    }

    /// Why nothing was encoded.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Empty input: a code of nothing is always a mistake upstream.
        case empty
        /// More bytes than the largest version (40) holds at this correction level.
        case tooLong(bytes: Int)
        /// libqrencode failed otherwise (an errno value).
        case failed(code: Int32)

        public var description: String {
            switch self {
            case .empty: "nothing to encode"
            case .tooLong(let bytes): "\(bytes) bytes are too many for a QR code"
            case .failed(let code): "libqrencode failed (errno \(code))"
            }
        }
    }

    /// Modules per side (21 for version 1, 4 more per version).
    public let size: Int
    /// `size * size` modules, row by row, `true` for dark.
    public let modules: [Bool]

    /// Encodes `text`'s UTF-8 bytes in 8-bit mode at the smallest version that holds them.
    public init(_ text: String, correction: Correction = .medium) throws(Failure) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw .empty }
        var width: Int32 = 0
        var raw: UnsafeMutablePointer<UInt8>?
        let code = rolo_qr_encode(bytes, bytes.count, correction.rawValue, &width, &raw)
        guard code == 0, let raw else {
            throw code == ERANGE ? .tooLong(bytes: bytes.count) : .failed(code: code)
        }
        defer { free(raw) }
        let size = Int(width)
        self.size = size
        self.modules = UnsafeBufferPointer(start: raw, count: size * size).map { $0 != 0 }
    }

    public func isDark(row: Int, column: Int) -> Bool {
        modules[row * size + column]
    }
}
