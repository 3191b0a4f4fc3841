import Testing
@testable import VCard

@Suite struct ValidatorTests {
    private func validationError(_ text: String, requireUID: Bool = true) throws -> VCardError? {
        let parsed = try parseOne(text)
        do {
            try VCardValidator.validate(parsed, requireUID: requireUID)
            return nil
        } catch {
            return error
        }
    }

    @Test func acceptsACompleteCard() throws {
        #expect(try validationError(card("4.0", "FN:A", "UID:1")) == nil)
        #expect(try validationError(card("3.0", "FN:", "UID:1")) == nil)
    }

    @Test func missingFNIsNamed() throws {
        let error = try #require(try validationError(card("3.0", "N:A;B;;;", "UID:1")))
        #expect(error.message.contains("FN"))
        #expect(try validationError(card("4.0", "UID:1"))?.message.contains("FN") == true)
        #expect(try validationError(card("2.1", "N:A"), requireUID: false) == nil)
    }

    @Test func missingUIDOnlyWhenRequired() throws {
        #expect(try validationError(card("3.0", "FN:A"))?.message.contains("UID") == true)
        #expect(try validationError(card("3.0", "FN:A", "UID:"))?.message.contains("UID") == true)
        #expect(try validationError(card("3.0", "FN:A"), requireUID: false) == nil)
    }

    @Test func differingVersionPropertiesInABuiltCardAreRejected() {
        let built = VCard(version: .v40, properties: [
            VCardProperty(name: "VERSION", rawValue: "4.0", line: 2), VCardProperty(name: "FN", rawValue: "A"),
            VCardProperty(name: "VERSION", rawValue: "3.0", line: 6),
        ])
        #expect(throws: VCardError.self) { try VCardValidator.validate(built, requireUID: false) }
        do {
            try VCardValidator.validate(built, requireUID: false)
        } catch {
            #expect(error.line == 6)
            #expect(error.message.contains("VERSION"))
        }
    }
}
