import Foundation
import VCard

/// `RoloBench vcard [--corpus DIR] [--cards N] [--rounds R]`: parse and write throughput
/// (cards/s, one thread) for the shared corpus, repeated, and for N generated ~2 KB cards.
func runVCardBenchmark(_ arguments: [String]) {
    var corpusPath = "../shared/vcards"
    var generatedCount = 10_000
    var rounds = 5
    var index = 0
    while index < arguments.count {
        let value = index + 1 < arguments.count ? arguments[index + 1] : ""
        switch arguments[index] {
        case "--corpus": corpusPath = value
        case "--cards": generatedCount = Int(value) ?? generatedCount
        case "--rounds": rounds = Int(value) ?? rounds
        default:
            FileHandle.standardError.write(Data("usage: RoloBench vcard [--corpus DIR] [--cards N] [--rounds R]\n".utf8))
            exit(2)
        }
        index += 2
    }

    let corpus = loadCorpus(corpusPath)
    if corpus.isEmpty {
        print("vcard corpus: skipped (\(corpusPath) not found)")
    } else {
        let cardsPerPass = corpus.reduce(0) { $0 + ((try? VCardParser.parse($1).count) ?? 0) }
        let bytes = corpus.reduce(0) { $0 + $1.count }
        let repeats = max(1, 20_000 / max(cardsPerPass, 1))
        measure("corpus", streams: corpus, cardsPerPass: cardsPerPass, bytesPerPass: bytes, passes: repeats, rounds: rounds)
    }

    let generated = Array(VCardWriter.write((0..<generatedCount).map(generatedCard)).utf8)
    measure("generated", streams: [generated], cardsPerPass: generatedCount, bytesPerPass: generated.count, passes: 1, rounds: rounds)
}

/// Best of `rounds` for parse, write and 3.0 -> 4.0 conversion.
private func measure(_ label: String, streams: [[UInt8]], cardsPerPass: Int, bytesPerPass: Int, passes: Int, rounds: Int) {
    let parsedCards = streams.flatMap { (try? VCardParser.parse($0)) ?? [] }
    let clock = ContinuousClock()
    var bestParse = Duration.seconds(1_000_000)
    var bestWrite = bestParse
    var bestConvert = bestParse
    var sink = 0
    for _ in 0..<rounds {
        let parse = clock.measure {
            for _ in 0..<passes {
                for stream in streams { sink &+= (try? VCardParser.parse(stream).count) ?? 0 }
            }
        }
        let write = clock.measure {
            for _ in 0..<passes {
                for card in parsedCards { sink &+= VCardWriter.write(card).utf8.count }
            }
        }
        let convert = clock.measure {
            for _ in 0..<passes {
                for card in parsedCards { sink &+= VCardConverter.convert(card, to: .v40).properties.count }
            }
        }
        bestParse = min(bestParse, parse)
        bestWrite = min(bestWrite, write)
        bestConvert = min(bestConvert, convert)
    }
    let cards = Double(cardsPerPass * passes)
    func rate(_ duration: Duration) -> String {
        String(format: "%9.0f cards/s", cards / duration.inSeconds)
    }
    func megabytes(_ duration: Duration) -> String {
        String(format: "%6.1f MB/s", Double(bytesPerPass * passes) / duration.inSeconds / 1e6)
    }
    print("vcard \(label): \(cardsPerPass * passes) cards, \(bytesPerPass * passes / 1024) KiB, avg \(bytesPerPass / max(cardsPerPass, 1)) B/card")
    print("  parse    \(rate(bestParse))  \(megabytes(bestParse))")
    print("  write    \(rate(bestWrite))")
    print("  convert  \(rate(bestConvert))  (to 4.0)")
    if sink == 42 { print("") }
}

private func loadCorpus(_ path: String) -> [[UInt8]] {
    let directory = URL(fileURLWithPath: path)
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
    return names.filter { $0.hasSuffix(".vcf") }.sorted().compactMap { name in
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)) else { return nil }
        let bytes = [UInt8](data)
        return (try? VCardParser.parse(bytes)) == nil ? nil : bytes
    }
}

/// An Apple-shaped 3.0 card of about 2 KB with grouped labels, escapes and non-ASCII text.
private func generatedCard(_ number: Int) -> VCard {
    let given = ["Maja", "Łukasz", "Siobhán", "Chidi", "Ingrid", "渡辺", "Nguyễn", "Zoë"][number % 8]
    let family = ["Lindqvist", "Fernández", "O'Connell", "Okafor", "Haugen", "健", "Thị Lan", "Müller"][number / 8 % 8]
    var properties = [
        VCardProperty(name: "VERSION", rawValue: "3.0"),
        VCardProperty(name: "PRODID", rawValue: "-//Apple Inc.//iPhone OS 17.4//EN"),
        VCardProperty(name: "N", components: [family, given, "", "", ""]),
        VCardProperty(name: "FN", text: "\(given) \(family)"),
        VCardProperty(name: "ORG", components: ["Nordljus Design AB", "Product; Research"]),
        VCardProperty(name: "TITLE", text: "Head of Research, Nordics"),
        VCardProperty(group: "item1", name: "EMAIL", parameters: [VCardParameter(name: "type", values: ["INTERNET"]), VCardParameter(name: "type", values: ["pref"])], rawValue: "person\(number)@nordljus.example"),
        VCardProperty(group: "item1", name: "X-ABLabel", rawValue: "_$!<Work>!$_"),
        VCardProperty(name: "EMAIL", parameters: [VCardParameter(name: "type", values: ["INTERNET", "HOME"])], rawValue: "p\(number)@mail.example"),
        VCardProperty(name: "TEL", parameters: [VCardParameter(name: "type", values: ["CELL", "VOICE", "pref"])], rawValue: "+46 70 \(100 + number % 900) 45 67"),
        VCardProperty(name: "TEL", parameters: [VCardParameter(name: "type", values: ["IPHONE", "CELL", "VOICE"])], rawValue: "+46 70 765 43 21"),
        VCardProperty(name: "TEL", parameters: [VCardParameter(name: "type", values: ["HOME", "VOICE"])], rawValue: "+46 8 123 456 78"),
        VCardProperty(name: "TEL", parameters: [VCardParameter(name: "type", values: ["WORK", "FAX"])], rawValue: "+46 8 555 010 99"),
        VCardProperty(group: "item2", name: "TEL", rawValue: "+46 70 555 12 12"),
        VCardProperty(group: "item2", name: "X-ABLabel", rawValue: "Gym"),
        VCardProperty(group: "item3", name: "ADR", parameters: [VCardParameter(name: "type", values: ["HOME", "pref"])], components: ["", "", "Sveavägen 12\nLägenhet 1102", "Stockholm", "", "113 50", "Sweden"]),
        VCardProperty(group: "item3", name: "X-ABADR", rawValue: "se"),
        VCardProperty(group: "item4", name: "ADR", parameters: [VCardParameter(name: "type", values: ["WORK"])], components: ["", "", "Birger Jarlsgatan 7", "Stockholm", "", "114 34", "Sweden"]),
        VCardProperty(group: "item4", name: "X-ABADR", rawValue: "se"),
        VCardProperty(group: "item5", name: "URL", parameters: [VCardParameter(name: "type", values: ["pref"])], rawValue: "https://nordljus.example/people/\(number)"),
        VCardProperty(group: "item5", name: "X-ABLabel", rawValue: "_$!<HomePage>!$_"),
        VCardProperty(name: "BDAY", parameters: [VCardParameter(name: "X-APPLE-OMIT-YEAR", values: ["1604"])], rawValue: "1604-03-15"),
        VCardProperty(group: "item6", name: "X-ABDATE", parameters: [VCardParameter(name: "type", values: ["pref"])], rawValue: "2014-08-16"),
        VCardProperty(group: "item6", name: "X-ABLabel", rawValue: "_$!<Anniversary>!$_"),
        VCardProperty(group: "item7", name: "X-ABRELATEDNAMES", rawValue: "Jonas Lindqvist"),
        VCardProperty(group: "item7", name: "X-ABLabel", rawValue: "_$!<Spouse>!$_"),
        VCardProperty(name: "X-SOCIALPROFILE", parameters: [VCardParameter(name: "type", values: ["twitter"]), VCardParameter(name: "x-user", values: ["user\(number)"])], rawValue: "http://twitter.com/user\(number)"),
        VCardProperty(name: "IMPP", parameters: [VCardParameter(name: "X-SERVICE-TYPE", values: ["Skype"]), VCardParameter(name: "type", values: ["HOME", "pref"])], rawValue: "skype:user\(number)"),
        VCardProperty(name: "CATEGORIES", list: ["Friends", "Hiking, Club", "Work"]),
        VCardProperty(name: "NOTE", text: String(repeating: "Prefers Signal; allergic to nuts, bring snacks.\nMet at Øresund conference — 日本語も話せます. ", count: 6)),
        VCardProperty(name: "UID", rawValue: "2A7B9C1D-3E4F-4A5B-8C6D-\(String(format: "%012d", number))"),
        VCardProperty(name: "REV", rawValue: "2024-03-11T09:43:51Z"),
    ]
    properties.append(VCardProperty(name: "X-PHONETIC-FIRST-NAME", rawValue: given))
    return VCard(version: .v30, properties: properties)
}
