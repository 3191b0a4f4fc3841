import Testing
@testable import VCard

@Suite struct ParserErrorTests {
    private func expectError(_ input: String, line: Int?, mentions: String...) {
        expectError(Array(input.utf8), line: line, mentions: mentions)
    }

    private func expectError(_ input: [UInt8], line: Int?, mentions: [String]) {
        guard let error = parseError(input) else {
            Issue.record("expected an error")
            return
        }
        #expect(error.line == line, "\(error)")
        for word in mentions {
            #expect(error.message.lowercased().contains(word.lowercased()), "\(error) should mention \(word)")
        }
    }

    @Test func emptyInputIsRejected() {
        expectError("", line: nil, mentions: "empty")
        expectError("\r\n  \r\n", line: nil, mentions: "empty")
    }

    @Test func contentBeforeBeginIsRejectedOnLine1() {
        expectError("VERSION:3.0\r\nFN:x\r\nEND:VCARD\r\n", line: 1, mentions: "BEGIN")
    }

    @Test func endWithoutBeginMentionsBegin() {
        expectError("END:VCARD\r\n", line: 1, mentions: "BEGIN")
    }

    @Test func missingEndMentionsEndOnLastLine() {
        expectError("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:x\r\n", line: 3, mentions: "END")
    }

    @Test func nestedBeginIsRejected() {
        expectError("BEGIN:VCARD\r\nVERSION:3.0\r\nBEGIN:VCARD\r\n", line: 3, mentions: "END")
    }

    @Test func twoDifferentVersionsAreRejectedWhereTheSecondIs() {
        expectError(card("3.0", "FN:x", "VERSION:4.0"), line: 4, mentions: "VERSION")
    }

    @Test func missingVersionIsRejected() {
        expectError("BEGIN:VCARD\r\nFN:x\r\nEND:VCARD\r\n", line: nil, mentions: "VERSION")
    }

    @Test func unsupportedVersionIsRejected() {
        expectError("BEGIN:VCARD\r\nVERSION:5.0\r\nEND:VCARD\r\n", line: 2, mentions: "VERSION")
    }

    @Test func unterminatedQuotedParameterIsRejectedWithoutHanging() {
        expectError(card("4.0", "FN:x", #"TEL;TYPE="cell,voice:+359"#), line: 4, mentions: "quote")
    }

    @Test func vcalendarIsNotAVCard() {
        expectError("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", line: 1, mentions: "not a vCard", "VCARD")
    }

    @Test func binaryGarbageIsRejectedWithoutCrash() {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0]
        var state: UInt32 = 7
        for _ in 0..<4096 {
            state = state &* 1_103_515_245 &+ 12345
            bytes.append(UInt8(truncatingIfNeeded: state >> 16))
        }
        expectError(bytes, line: 1, mentions: ["BEGIN"])
    }

    @Test func controlCharactersAndBadUTF8InsideACardAreRejected() {
        var bytes = Array(card("3.0", "FN:a").utf8)
        let insert = bytes.firstIndex(of: UInt8(ascii: "a"))!
        bytes.insert(0, at: insert)
        expectError(bytes, line: 3, mentions: ["control"])
        var invalid = Array(card("4.0", "FN:a").utf8)
        invalid.insert(0xFF, at: invalid.firstIndex(of: UInt8(ascii: "a"))!)
        expectError(invalid, line: 3, mentions: ["UTF-8"])
    }

    @Test func lineWithoutColonIsRejected() {
        expectError(card("3.0", "FN x"), line: 3, mentions: ":")
    }

    @Test func garbageAfterClosingQuoteIsRejected() {
        expectError(card("3.0", #"TEL;TYPE="a"b:1"#), line: 3, mentions: "quote")
    }

    @Test func hostileInputsFinishInLinearTime() {
        let clock = ContinuousClock()
        let quotes = "BEGIN:VCARD\r\nVERSION:4.0\r\nX;A=\"" + String(repeating: "a", count: 400_000)
        let folds = "BEGIN:VCARD\r\nVERSION:4.0\r\nNOTE:" + String(repeating: "\r\n x", count: 200_000) + "\r\nEND:VCARD\r\n"
        let params = "BEGIN:VCARD\r\nVERSION:4.0\r\nX" + String(repeating: ";A=b,c", count: 100_000) + ":v\r\nEND:VCARD\r\n"
        let softBreaks = "BEGIN:VCARD\r\nVERSION:2.1\r\nNOTE;ENCODING=QUOTED-PRINTABLE:" + String(repeating: "=\r\n", count: 100_000) + "x\r\nEND:VCARD\r\n"
        var results: [Int?] = []
        let elapsed = clock.measure {
            results.append(parseError(quotes) == nil ? nil : 1)
            results.append((try? parseOne(folds))?.first("NOTE")?.rawValue.count)
            results.append((try? parseOne(params))?.first("X")?.parameters.count)
            results.append((try? parseOne(softBreaks))?.first("NOTE")?.rawValue.count)
        }
        #expect(results == [1, 200_000, 100_000, 1])
        #expect(elapsed < .seconds(20))
    }
}
