import Authorization
import CardIndexing
import Contacts
import Foundation
import RoloStore
import VCard

extension WebApp {
    // MARK: Import

    /// `GET …/import`.
    func importPage(_ context: PageContext, result: [String: Any]? = nil, error: String? = nil, status: Int = 200) async throws -> WebResponse {
        let book = try context.currentBook
        var model = try await pageModel(context, title: "Import")
        model["importPage"] = [
            "bookName": book.displayName, "action": URLs.bookPage(base, book.slug, "import"),
            "bookURL": URLs.book(base, book.slug), "result": result ?? false, "error": error ?? false,
        ] as [String: Any]
        return .html(renderer.render("page", model), status: status)
    }

    enum Collision: String { case skip, replace, both }

    /// `POST …/import` (multipart: `file`, `collision`): every card read leniently like
    /// `rolo import` (`CardImporter`), then written in batches through the store; a summary.
    func importCards(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        guard let file = context.form.file("file") else {
            return try await importPage(context, error: "Choose a .vcf file.", status: 400)
        }
        guard file.data.count <= configuration.maxImportSize else {
            return try await importPage(context, error: "The file is larger than 50 MB.", status: 413)
        }
        let collision = Collision(rawValue: context.form["collision"] ?? "") ?? .skip
        let split = CardImporter.split([UInt8](file.data))
        let blocks = split.cards.map(\.bytes)
        guard !blocks.isEmpty else {
            return try await importPage(context, error: "The file holds no vCard (BEGIN:VCARD … END:VCARD).", status: 400)
        }
        var created = 0, updated = 0, skipped = 0
        var failures: [(card: String, reason: String)] = []
        // A card the file ends inside is counted as failed, not dropped in silence.
        if let error = split.unterminatedError { failures.append(("The card on line \(error.line ?? 1)", error.message)) }
        var pending: [(label: String, write: CardBatchWrite, replaces: Bool)] = []
        var namesInFile: [String: String] = [:]  // UID -> name, for UIDs the file repeats
        let fresh = try await store.collection(id: book.id)?.syncSeq == 0

        func flush() async throws {
            guard !pending.isEmpty else { return }
            do {
                _ = try await writeCards(context, book, pending.map(\.write))
                for entry in pending { if entry.replaces { updated += 1 } else { created += 1 } }
            } catch let exceeded as QuotaExceeded {
                throw exceeded
            } catch {
                // Find the cards at fault one by one; the others go in.
                for entry in pending {
                    do {
                        _ = try await writeCards(context, book, [entry.write])
                        if entry.replaces { updated += 1 } else { created += 1 }
                    } catch let exceeded as QuotaExceeded {
                        throw exceeded
                    } catch StoreError.uidConflict {
                        failures.append((entry.label, "another card of the book has its UID"))
                    } catch StoreError.preconditionFailed {
                        failures.append((entry.label, "a card of that name is already in the book"))
                    } catch {
                        failures.append((entry.label, "could not be stored"))
                    }
                }
            }
            pending.removeAll(keepingCapacity: true)
        }

        // The quota stops the import where it is reached: what went in before stays, and the
        // summary says so.
        var stopped: QuotaExceeded?
        do {
            for (index, block) in blocks.enumerated() {
                let label = Self.importLabel(block, index: index)
                var prepared: CardImporter.PreparedCard
                do {
                    prepared = try CardImporter.prepare(block, maxSize: configuration.maxCardSize)
                } catch {
                    failures.append((label, "\(error)"))
                    continue
                }
                var existing = namesInFile[prepared.uid]
                if existing == nil, !fresh { existing = try await store.resourceName(collectionID: book.id, uid: prepared.uid) }
                var name = CardImporter.resourceName(forUID: prepared.uid)
                var precondition = WritePrecondition.ifNoneMatchAny
                var replaces = false
                if let existing {
                    switch collision {
                    case .skip:
                        skipped += 1
                        continue
                    case .replace:
                        name = existing
                        precondition = .none
                        replaces = true
                    case .both:
                        guard let renamed = Self.withNewUID(prepared) else {
                            failures.append((label, "could not be given a new UID"))
                            continue
                        }
                        prepared = renamed
                        name = CardImporter.resourceName(forUID: prepared.uid)
                    }
                }
                namesInFile[prepared.uid] = name
                pending.append((label, .put(name: name, data: Data(prepared.bytes), contentType: Self.vCardType, card: prepared.metadata,
                                            precondition: precondition, keepPrevious: false), replaces))
                if pending.count >= 200 { try await flush() }
            }
            try await flush()
        } catch let exceeded as QuotaExceeded {
            stopped = exceeded
        }
        let result: [String: Any] = [
            "created": Formatting.grouped(created), "updated": Formatting.grouped(updated),
            "skipped": Formatting.grouped(skipped), "failed": Formatting.grouped(failures.count),
            "hasFailures": !failures.isEmpty,
            "failures": failures.prefix(200).map { ["card": $0.card, "reason": $0.reason] },
            "bookURL": URLs.book(base, book.slug),
        ]
        if let stopped {
            return try await importPage(context, result: result, error: "Import stopped: " + stopped.message
                                        + " The cards counted as created or updated below were imported.", status: 507)
        }
        return try await importPage(context, result: result)
    }

    /// "Card 12 (Ann Example)": the card's place in the file and its FN, for the summary.
    static func importLabel(_ block: [UInt8], index: Int) -> String {
        let text = String(decoding: block.prefix(4096), as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline) {
            let upper = line.uppercased()
            if upper.hasPrefix("FN:") || upper.hasPrefix("FN;") {
                guard let colon = line.firstIndex(of: ":") else { break }
                let name = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if !name.isEmpty { return "Card \(index + 1) (\(name.prefix(60)))" }
            }
        }
        return "Card \(index + 1)"
    }

    /// The same card under a fresh UID (keep both).
    static func withNewUID(_ prepared: CardImporter.PreparedCard) -> CardImporter.PreparedCard? {
        guard var patch = try? CardPatch(bytes: prepared.bytes), let id = patch.ids(named: "UID").first,
              let old = patch.property(id) else { return nil }
        let uid = UUID().uuidString.lowercased()
        patch.replace(id, with: VCardProperty(group: old.group, name: "UID", parameters: old.parameters, rawValue: uid))
        guard let card = try? VCardParser.parse(patch.bytes).first else { return nil }
        var renamed = prepared
        renamed.bytes = patch.bytes
        renamed.uid = uid
        renamed.metadata = CardMetadata(card: card)
        return renamed
    }

    // MARK: Export

    /// `GET …/export`: the whole book, or a selection (`c=` repeated), a group (`group=`),
    /// a category (`category=`) or a search (`q=`), as one text/vcard download, written
    /// page by page.
    func export(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        let request = context.request
        let store = self.store
        let selection = Array(request.queryValues("c").prefix(1000))
        if selection.isEmpty { context.tally.fullDownload() } else { context.tally.read(selection.count) }
        let state = ListState(request)
        var fileName = book.slug
        let body: WebResponse.Body
        if !selection.isEmpty {
            fileName += selection.count == 1 ? "-" + (selection[0].hasSuffix(".vcf") ? String(selection[0].dropLast(4)) : selection[0]) : "-selection"
            let resources = try await store.resources(collectionID: book.id, names: selection)
            guard !resources.isEmpty else { throw WebError.notFound }
            let ordered = selection.compactMap { name in resources.first { $0.info.name == name } }
            body = .bytes(ordered.reduce(into: Data()) { $0.append(Self.exportBytes($1.data)) })
        } else if state.group != nil || state.category != nil || !state.q.isEmpty {
            if let group = state.group { fileName += "-" + (group.hasSuffix(".vcf") ? String(group.dropLast(4)) : group) }
            if let category = state.category { fileName += "-" + category }
            let source = ExportSource(store: store, collectionID: book.id, filter: state.filter,
                                      search: CardListingFields.searchWords(state.q), groupCard: state.group)
            body = .stream { try await source.next() }
        } else {
            let source = ExportSource(store: store, collectionID: book.id, filter: nil, search: [], groupCard: nil)
            body = .stream { try await source.next() }
        }
        let safeName = String(fileName.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.~".contains($0)) ? $0 : "_" }.prefix(80))
        return WebResponse(status: 200, headers: [
            ("Content-Type", "text/vcard; charset=utf-8"),
            ("Content-Disposition", "attachment; filename=\"\(safeName).vcf\""),
            ("Cache-Control", "no-store"),
        ], body: body)
    }

    /// A stored card as it goes into a multi-card file: ending in a line break.
    static func exportBytes(_ data: Data) -> Data {
        guard let last = data.last, last != 0x0A else { return data }
        var copy = data
        copy.append(contentsOf: [0x0D, 0x0A])
        return copy
    }
}

/// The cards of an export, a page at a time: the whole book in name order (`filter` nil),
/// or a list's cards in list order, after the group card itself for a group.
actor ExportSource {
    let store: any WebAppStore
    let collectionID: Int64
    let filter: ListingFilter?
    let search: [String]
    var groupCard: String?
    private var position = ListingPosition.first
    private var after: String?
    private var done = false

    init(store: any WebAppStore, collectionID: Int64, filter: ListingFilter?, search: [String], groupCard: String?) {
        self.store = store; self.collectionID = collectionID; self.filter = filter; self.search = search
        self.groupCard = groupCard
    }

    func next() async throws -> Data? {
        if let name = groupCard {
            groupCard = nil
            if let group = try await store.resource(collectionID: collectionID, name: name) { return WebApp.exportBytes(group.data) }
        }
        while !done {
            var chunk = Data()
            if let filter {
                let page = try await store.cardListings(collectionID: collectionID, filter: filter, search: search, from: position, limit: 100)
                let resources = try await store.resources(collectionID: collectionID, names: page.rows.map(\.name))
                let byName = Dictionary(resources.map { ($0.info.name, $0) }, uniquingKeysWith: { first, _ in first })
                for row in page.rows { if let resource = byName[row.name] { chunk.append(WebApp.exportBytes(resource.data)) } }
                if let next = page.next { position = .after(next) } else { done = true }
            } else {
                let page = try await store.allResources(collectionID: collectionID, after: after, limit: 200)
                for resource in page { chunk.append(WebApp.exportBytes(resource.data)) }
                after = page.last?.info.name
                if page.count < 200 { done = true }
            }
            if !chunk.isEmpty { return chunk }
        }
        return nil
    }
}
