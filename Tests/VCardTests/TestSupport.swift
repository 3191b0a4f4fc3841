@testable import VCard

/// Parses text that must hold exactly one card.
func parseOne(_ text: String) throws -> VCard {
    let cards = try VCardParser.parse(text)
    guard cards.count == 1 else { throw VCardError("expected one card, got \(cards.count)") }
    return cards[0]
}

func parseOne(_ bytes: [UInt8]) throws -> VCard {
    let cards = try VCardParser.parse(bytes)
    guard cards.count == 1 else { throw VCardError("expected one card, got \(cards.count)") }
    return cards[0]
}

/// The error a parse throws, or nil when it succeeds.
func parseError(_ text: String) -> VCardError? {
    parseError(Array(text.utf8))
}

func parseError(_ bytes: [UInt8]) -> VCardError? {
    do {
        _ = try VCardParser.parse(bytes)
        return nil
    } catch {
        return error
    }
}

/// A card with its `line` fields zeroed, for comparing a parse with a re-parse.
func withoutLines(_ card: VCard) -> VCard {
    var copy = card
    copy.line = 0
    for index in copy.properties.indices { copy.properties[index].line = 0 }
    return copy
}

/// Wraps property lines in BEGIN/VERSION/END with CRLF.
func card(_ version: String = "3.0", _ lines: String...) -> String {
    (["BEGIN:VCARD", "VERSION:\(version)"] + lines + ["END:VCARD", ""]).joined(separator: "\r\n")
}
