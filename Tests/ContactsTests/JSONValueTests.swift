import Contacts
import Testing

struct JSONValueTests {
    @Test func serialisesWithSortedKeysAndEscapes() {
        let value = JSONValue.object(["b": .array([.number(1), .bool(true), .null]), "a": .string("q\"\\\n\u{1}é")])
        #expect(value.serialized(pretty: false) == #"{"a":"q\"\\\n\u0001é","b":[1,true,null]}"#)
        #expect(value.serialized(pretty: true) == "{\n  \"a\": \"q\\\"\\\\\\n\\u0001é\",\n  \"b\": [\n    1,\n    true,\n    null\n  ]\n}")
    }

    @Test func parsesWhatItWrites() throws {
        let value = JSONValue.object([
            "s": .string("ü 🙂 \\ \" /"), "n": .number(204800), "e": .array([]), "o": .object([:]), "f": .bool(false),
        ])
        #expect(try JSONValue(parsing: value.serialized(pretty: true)) == value)
        #expect(try JSONValue(parsing: #"{"x": "\ud83d\ude42\u00e9"}"#) == .object(["x": .string("🙂é")]))
    }

    @Test func rejectsBrokenDocuments() {
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: #"{"a": }"#) }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: #"[1, 2"#) }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: #""open"#) }
    }
}
