import HTTPHead
import Testing

/// `RawRequestHead`'s verdict on each shape of head it must read, and on each one it must
/// leave to NIO's codec: `unreadable` (the connection is handed over unread) or a head that
/// is not `isDelimited` (handed over once it is passed on), never a head whose end it could
/// place elsewhere than another parser. The fuzz target `head` checks the same against NIO.
@Suite struct RawRequestHeadTests {
    /// A verdict as plain values, so a test states it in one `#expect`.
    enum Verdict: Equatable {
        case incomplete, unreadable
        case head(size: Int, body: Int, delimited: Bool, plainGet: Bool)
    }

    static func verdict(_ bytes: [UInt8], checked: Int = 0) -> Verdict {
        switch bytes.withUnsafeBytes({ RawRequestHead.scan($0, checked: checked) }) {
        case .incomplete: .incomplete
        case .unreadable: .unreadable
        case .head(let head):
            .head(size: head.size, body: head.bodyLength, delimited: head.isDelimited, plainGet: head.isPlainGet)
        }
    }

    static func verdict(_ text: String) -> Verdict { verdict(Array(text.utf8)) }

    static func head(_ text: String) -> RawRequestHead? {
        if case .head(let head) = Array(text.utf8).withUnsafeBytes({ RawRequestHead.scan($0) }) { head } else { nil }
    }

    /// A head that passes for a plain GET with these field lines (each ending in CRLF).
    static func get(_ fields: String = "", method: String = "GET", target: String = "/dav/alice/book/card.vcf",
                    version: String = "HTTP/1.1") -> String {
        "\(method) \(target) \(version)\r\nHost: rolo.test\r\nAuthorization: Basic YWxpY2U6c2VjcmV0\r\n\(fields)\r\n"
    }

    static func delimited(_ text: String, body: Int = 0, plainGet: Bool = false) -> Verdict {
        .head(size: text.utf8.count, body: body, delimited: true, plainGet: plainGet)
    }

    static func undelimited(_ text: String, body: Int = 0) -> Verdict {
        .head(size: text.utf8.count, body: body, delimited: false, plainGet: false)
    }

    // MARK: Normal requests

    @Test func plainGetIsDelimitedAndAnswerable() {
        #expect(Self.verdict(Self.get()) == Self.delimited(Self.get(), plainGet: true))
        #expect(Self.head(Self.get())?.isHead == false)
        #expect(Self.verdict(Self.get("Connection: keep-alive\r\n")) == Self.delimited(Self.get("Connection: keep-alive\r\n"), plainGet: true))
    }

    @Test func plainHeadIsAnswerableAndMarked() {
        let text = Self.get(method: "HEAD")
        #expect(Self.verdict(text) == Self.delimited(text, plainGet: true))
        #expect(Self.head(text)?.isHead == true)
    }

    @Test func requestReadsMethodTargetAndLowerCasedFieldsWithRepeatsJoined() throws {
        let text = "GET /a/b.vcf HTTP/1.1\r\nHost: x\r\nAuthorization: Basic abc\r\nX-Tag:  one \t\r\nx-tag:two\r\n\r\n"
        let bytes = Array(text.utf8)
        let head = try #require(Self.head(text))
        let request = bytes.withUnsafeBytes { head.request(in: $0) }
        #expect(request.method == "GET")
        #expect(request.target == "/a/b.vcf")
        #expect(request.headers == ["host": "x", "authorization": "Basic abc", "x-tag": "one, two"])
    }

    @Test func requestReadsAnyMethod() throws {
        let text = "PROPFIND /dav/ HTTP/1.1\r\nDepth: 1\r\nContent-Length: 0\r\n\r\n"
        let head = try #require(Self.head(text))
        let request = Array(text.utf8).withUnsafeBytes { head.request(in: $0) }
        #expect(request.method == "PROPFIND")
        #expect(request.headers == ["depth": "1", "content-length": "0"])
    }

    @Test func bodyLengthComesFromContentLength() {
        let text = "PUT /dav/alice/book/card.vcf HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n"
        #expect(Self.verdict(text + "hello") == Self.delimited(text, body: 5))
        #expect(Self.verdict(text) == Self.delimited(text, body: 5), "the body need not be there yet")
        let trimmed = "PUT /a HTTP/1.1\r\nContent-Length: \t12 \r\n\r\n"
        #expect(Self.verdict(trimmed) == Self.delimited(trimmed, body: 12))
        let zero = Self.get("Content-Length: 0\r\n")
        #expect(Self.verdict(zero) == Self.delimited(zero, plainGet: true))
    }

    @Test func getWithoutExactlyOneAuthorizationIsNotAnsweredInline() {
        let none = "GET /a.vcf HTTP/1.1\r\nHost: x\r\n\r\n"
        #expect(Self.verdict(none) == Self.delimited(none))
        let two = Self.get("Authorization: Basic Ym9iOnB3\r\n")
        #expect(Self.verdict(two) == Self.delimited(two))
    }

    @Test func getWithABodyIsNotAnsweredInline() {
        let text = Self.get("Content-Length: 3\r\n")
        #expect(Self.verdict(text + "abc") == Self.delimited(text, body: 3))
    }

    @Test func otherMethodsAreDelimitedButNotAnswered() {
        for method in ["POST", "DELETE", "PROPFIND", "REPORT", "get", "OPTIONS"] {
            let text = Self.get(method: method)
            #expect(Self.verdict(text) == Self.delimited(text), "\(method)")
        }
    }

    @Test func queryStringOrFragmentIsNotAnsweredInline() {
        for target in ["/a.vcf?x=1", "/a.vcf?", "/a.vcf#top", "/a\"b"] {
            let text = Self.get(target: target)
            #expect(Self.verdict(text) == Self.delimited(text), "\(target)")
        }
    }

    @Test func targetNotInOriginFormIsNotAnsweredInline() {
        for target in ["http://rolo.test/a.vcf", "*", "a.vcf"] {
            let text = Self.get(target: target)
            #expect(Self.verdict(text) == Self.delimited(text), "\(target)")
        }
    }

    @Test func expectIsNotAnsweredInline() {
        let text = Self.get("Expect: 100-continue\r\n")
        #expect(Self.verdict(text) == Self.delimited(text))
    }

    @Test func nonASCIIValueIsReadButNotAnsweredInline() {
        let bytes = Array(Self.get().utf8.dropLast(2)) + Array("X-Name: ".utf8) + [0xC3, 0xA9] + Array("\r\n\r\n".utf8)
        #expect(Self.verdict(bytes) == .head(size: bytes.count, body: 0, delimited: true, plainGet: false))
    }

    // MARK: Where another parser could end the request elsewhere

    @Test func duplicateContentLengthIsNotDelimitedEvenWhenEqual() {
        let equal = "PUT /a HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"
        #expect(Self.verdict(equal) == Self.undelimited(equal, body: 5))
        let different = "PUT /a HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 50\r\n\r\n"
        #expect(Self.verdict(different) == Self.undelimited(different, body: 50))
        let onAGet = Self.get("Content-Length: 0\r\nContent-Length: 0\r\n")
        #expect(Self.verdict(onAGet) == Self.undelimited(onAGet))
    }

    @Test func contentLengthListIsNotDelimited() {
        let text = "PUT /a HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n"
        #expect(Self.verdict(text) == Self.undelimited(text))
    }

    @Test(arguments: ["+5", "-1", "5a", "0x5", "5 5", "", "1234567890123456", "٥"])
    func contentLengthThatIsNotDigitsIsNotDelimited(value: String) {
        let text = "PUT /a HTTP/1.1\r\nContent-Length: \(value)\r\n\r\n"
        #expect(Self.verdict(text) == Self.undelimited(text))
    }

    @Test func transferEncodingWithContentLengthIsNotDelimited() {
        let text = "POST /a HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(Self.verdict(text) == Self.undelimited(text, body: 5))
        let after = "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
        #expect(Self.verdict(after) == Self.undelimited(after, body: 5))
    }

    @Test func transferEncodingAloneIsNotDelimited() {
        for value in ["chunked", "identity", "gzip, chunked", ""] {
            let text = "POST /a HTTP/1.1\r\nTRANSFER-encoding: \(value)\r\n\r\n"
            #expect(Self.verdict(text) == Self.undelimited(text), "\(value)")
        }
        let onAGet = Self.get("Transfer-Encoding: chunked\r\n")
        #expect(Self.verdict(onAGet) == Self.undelimited(onAGet))
    }

    @Test func upgradeIsNotDelimited() {
        let text = Self.get("Connection: Upgrade\r\nUpgrade: websocket\r\n")
        #expect(Self.verdict(text) == Self.undelimited(text))
        let alone = Self.get("Upgrade: h2c\r\n")
        #expect(Self.verdict(alone) == Self.undelimited(alone))
    }

    @Test func connectionOptionOtherThanKeepAliveIsNotDelimited() {
        for value in ["close", "Close", "keep-alive, close", "keep-alive,TE", "upgrade"] {
            let text = Self.get("Connection: \(value)\r\n")
            #expect(Self.verdict(text) == Self.undelimited(text), "\(value)")
        }
        for value in ["Keep-Alive", "keep-alive, keep-alive", " keep-alive ,", ""] {
            let text = Self.get("Connection: \(value)\r\n")
            #expect(Self.verdict(text) == Self.delimited(text, plainGet: true), "\(value)")
        }
    }

    /// Was delimited: NIO's parser (llhttp) reads `Proxy-Connection` as `Connection`, so after
    /// `Proxy-Connection: close` it refuses the next request (the `head` fuzz target's check
    /// fails on Fuzz/Seeds/http/proxy-connection-close.http without the fix).
    @Test func proxyConnectionOptionOtherThanKeepAliveIsNotDelimited() {
        for value in ["close", "keep-alive, close", "upgrade"] {
            let text = Self.get("Proxy-Connection: \(value)\r\n")
            #expect(Self.verdict(text) == Self.undelimited(text), "\(value)")
        }
        let keepAlive = Self.get("proxy-connection: keep-alive\r\n")
        #expect(Self.verdict(keepAlive) == Self.delimited(keepAlive, plainGet: true))
    }

    @Test func http10IsNotDelimited() {
        let text = Self.get(version: "HTTP/1.0")
        #expect(Self.verdict(text) == Self.undelimited(text))
        let keepAlive = Self.get("Connection: keep-alive\r\n", version: "HTTP/1.0")
        #expect(Self.verdict(keepAlive) == Self.undelimited(keepAlive))
    }

    @Test func connectIsNotDelimited() {
        let text = "CONNECT rolo.test:443 HTTP/1.1\r\nHost: rolo.test:443\r\n\r\n"
        #expect(Self.verdict(text) == Self.undelimited(text))
    }

    // MARK: Bytes outside the strict grammar

    @Test func obsFoldIsUnreadable() {
        #expect(Self.verdict(Self.get("X-A: one\r\n two\r\n")) == .unreadable)
        #expect(Self.verdict(Self.get("X-A: one\r\n\ttwo\r\n")) == .unreadable)
        #expect(Self.verdict("GET /a HTTP/1.1\r\n Host: x\r\n\r\n") == .unreadable, "a first field line that is folded")
        #expect(Self.verdict("PUT /a HTTP/1.1\r\nContent-Length: 5\r\n 0\r\n\r\n") == .unreadable)
    }

    @Test func bareCRIsUnreadable() {
        #expect(Self.verdict("GET /a HTTP/1.1\rHost: x\r\n\r\n") == .unreadable)
        #expect(Self.verdict(Self.get("X-A: one\rtwo\r\n")) == .unreadable)
        #expect(Self.verdict("GET /a HTTP/1.1\r\nHost: x\r\n\r\r\n") == .unreadable)
        #expect(Self.verdict("GET /a HTTP/1.1\r\nHost: x\r\r\n\r\n") == .unreadable)
    }

    @Test func crAtTheEndOfTheBytesSoFarWaitsForTheNextByte() {
        #expect(Self.verdict("GET /a HTTP/1.1\r") == .incomplete)
        #expect(Self.verdict("GET /a HTTP/1.1\r\nHost: x\r\n\r") == .incomplete)
    }

    @Test func bareLFIsUnreadable() {
        #expect(Self.verdict("GET /a HTTP/1.1\nHost: x\n\n") == .unreadable)
        #expect(Self.verdict("GET /a HTTP/1.1\r\nHost: x\n\r\n") == .unreadable)
        #expect(Self.verdict("GET /a HTTP/1.1\r\nHost: x\r\n\n") == .unreadable)
        #expect(Self.verdict("GET /a HTTP/1.1\r\nX: a\nb\r\n\r\n") == .unreadable)
        #expect(Self.verdict("\n") == .unreadable)
    }

    @Test func emptyFirstLineIsUnreadable() {
        #expect(Self.verdict("\r\n\r\n") == .unreadable)
        #expect(Self.verdict("\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n") == .unreadable)
    }

    @Test func nulByteIsUnreadable() {
        #expect(Self.verdict(Self.get("X-A: a\u{0}b\r\n")) == .unreadable, "in a value")
        #expect(Self.verdict(Self.get("X-\u{0}A: b\r\n")) == .unreadable, "in a name")
        #expect(Self.verdict(Self.get(target: "/a\u{0}.vcf")) == .unreadable, "in the target")
        #expect(Self.verdict("GE\u{0}T /a HTTP/1.1\r\n\r\n") == .unreadable, "in the method")
    }

    @Test func otherControlCharactersInAValueAreUnreadable() {
        for control in ["\u{1}", "\u{B}", "\u{C}", "\u{1B}", "\u{7F}"] {
            #expect(Self.verdict(Self.get("X-A: a\(control)b\r\n")) == .unreadable)
        }
        let tab = Self.get("X-A: a\tb\r\n")
        #expect(Self.verdict(tab) == Self.delimited(tab, plainGet: true), "a tab is allowed")
    }

    @Test func spaceBeforeTheColonIsUnreadable() {
        #expect(Self.verdict("PUT /a HTTP/1.1\r\nContent-Length : 5\r\n\r\n") == .unreadable)
        #expect(Self.verdict("POST /a HTTP/1.1\r\nTransfer-Encoding\t: chunked\r\n\r\n") == .unreadable)
    }

    @Test(arguments: ["X(A)", "X@A", "X/A", "X[A]", "X\"A", "X,A", "X;A", "X=A", "X{A}", "X\\A", "X?A", ""])
    func fieldNameThatIsNoTokenIsUnreadable(name: String) {
        #expect(Self.verdict(Self.get("\(name): b\r\n")) == .unreadable)
    }

    @Test func fieldLineWithoutAColonIsUnreadable() {
        #expect(Self.verdict(Self.get("X-A\r\n")) == .unreadable)
    }

    @Test(arguments: [
        "GET  /a HTTP/1.1", "GET /a  HTTP/1.1", " GET /a HTTP/1.1", "GET\t/a HTTP/1.1", "GET /a HTTP/1.1 ",
        "GET /a http/1.1", "GET /a HTTP/1.2", "GET /a HTTP/2.0", "GET /a HTTP/1.10", "GET /a HTTP/1", "GET /a",
        "GET HTTP/1.1", "GET /a b HTTP/1.1", "/a HTTP/1.1", "G(T /a HTTP/1.1",
    ])
    func requestLineOutsideTheGrammarIsUnreadable(line: String) {
        #expect(Self.verdict("\(line)\r\nHost: x\r\n\r\n") == .unreadable)
    }

    @Test func targetWithNonASCIIIsUnreadable() {
        let bytes = Array("GET /caf".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\n\r\n".utf8)
        #expect(Self.verdict(bytes) == .unreadable)
    }

    // MARK: The size limit

    /// A head of exactly `size` bytes: a request line, one padded field, the blank line.
    static func head(ofSize size: Int) -> [UInt8] {
        let start = Array("GET /a HTTP/1.1\r\nX-Pad: ".utf8), end = Array("\r\n\r\n".utf8)
        return start + [UInt8](repeating: UInt8(ascii: "a"), count: size - start.count - end.count) + end
    }

    @Test func headUnderTheLimitIsRead() {
        let bytes = Self.head(ofSize: RawRequestHead.maximumSize - 1)
        #expect(Self.verdict(bytes) == .head(size: RawRequestHead.maximumSize - 1, body: 0, delimited: true, plainGet: false))
    }

    /// Was read: the limit let a blank line end at byte `maximumSize` itself.
    @Test func headOfTheLimitOrMoreIsUnreadable() {
        #expect(Self.verdict(Self.head(ofSize: RawRequestHead.maximumSize)) == .unreadable)
        #expect(Self.verdict(Self.head(ofSize: RawRequestHead.maximumSize + 1)) == .unreadable)
        #expect(Self.verdict(Self.head(ofSize: 3 * RawRequestHead.maximumSize)) == .unreadable)
    }

    @Test func overLongLineIsUnreadableBeforeItEnds() {
        let line = Array("GET /a HTTP/1.1\r\nX-Pad: ".utf8)
        let short = line + [UInt8](repeating: UInt8(ascii: "a"), count: RawRequestHead.maximumSize - 1 - line.count)
        #expect(Self.verdict(short) == .incomplete)
        #expect(Self.verdict(short + [UInt8(ascii: "a")]) == .unreadable)
        #expect(Self.verdict(short + Array("\r\n\r\n".utf8)) == .unreadable)
        let target = "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n"
        #expect(Self.verdict(target) == .unreadable)
    }

    // MARK: Heads in pieces

    @Test func incompleteHeadNeedsMoreBytes() {
        for text in ["", "G", "GET /a HTTP/1.1", "GET /a HTTP/1.1\r\n", "GET /a HTTP/1.1\r\nHost: x\r\n",
                     "GET /a HTTP/1.1\r\nHost: x\r\n\r"] {
            #expect(Self.verdict(text) == .incomplete, "\(text.debugDescription)")
        }
    }

    /// Three pipelined requests, a GET, a PUT with a body and a HEAD, as `InlineGetHandler`
    /// reads them.
    static let pipeline = Array((get() + "PUT /a.vcf HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
        + get(method: "HEAD")).utf8)

    static let pipelineVerdicts: [Verdict] = [
        delimited(get(), plainGet: true),
        .head(size: "PUT /a.vcf HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n".utf8.count, body: 5, delimited: true,
              plainGet: false),
        delimited(get(method: "HEAD"), plainGet: true),
    ]

    /// The verdicts on each request of `chunks` read one after the other the way
    /// `InlineGetHandler.channelRead` does: a head's start is held until more bytes come and
    /// then scanned again with `checked`, a body is skipped, reading stops at the first head
    /// that is unreadable or not delimited.
    static func readAsTheHandlerDoes(_ chunks: [[UInt8]]) -> [Verdict] {
        var verdicts: [Verdict] = []
        var pending: [UInt8] = [], bodyRemaining = 0
        for chunk in chunks {
            var input = pending + chunk
            var checked = pending.count
            pending = []
            while !input.isEmpty {
                if bodyRemaining > 0 {
                    let count = min(bodyRemaining, input.count)
                    input.removeFirst(count)
                    bodyRemaining -= count
                    continue
                }
                let verdict = verdict(input, checked: checked)
                checked = 0
                switch verdict {
                case .incomplete:
                    pending = input
                    input = []
                case .unreadable, .head(_, _, false, _):
                    return verdicts + [verdict]
                case .head(let size, let body, true, _):
                    verdicts.append(verdict)
                    bodyRemaining = size + body
                }
            }
        }
        return verdicts + (pending.isEmpty ? [] : [.incomplete])
    }

    @Test func pipelinedRequestsSplitAtEveryByteReadTheSame() {
        #expect(Self.readAsTheHandlerDoes([Self.pipeline]) == Self.pipelineVerdicts)
        for split in 0...Self.pipeline.count {
            let chunks = [Array(Self.pipeline[..<split]), Array(Self.pipeline[split...])]
            #expect(Self.readAsTheHandlerDoes(chunks) == Self.pipelineVerdicts, "split at \(split)")
        }
        #expect(Self.readAsTheHandlerDoes(Self.pipeline.map { [$0] }) == Self.pipelineVerdicts, "a byte at a time")
    }

    @Test func pipelinedRequestCutShortIsIncomplete() {
        let cut = Array(Self.pipeline.dropLast())
        #expect(Self.readAsTheHandlerDoes([cut]) == Array(Self.pipelineVerdicts.dropLast()) + [.incomplete])
    }

    @Test func pipelineStopsAtTheFirstRequestItCannotDelimit() {
        let post = "POST /a HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        let smuggled = Array((post + "0\r\n\r\n" + Self.get()).utf8)
        let verdicts = Self.readAsTheHandlerDoes([Self.pipeline + smuggled])
        #expect(verdicts.count == 4)
        #expect(Array(verdicts.prefix(3)) == Self.pipelineVerdicts)
        #expect(verdicts.last == Self.undelimited(post, body: 5))
    }

    /// A scan resumed from where an incomplete one stopped gives the verdict of a scan from
    /// the start, whatever the split, including splits inside the final CRLF CRLF and a bare
    /// CR or LF just before or after the split.
    @Test func resumedScanAgreesWithAScanFromTheStart() {
        let heads = [
            Self.get(), "PUT /a HTTP/1.1\r\nContent-Length: 5\r\n\r\n", "GET /a HTTP/1.1\r\nX: a\rb\r\n\r\n",
            "GET /a HTTP/1.1\r\nX: a\nb\r\n\r\n", "GET /a HTTP/1.1\r\n\n\r\n", "GET /a HTTP/1.1\r\nX: a\r\n \r\n\r\n",
        ]
        for text in heads {
            let bytes = Array(text.utf8)
            let whole = Self.verdict(bytes)
            for split in 0...bytes.count where Self.verdict(Array(bytes[..<split])) == .incomplete {
                #expect(Self.verdict(bytes, checked: split) == whole, "\(text.debugDescription) split at \(split)")
            }
        }
    }
}
