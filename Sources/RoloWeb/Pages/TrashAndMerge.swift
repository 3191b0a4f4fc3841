import CardIndexing
import Contacts
import Foundation
import RoloStore
import VCard

extension WebApp {
    func pageModel(_ context: PageContext, title: String, flash: [String: Any]? = nil) async throws -> [String: Any] {
        var model = context.layout(title: title, flash: flash ?? self.flash(context.request))
        for (key, value) in try await navModel(context) { model[key] = value }
        model["hasSidebar"] = true
        for key in ["trash", "duplicates", "merge", "importPage", "privacyPage", "adminPage", "adminUser", "newPassword",
                    "accountPage", "newBook", "bookSettings", "noBook", "feedsPage", "newFeed", "undoChanges"] {
            model[key] = false
        }
        if let book = context.book {
            model["search"] = ["action": URLs.book(base, book.slug), "q": "", "group": false, "category": false] as [String: Any]
        }
        return model
    }

    // MARK: Trash

    /// `GET …/trash`: what was deleted or merged away in the last 30 days.
    func trashPage(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        let entries = try await store.trash(collectionID: book.id, limit: 200)
        var model = try await pageModel(context, title: "Trash")
        model["trash"] = [
            "bookName": book.displayName, "hasEntries": !entries.isEmpty,
            "entries": entries.map { entry -> [String: Any] in
                [
                    "id": String(entry.id), "displayName": entry.displayName.isEmpty ? entry.name : entry.displayName,
                    "reason": Self.reasonText(entry.reason), "when": Formatting.time(entry.trashed), "iso": Formatting.iso(entry.trashed),
                    "restoreURL": URLs.bookPage(base, book.slug, "trash/restore"),
                    "undoURL": URLs.bookPage(base, book.slug, "undo"),
                    "undoBatch": entry.reason == .merged ? entry.batch : false,
                ]
            },
        ] as [String: Any]
        return .html(renderer.render("page", model))
    }

    static func reasonText(_ reason: TrashReason) -> String {
        switch reason {
        case .deleted: "Deleted"
        case .merged: "Merged into another contact"
        case .replaced: "Version before a merge"
        }
    }

    /// `POST …/trash/restore` (`id`): the same card under the same name, as a new card.
    func restore(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        guard let id = context.form["id"].flatMap(Int64.init), let found = try await store.trashedCard(id: id),
              found.card.collectionID == book.id else { throw WebError.notFound }
        let metadata = try metadata(found.data)
        do {
            _ = try await writeCards(context, book, [
                .put(name: found.card.name, data: found.data, contentType: found.contentType, card: metadata,
                     precondition: .ifNoneMatchAny, keepPrevious: false),
                .dropTrashed(id: id),
            ])
        } catch StoreError.preconditionFailed, StoreError.uidConflict {
            throw WebError.badRequest("A card with this name or UID is in the book again; it cannot be restored beside it. If it came from a merge, undo the merge instead.")
        }
        return .redirect(URLs.card(base, book.slug, found.card.name, query: [("done", "restored")]))
    }

    /// `POST …/undo` (`batch`): undoes a delete or a merge in one batch: merged-away and
    /// deleted cards come back, replaced versions overwrite the version that replaced them
    /// (only that one: a later edit from a phone makes the undo fail instead of losing it).
    func undo(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        guard let batch = context.form["batch"], !batch.isEmpty else { throw WebError.badRequest("Nothing to undo.") }
        let entries = try await store.trash(batch: batch).filter { $0.collectionID == book.id }
        guard !entries.isEmpty else { throw WebError.badRequest("This can no longer be undone.") }
        var writes: [CardBatchWrite] = []
        for entry in entries {
            guard let found = try await store.trashedCard(id: entry.id) else { continue }
            let precondition: WritePrecondition
            if entry.reason == .replaced, let replacedBy = entry.replacedBy {
                precondition = .ifMatch([replacedBy])
            } else {
                precondition = .ifNoneMatchAny
            }
            writes.append(.put(name: entry.name, data: found.data, contentType: found.contentType, card: try metadata(found.data),
                               precondition: precondition, keepPrevious: false))
        }
        // Group cards a merge rewrote are `.replaced` entries too: put back the same way.
        writes += entries.map { .dropTrashed(id: $0.id) }
        do {
            _ = try await writeCards(context, book, writes)
        } catch StoreError.preconditionFailed, StoreError.uidConflict {
            throw WebError.badRequest("A card was changed since, so this cannot be undone automatically. The earlier versions are in the trash.")
        }
        return .redirect(URLs.book(base, book.slug, query: [("done", "undone")]))
    }

    func metadata(_ data: Data) throws -> CardMetadata {
        guard let card = (try? VCardParser.parse([UInt8](data)))?.first else {
            throw WebError.badRequest("A stored card cannot be read.")
        }
        return CardMetadata(card: card)
    }

    // MARK: Duplicates and merge

    /// `GET …/duplicates`: groups of cards that share an e-mail, a phone number or a name.
    func duplicatesPage(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        let groups = try await store.duplicateCandidates(collectionID: book.id, limit: 50)
        let listings = try await store.cardListings(collectionID: book.id, names: Array(Set(groups.flatMap { $0 })))
        let byName = Dictionary(listings.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var model = try await pageModel(context, title: "Duplicates")
        model["duplicates"] = [
            "bookName": book.displayName, "hasGroups": !groups.isEmpty,
            "groups": groups.map { names -> [String: Any] in
                [
                    "cards": names.map { name -> [String: Any] in
                        let fields = byName[name]?.fields
                        return ["displayName": fields?.displayName ?? name, "href": URLs.card(base, book.slug, name),
                                "secondary": fields.flatMap { $0.email ?? $0.phone ?? $0.organization } ?? false]
                    },
                    "mergeURL": URLs.bookPage(base, book.slug, "merge", query: names.map { ("c", $0) }),
                ]
            },
        ] as [String: Any]
        return .html(renderer.render("page", model))
    }

    /// `GET …/merge?c=a&c=b[&survivor=a]`: the person picks the card that stays and any
    /// single value the cards disagree on.
    func mergePage(_ context: PageContext, error: String? = nil) async throws -> WebResponse {
        let book = try context.currentBook
        let names = Array(NSOrderedSet(array: context.request.queryValues("c") + context.form.values("c")).compactMap { $0 as? String }.prefix(10))
        guard names.count >= 2 else { throw WebError.badRequest("Choose at least two contacts to merge.") }
        var cards: [LoadedCard] = []
        for name in names { cards.append(try await loadCard(book, name: name)) }
        let survivorName = context.request.query("survivor") ?? context.form["survivor"] ?? names[0]
        guard let survivorIndex = cards.firstIndex(where: { $0.name == survivorName }) else { throw WebError.badRequest("Unknown survivor.") }
        let ordered = [cards[survivorIndex]] + cards.enumerated().filter { $0.offset != survivorIndex }.map(\.element)
        let conflicts = CardMerge.conflicts(ordered.map(\.card))
        var preview = try? CardPatch(data: ordered[0].data)
        if preview != nil { CardMerge.merge(into: &preview!, others: ordered.dropFirst().map(\.card)) }
        var model = try await pageModel(context, title: "Merge")
        model["merge"] = [
            "error": error ?? false, "formAction": URLs.bookPage(base, book.slug, "merge"), "survivor": survivorName,
            "cancelURL": URLs.bookPage(base, book.slug, "duplicates"),
            "cards": cards.map { card -> [String: Any] in
                let contact = card.contact
                let summary = ([contact.organizationName] + contact.emailAddresses.map(\.value) + contact.phoneNumbers.map(\.value))
                    .filter { !$0.isEmpty }.prefix(3).joined(separator: ", ")
                return ["name": card.name, "etag": card.etag, "displayName": Self.displayName(contact), "summary": summary,
                        "isSurvivor": card.name == survivorName]
            },
            "conflicts": conflicts.map { conflict -> [String: Any] in
                [
                    "property": conflict.property, "label": Self.mergeLabel(conflict.property),
                    "options": conflict.options.enumerated().map { index, option -> [String: Any] in
                        ["card": String(option.card), "value": Self.mergeValue(conflict.property, option.value),
                         "from": Self.displayName(ordered[option.card].contact), "checked": index == 0]
                    },
                ]
            },
            "preview": preview.map { Self.versionFields(Contact(vCard: $0.card), card: $0.card) } ?? [],
        ] as [String: Any]
        return .html(renderer.render("page", model), status: error == nil ? 200 : 409)
    }

    static func mergeLabel(_ property: String) -> String {
        ["FN": "Display name", "N": "Name", "NICKNAME": "Nickname", "ORG": "Organisation", "TITLE": "Job title",
         "BDAY": "Birthday", "NOTE": "Note", "PHOTO": "Photo"][property] ?? property
    }

    static func mergeValue(_ property: String, _ value: String) -> String {
        switch property {
        case "PHOTO": return "A photo"
        case "N", "ORG": return value.split(separator: ";").filter { !$0.isEmpty }.joined(separator: " ")
        default: return value
        }
    }

    /// `POST …/merge`: one batch: the survivor patched with every value of the others
    /// (its previous version kept in the trash), the others trashed as merged, and group
    /// cards that listed them pointed at the survivor. The contact page then offers undo.
    func merge(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        let form = context.form
        let names = form.values("c"), etags = form.values("etag")
        guard names.count >= 2, names.count == etags.count, Set(names).count == names.count,
              let survivorName = form["survivor"], let survivorIndex = names.firstIndex(of: survivorName) else {
            throw WebError.badRequest("The merge form is incomplete.")
        }
        var cards: [LoadedCard] = []
        for (name, etag) in zip(names, etags) {
            let card = try await loadCard(book, name: name)
            guard card.etag == etag else {
                return try await mergePage(context, error: "One of the contacts was changed on another device meanwhile. Check the merge again.")
            }
            cards.append(card)
        }
        let survivor = cards[survivorIndex]
        let others = cards.enumerated().filter { $0.offset != survivorIndex }.map(\.element)
        var choices: [String: Int] = [:]
        for property in CardMerge.singleValued {
            if let choice = form["choice-" + property].flatMap(Int.init), choice >= 0, choice <= others.count { choices[property] = choice }
        }
        var patch = try CardPatch(data: survivor.data)
        CardMerge.merge(into: &patch, others: others.map(\.card), choices: choices)
        patch.touchRevision(at: store.clock.now)
        let (data, metadata) = try prepare(patch)
        guard let survivorUID = survivor.contact.identifier else { throw WebError.badRequest("The contact that stays has no UID.") }
        var writes: [CardBatchWrite] = [
            .put(name: survivor.name, data: data, contentType: Self.vCardType, card: metadata,
                 precondition: .ifMatch([survivor.etag]), keepPrevious: true),
        ]
        writes += others.map { .trash(name: $0.name, precondition: .ifMatch([$0.etag]), reason: .merged) }
        // Group cards that list a merged card now list the survivor.
        var groupPatches: [String: (etag: String, patch: CardPatch)] = [:]
        for other in others {
            guard let uid = other.contact.identifier else { continue }
            for group in try await store.groups(collectionID: book.id, containingUID: uid) where !names.contains(group) {
                if groupPatches[group] == nil {
                    let card = try await loadCard(book, name: group)
                    groupPatches[group] = (card.etag, try CardPatch(data: card.data))
                }
                groupPatches[group]?.patch.replaceMember(uid, with: survivorUID)
            }
        }
        for (group, entry) in groupPatches.sorted(by: { $0.key < $1.key }) {
            var groupPatch = entry.patch
            groupPatch.touchRevision(at: store.clock.now)
            let (groupData, groupMetadata) = try prepare(groupPatch)
            writes.append(.put(name: group, data: groupData, contentType: Self.vCardType, card: groupMetadata,
                               precondition: .ifMatch([entry.etag]), keepPrevious: true))
        }
        let result: CardBatchResult
        do {
            result = try await writeCards(context, book, writes)
        } catch StoreError.preconditionFailed {
            return try await mergePage(context, error: "A card was changed on another device meanwhile. Check the merge again.")
        }
        return .redirect(URLs.card(base, book.slug, survivor.name, query: [("done", "merged"), ("batch", result.batch)]))
    }
}
