import Foundation
import ProcessLaunch
import QRCode
import Testing

@Suite struct QRCodeTests {
    static let url = "https://contacts.example.org/dav/principals/alice/"

    @Test func aShortURLIsTheSmallestVersionThatHoldsItWithFinderAndTimingPatterns() throws {
        let code = try QRCode(Self.url)
        // 50 bytes at level M need version 4 (3-M holds 42); sides are 17 + 4 * version.
        #expect(Self.url.utf8.count == 50 && code.size == 33 && code.modules.count == 33 * 33)
        // The three finder patterns: a dark 7x7 ring around a light ring around a dark 3x3.
        for (top, left) in [(0, 0), (0, code.size - 7), (code.size - 7, 0)] {
            #expect(code.isDark(row: top, column: left) && code.isDark(row: top + 6, column: left + 6))
            #expect(!code.isDark(row: top + 1, column: left + 1) && code.isDark(row: top + 3, column: left + 3))
        }
        // The timing patterns between them alternate, dark on even modules.
        for index in 8..<(code.size - 8) {
            #expect(code.isDark(row: 6, column: index) == index.isMultiple(of: 2) && code.isDark(row: index, column: 6) == index.isMultiple(of: 2))
        }
    }

    @Test func higherCorrectionNeedsMoreModules() throws {
        #expect(try QRCode(Self.url, correction: .high).size > QRCode(Self.url, correction: .low).size)
    }

    @Test func emptyAndOverlongInputAreRefusedByName() {
        #expect(throws: QRCode.Failure.empty) { try QRCode("") }
        // Version 40 at level L holds 2,953 bytes; at H, 1,273.
        #expect(throws: QRCode.Failure.tooLong(bytes: 3000)) { try QRCode(String(repeating: "x", count: 3000), correction: .low) }
        #expect(throws: QRCode.Failure.tooLong(bytes: 2000)) { try QRCode(String(repeating: "x", count: 2000), correction: .high) }
        #expect(throws: Never.self) { try QRCode(String(repeating: "x", count: 2953), correction: .low) }
    }

    @Test func theSVGIsASquareOfTheModuleCountPlusTheQuietZone() throws {
        let code = try QRCode(Self.url)
        let svg = code.svg(label: "Scan <me> & \"go\"", pixelsPerModule: 5)
        let side = code.size + 8
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\""))
        #expect(svg.contains("viewBox=\"0 0 \(side) \(side)\"") && svg.contains("width=\"\(side * 5)\" height=\"\(side * 5)\""))
        #expect(svg.contains("<title>Scan &lt;me&gt; &amp; &quot;go&quot;</title>"))
        #expect(svg.contains("aria-label=\"Scan &lt;me&gt; &amp; &quot;go&quot;\""))
        // The drawing has exactly the code's dark modules, each inside the quiet zone.
        let bitmap = try Self.rasterize(svg)
        #expect(bitmap.count == side * side)
        for row in 0..<side {
            for column in 0..<side {
                let inside = (4..<code.size + 4).contains(row) && (4..<code.size + 4).contains(column)
                let expected = inside && code.isDark(row: row - 4, column: column - 4)
                #expect(bitmap[row * side + column] == expected, "module \(row), \(column)")
            }
        }
    }

    /// The drawn code reads back as the text it was made from, with zbarimg (Debian's
    /// zbar-tools, installed by scripts/install-deps.sh --test): the SVG's path is painted into
    /// a PBM, since zbarimg's ImageMagick has no SVG reader.
    @Test(arguments: [url, "davx5://alice@contacts.example.org:8443/dav/", "webcal://example.org/feeds/" + String(repeating: "k", count: 43)])
    func theDrawnCodeDecodesToItsText(text: String) async throws {
        let zbar = "/usr/bin/zbarimg"
        try #require(FileManager.default.isExecutableFile(atPath: zbar), "zbarimg missing: bash scripts/install-deps.sh --test")
        let code = try QRCode(text)
        let side = code.size + 8, scale = 4
        let bitmap = try Self.rasterize(code.svg(label: "code"))
        var pbm = "P1\n\(side * scale) \(side * scale)\n"
        for row in 0..<side * scale {
            pbm += (0..<side * scale).map { bitmap[(row / scale) * side + $0 / scale] ? "1" : "0" }.joined(separator: " ") + "\n"
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-qr-\(UUID().uuidString).pbm")
        try pbm.write(to: file, atomically: true, encoding: .ascii)
        defer { try? FileManager.default.removeItem(at: file) }
        let path = file.path
        let (status, output) = try await offThread {
            let process = try SpawnedProcess(zbar, ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", path], stdout: .pipe, stderr: .null)
            let output = readToEnd(process.standardOutput!)
            process.waitUntilExit()
            return (process.terminationStatus, output)
        }
        #expect(status == 0)
        #expect(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .newlines) == text)
    }

    /// Paints the SVG's one path (`M x y h w v1 h-w z` runs) into a bitmap of the viewBox.
    static func rasterize(_ svg: String) throws -> [Bool] {
        let box = try #require(svg.firstMatch(of: /viewBox="0 0 (\d+) (\d+)"/))
        let side = try #require(Int(box.1))
        #expect(Int(box.2) == side)
        let path = try #require(svg.firstMatch(of: /<path fill="#000" d="([^"]*)"\/>/))
        var bitmap = Array(repeating: false, count: side * side)
        for run in path.1.matches(of: /M(\d+) (\d+)h(\d+)v1h-(\d+)z/) {
            let x = Int(run.1)!, y = Int(run.2)!, width = Int(run.3)!
            #expect(Int(run.4)! == width)
            for column in x..<x + width { bitmap[y * side + column] = true }
        }
        return bitmap
    }
}
