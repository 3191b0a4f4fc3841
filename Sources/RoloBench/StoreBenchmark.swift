import Foundation
import RoloSQLite
import RoloStore

/// `RoloBench store [count...]`: import speed, incremental sync, listing, search, file size
/// and resident memory of `SQLiteStore` on generated cards (default 10 000 and 100 000).
func runStoreBenchmark(_ arguments: [String]) async {
    let counts = arguments.compactMap(Int.init).isEmpty ? [10_000, 100_000] : arguments.compactMap(Int.init)
    let tuning = benchmarkTuning()
    report("tuning", "writer cache \(tuning.writerCacheKiB) KiB, reader cache \(tuning.readerCacheKiB) KiB, "
           + "mmap \(tuning.mmapBytes) B, at most \(tuning.maximumReaders) readers")
    do {
        for count in counts { try await benchmarkStore(cardCount: count, tuning: tuning) }
    } catch {
        FileHandle.standardError.write(Data("store benchmark failed: \(error)\n".utf8))
        exit(1)
    }
    report("peak RSS of this benchmark process (it holds the generated cards)", "\(peakResidentMiB()) MiB")
}

private func benchmarkStore(cardCount: Int, tuning: SQLiteStore.Tuning) async throws {
    // ROLO_BENCH_KEEP=folder keeps the databases for inspection.
    let keep = ProcessInfo.processInfo.environment["ROLO_BENCH_KEEP"]
    let store = try keep.map { try SQLiteStore(path: "\($0)/bench-\(cardCount).sqlite", tuning: tuning) }
        ?? SQLiteStore.temporary(tuning: tuning)
    defer { try? store.close() }
    try await store.createUser(name: "bench", password: "bench")
    let book = try await store.collection(owner: "bench", path: ["default"])!
    try await benchmarkImport(store: store, book: book, cardCount: cardCount)

    let before = try await store.collection(id: book.id)!.syncSeq
    for index in 0..<14 {
        let card = generatedCard(index * 7, edit: "edited")
        _ = try await store.putResource(collectionID: book.id, name: card.name, data: card.data, contentType: card.contentType,
                                        card: card.card, precondition: .none)
    }
    try await store.deleteResource(collectionID: book.id, name: generatedCard(cardCount - 1).name, precondition: .none)
    var changeCount = 0
    let changesTime = try await measureBest(runs: 20) {
        changeCount = try await store.changes(collectionID: book.id, since: before, limit: nil).changes.count
    }
    report("changes(since:) for \(changeCount) changes on \(cardCount)", "\(milliseconds(changesTime)) ms")

    for (what, time) in try await serveReads(store: store, book: book, cardCount: cardCount, runs: 3) {
        report(what, "\(milliseconds(time)) ms")
    }

    try await store.checkpoint()
    let size = ["", "-wal"].compactMap {
        (try? FileManager.default.attributesOfItem(atPath: store.path + $0)[.size] as? NSNumber)?.int64Value
    }.reduce(0, +)
    report("database file size for \(cardCount) cards", "\(size / 1_048_576) MiB (\(size / Int64(cardCount)) B/card)")
    report("peak RSS of a fresh process opening the \(cardCount)-card store, serving the reads above and 200 puts",
           try servingProcessPeak(path: store.path, cardCount: cardCount))
}

/// What a server does with a big book, each timed (best of `runs`): list it, sync it from
/// scratch, search it, fetch 1000 cards.
private func serveReads(store: SQLiteStore, book: CollectionInfo, cardCount: Int, runs: Int) async throws -> [(String, Double)] {
    var figures: [(String, Double)] = []
    var listed = 0
    let listTime = try await measureBest(runs: runs) { listed = try await store.listResources(collectionID: book.id).count }
    figures.append(("listResources of \(listed)", listTime))

    let queries: [(String, IndexPredicate)] = [
        ("contains 'mith' in FN, unicode-casemap", .textMatch(property: "FN", text: "MITH 12", collation: .unicodeCasemap, match: .contains, negate: false)),
        ("equals EMAIL, ascii-casemap", .textMatch(property: "EMAIL", text: "PERSON4242@EXAMPLE.COM", collation: .asciiCasemap, match: .equals, negate: false)),
        ("starts-with FN, unicode-casemap", .textMatch(property: "FN", text: "zoë", collation: .unicodeCasemap, match: .startsWith, negate: false)),
        ("ends-with TEL, octet", .textMatch(property: "TEL", text: "4242", collation: .octet, match: .endsWith, negate: false)),
    ]
    for (label, predicate) in queries {
        var hits = 0
        let time = try await measureBest(runs: runs + 2) {
            hits = try await store.query(collectionID: book.id, predicate: predicate, limit: nil).count
        }
        figures.append(("query \(label) on \(cardCount) (\(hits) hits)", time))
    }

    var synced = 0
    let initialSyncTime = try await measureBest(runs: runs) {
        synced = try await store.changes(collectionID: book.id, since: 0, limit: nil).changes.count
    }
    figures.append(("changes(since: 0) (initial sync) of \(synced)", initialSyncTime))
    let multigetNames = (0..<min(1000, cardCount)).map { generatedCard($0 * max(cardCount / 1000, 1)).name }
    var fetched = 0
    let multigetTime = try await measureBest(runs: runs) {
        fetched = try await store.resources(collectionID: book.id, names: multigetNames).count
    }
    figures.append(("resources(names:) of \(fetched) (multiget)", multigetTime))
    return figures
}

/// Runs `RoloBench store-serve` on the database and returns what it printed: the peak
/// resident memory of a process that only opens the store and serves the reads.
private func servingProcessPeak(path: String, cardCount: Int) throws -> String {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    child.arguments = ["store-serve", path, String(cardCount)]
    let output = Pipe()
    child.standardOutput = output
    try child.run()
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    return String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// `RoloBench store-serve DBPATH COUNT`: opens the store a benchmark left (same tuning),
/// serves its reads twice, puts 200 edited cards and prints VmHWM, the most this process
/// ever had resident.
func runStoreServe(_ arguments: [String]) async {
    guard arguments.count == 2, let cardCount = Int(arguments[1]) else {
        FileHandle.standardError.write(Data("usage: RoloBench store-serve DBPATH COUNT\n".utf8))
        exit(2)
    }
    do {
        let store = try SQLiteStore(path: arguments[0], tuning: benchmarkTuning())
        let book = try await store.collection(owner: "bench", path: ["default"])!
        _ = try await serveReads(store: store, book: book, cardCount: cardCount, runs: 2)
        // Edits spread over the book, so the writer's cache fills as a long-running server's would.
        for index in stride(from: 0, to: cardCount, by: max(cardCount / 200, 1)) {
            let card = generatedCard(index, edit: "served")
            _ = try await store.putResource(collectionID: book.id, name: card.name, data: card.data,
                                            contentType: card.contentType, card: card.card, precondition: .none)
        }
        print("\(peakResidentMiB()) MiB")
        try store.close()
    } catch {
        FileHandle.standardError.write(Data("store-serve failed: \(error)\n".utf8))
        exit(1)
    }
}

/// Imports `cardCount` generated cards in one transaction and reports the speed; the cards
/// are freed on return.
private func benchmarkImport(store: SQLiteStore, book: CollectionInfo, cardCount: Int) async throws {
    let cards = (0..<cardCount).map { generatedCard($0) }
    let bytes = cards.reduce(0) { $0 + $1.data.count }
    let cpuBefore = processCPUSeconds()
    let importTime = try await measure {
        try await store.importCards(collectionID: book.id, cards: cards, batchSize: cardCount, progress: nil)
        await store.importFinished(collectionID: book.id, cards: cards.count)
    }
    let importCPU = processCPUSeconds() - cpuBefore
    // The machine is shared: CPU time says what the import costs, wall time what it took.
    report("import \(cardCount) cards (\(bytes / cardCount) B avg, one transaction)",
           "\(Int(Double(cardCount) / importTime)) cards/s wall (\(milliseconds(importTime)) ms), "
           + "\(Int(Double(cardCount) / importCPU)) cards/s of CPU (\(milliseconds(importCPU)) ms)")
}

/// `RoloBench store-puts [COUNT] [WRITERS]`: COUNT generated cards (default 10 000) put by
/// WRITERS concurrent tasks (default 8), one `putResource` each, as a PUT import does: once
/// with group commit, then with one transaction (and fsync) per put, on fresh stores.
func runStorePutsBenchmark(_ arguments: [String]) async {
    let count = arguments.first.flatMap(Int.init) ?? 10_000
    let writers = arguments.count > 1 ? Int(arguments[1]) ?? 8 : 8
    let cards = (0..<count).map { generatedCard($0) }
    do {
        for perCommit in [SQLiteStore.Tuning.default.maximumWritesPerCommit, 1] {
            let store = try SQLiteStore.temporary(tuning: SQLiteStore.Tuning(maximumWritesPerCommit: perCommit))
            defer { try? store.close() }
            try await store.createUser(name: "bench", password: "bench")
            let book = try await store.collection(owner: "bench", path: ["default"])!
            let seconds = try await measure {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<writers {
                        group.addTask {
                            for card in cards[writer...].striding(by: writers) {
                                _ = try await store.putResource(collectionID: book.id, name: card.name, data: card.data,
                                                                contentType: card.contentType, card: card.card,
                                                                precondition: .ifNoneMatchAny)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            report("\(count) puts by \(writers) tasks, at most \(perCommit) per commit",
                   String(format: "%.0f cards/s", Double(count) / seconds))
        }
    } catch {
        FileHandle.standardError.write(Data("store-puts benchmark failed: \(error)\n".utf8))
        exit(1)
    }
}

extension ArraySlice {
    /// Every `step`-th element from the start.
    fileprivate func striding(by step: Int) -> [Element] {
        stride(from: startIndex, to: endIndex, by: step).map { self[$0] }
    }
}

/// `SQLiteStore.Tuning.default`, or the sizes in ROLO_BENCH_TUNING
/// (`writer=KiB,reader=KiB,mmap=bytes,readers=N,commit=N`, any subset) to compare settings.
private func benchmarkTuning() -> SQLiteStore.Tuning {
    var tuning = SQLiteStore.Tuning.default
    for setting in (ProcessInfo.processInfo.environment["ROLO_BENCH_TUNING"] ?? "").split(separator: ",") {
        let parts = setting.split(separator: "=")
        guard parts.count == 2, let value = Int(parts[1]) else { continue }
        switch parts[0] {
        case "writer": tuning.writerCacheKiB = value
        case "reader": tuning.readerCacheKiB = value
        case "mmap": tuning.mmapBytes = value
        case "readers": tuning.maximumReaders = value
        case "commit": tuning.maximumWritesPerCommit = value
        default: continue
        }
    }
    return tuning
}

/// VmHWM of this process in MiB: the most it has had resident since it started.
private func peakResidentMiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
}

/// A realistic card of about 600 bytes with the properties the DAV layer indexes.
func generatedCard(_ index: Int, edit: String = "") -> CardImport {
    let first = ["Anna", "Zoë", "Élodie", "Bob", "Jürgen", "Chen", "Fatima", "Oskar"][index % 8]
    let fn = "\(first) Smith \(index)\(edit)"
    let uid = "bench-\(index)-0000-4000-8000-\(String(index, radix: 16))"
    let email = "person\(index)@example.com"
    let tel = "+44 20 7946 \(String(format: "%04d", index % 10_000))"
    let org = "Company \(index % 1000)"
    let text = """
        BEGIN:VCARD\r
        VERSION:4.0\r
        UID:urn:uuid:\(uid)\r
        FN:\(fn)\r
        N:Smith \(index);\(first);;;\r
        EMAIL;TYPE=work:\(email)\r
        TEL;TYPE=cell:\(tel)\r
        ORG:\(org)\r
        ADR;TYPE=home:;;\(index) High Street;London;;SW1A 1AA;United Kingdom\r
        NOTE:Generated card number \(index) for the store benchmark, with a note of moderate length.\r
        CATEGORIES:friends,bench\r
        REV:20260101T000000Z\r
        END:VCARD\r

        """
    let entries = [("UID", uid), ("FN", fn), ("N", "Smith \(index);\(first)"), ("EMAIL", email), ("TEL", tel),
                   ("ORG", org), ("CATEGORIES", "friends"), ("CATEGORIES", "bench")]
    // The list row `CardListingFields(card:)` would give this card, without parsing it.
    let listing = CardListingFields(
        displayName: fn, sortKey: CardListingFields.sortKey(fn), organization: org, email: email, phone: tel, hasPhoto: false,
        searchText: ([fn, "\(first) Smith \(index)", email, tel, tel.filter(\.isNumber), org]
            + ["friends", "bench"].map { String(CardListingFields.categoryMark) + $0 })
            .map(CaseFolding.search).joined(separator: "\n"))
    return CardImport(name: "\(uid).vcf", data: Data(text.utf8),
                      card: CardMetadata(uid: uid, kind: "individual",
                                         indexEntries: entries.map { IndexEntry(property: $0.0, value: $0.1) }, members: [],
                                         listing: listing))
}

private func measure(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return (ContinuousClock.now - start).inSeconds
}

private func measureBest(runs: Int, _ body: () async throws -> Void) async rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<runs { best = min(best, try await measure(body)) }
    return best
}

private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

private func milliseconds(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }

private func report(_ what: String, _ figure: String) { print("store: \(what): \(figure)") }

/// `RoloBench store-crash-writer DBPATH [WRITERS]`: the child process of the durability
/// tests. WRITERS tasks (default 1) put cards `crash-N.vcf` (body `crashCardBody(N)`; writer
/// w takes N = w, w + WRITERS, ...) until killed, each printing a name to stdout only after
/// its put returned, unbuffered.
func runStoreCrashWriter(_ arguments: [String]) async {
    guard let path = arguments.first, let writers = arguments.count > 1 ? Int(arguments[1]) : 1, writers > 0 else {
        FileHandle.standardError.write(Data("usage: RoloBench store-crash-writer DBPATH [WRITERS]\n".utf8))
        exit(2)
    }
    do {
        let store = try SQLiteStore(path: path, bcryptCost: 4)
        try await store.createUser(name: "crash", password: "crash")
        let book = try await store.collection(owner: "crash", path: ["default"])!
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for index in stride(from: writer, to: Int.max, by: writers) {
                        try await putCrashCard(index, store: store, collectionID: book.id)
                    }
                }
            }
            try await group.waitForAll()
        }
    } catch {
        FileHandle.standardError.write(Data("crash writer failed: \(error)\n".utf8))
        exit(1)
    }
}

private func putCrashCard(_ index: Int, store: SQLiteStore, collectionID: Int64) async throws {
    let name = "crash-\(index).vcf"
    let uid = "crash-\(index)"
    _ = try await store.putResource(
        collectionID: collectionID, name: name, data: Data(crashCardBody(index).utf8), contentType: "text/vcard",
        card: CardMetadata(uid: uid, kind: "individual",
                           indexEntries: [IndexEntry(property: "UID", value: uid), IndexEntry(property: "FN", value: "Crash \(index)")],
                           members: []),
        precondition: .ifNoneMatchAny)
    FileHandle.standardOutput.write(Data((name + "\n").utf8))
}

/// The body the crash writer stores for card `index`; the test rebuilds it to compare.
func crashCardBody(_ index: Int) -> String {
    "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:crash-\(index)\r\nFN:Crash \(index)\r\nNOTE:\(String(repeating: "x", count: index % 500))\r\nEND:VCARD\r\n"
}
