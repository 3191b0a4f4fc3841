import CardIndexing
import Foundation
import RoloStore

/// A card's history and the undo of a book (issue 31): the same plan and the same refusals as
/// `rolo history` and `rolo restore` (`CardHistory`, `UndoPlan`), carried out as the
/// signed-in user's ordinary writes, which every client syncs back.
extension WebApp {
    var history: (any CardHistoryStore)? { store as? any CardHistoryStore }

    /// The contact page's history: each kept version newest first, what it changed, and a
    /// restore form for every earlier version that is not a deletion (when the user may write).
    func historyModel(_ context: PageContext, name: String) async throws -> [String: Any]? {
        guard let history else { return nil }
        let book = try context.currentBook
        let versions = try await history.cardVersions(collectionID: book.id, name: name)
        guard !versions.isEmpty else { return nil }
        let devices = try await CardHistory.deviceNames(of: context.user, in: store)
        let changes = CardHistory.describe(versions)
        let current = versions.last?.etag ?? ""
        let rows = zip(versions, changes).reversed().map { version, changed -> [String: Any] in
            // The same bytes as now (a version an earlier restore brought back) offer nothing.
            let restorable = book.canWrite && !version.isDeletion && version.seq != versions.last?.seq && version.etag != current
            return [
                "when": Formatting.time(version.at), "iso": Formatting.iso(version.at), "user": version.user ?? "—",
                "device": CardHistory.device(of: version, names: devices, namesOf: context.user),
                "changes": changed.joined(separator: ", "), "isCurrent": version.seq == versions.last?.seq,
                "restore": restorable ? ["seq": String(version.seq), "etag": current,
                                         "action": URLs.card(base, book.slug, name, "restore-version"),
                                         "label": "Restore the version of \(Formatting.time(version.at))"] as [String: Any] : false,
            ]
        }
        return ["versions": rows, "count": Formatting.count(rows.count, cap: Int.max, noun: "version")]
    }

    /// `POST …/c/{name}/restore-version` (`seq`, `etag`): the version becomes a new write,
    /// checked against the ETag the page showed; a version pruned since is refused.
    func restoreVersion(_ context: PageContext, name: String) async throws -> WebResponse {
        let book = try context.currentBook
        guard let history else { throw WebError.notFound }
        guard let seq = context.form["seq"].flatMap(Int64.init), let etag = context.form["etag"], !etag.isEmpty else {
            throw WebError.badRequest("The form names no version.")
        }
        let found: (version: CardVersion, current: String?)
        do {
            found = try await CardHistory.versionToRestore(collectionID: book.id, name: name, seq: seq, shownETag: etag,
                                                           history: history)
        } catch let refused as CardHistory.RestoreError {
            throw WebError.badRequest(refused.description)
        }
        do {
            try await checkQuota(book, adding: found.version.data?.count ?? 0)
            _ = try await asAuthor(context) {
                try await CardHistory.restore(found.version, current: found.current, collectionID: book.id, in: store)
            }
        } catch StoreError.preconditionFailed {
            throw WebError.badRequest("This contact was changed on another device meanwhile; nothing was restored. Open it again to see the change.")
        } catch StoreError.uidConflict {
            throw WebError.badRequest("Another card in the book has this version's UID now; nothing was restored.")
        } catch let refused as CardHistory.RestoreError {
            throw WebError.badRequest(refused.description)
        }
        return .redirect(URLs.card(base, book.slug, name, query: [("done", "version-restored")]))
    }

    /// What the undo form asked: the time, and the device (empty: every device).
    private struct UndoRequest {
        var to: String
        var device: String?
        /// Cards another device changed since go back too.
        var includeConflicts: Bool

        init(_ value: (String) -> String?) {
            to = (value("to") ?? "").trimmingCharacters(in: .whitespaces)
            device = value("device").flatMap { $0.isEmpty ? nil : $0 }
            includeConflicts = value("conflicts") == "include"
        }
    }

    /// The plan for the request, or the refusal to show (nothing is written either way).
    private func undoPlan(_ context: PageContext, _ request: UndoRequest) async throws -> Result<UndoPlan, CardHistory.RestoreError> {
        let book = try context.currentBook
        guard let history else { throw WebError.notFound }
        guard let time = CardHistory.parseTime(request.to) else {
            return .failure(.init("Give the time as ISO 8601, e.g. 2026-11-28T07:10:00Z. Nothing changed."))
        }
        do {
            return .success(try await CardHistory.undoPlan(collectionID: book.id, since: time, device: request.device, of: context.user,
                                                           now: store.clock.now, includeConflicts: request.includeConflicts,
                                                           accounts: store, history: history))
        } catch let refused as CardHistory.RestoreError {
            return .failure(refused)
        }
    }

    /// `GET …/undo-changes[?to=TIME&device=NAME]`: the form, and for a time the plan: the
    /// cards it would put back or remove and the conflicts it would leave alone.
    func undoChangesPage(_ context: PageContext, error: String? = nil, status: Int = 200) async throws -> WebResponse {
        let book = try context.currentBook
        let request = UndoRequest { context.request.query($0) ?? context.form[$0] }
        let devices = try await CardHistory.deviceNames(of: context.user, in: store)
        var undo: [String: Any] = [
            "bookName": book.displayName, "action": URLs.bookPage(base, book.slug, "undo-changes"), "to": request.to,
            "devices": devices.sorted { ($0.key == 0 ? 0 : 1, $0.value) < ($1.key == 0 ? 0 : 1, $1.value) }.map {
                ["name": $0.value, "selected": $0.value == request.device]
            },
            "everyDevice": request.device == nil, "includeConflicts": request.includeConflicts,
            "plan": false, "error": error ?? false,
        ]
        if error == nil, !request.to.isEmpty {
            switch try await undoPlan(context, request) {
            case .failure(let refused):
                undo["error"] = refused.description
            case .success(let plan):
                undo["plan"] = try await planModel(context, plan, request: request)
            }
        }
        var model = try await pageModel(context, title: "Undo changes")
        model["undoChanges"] = undo
        let refused = (undo["error"] as? String) != nil
        return .html(renderer.render("page", model), status: refused && status == 200 ? 400 : status)
    }

    private func planModel(_ context: PageContext, _ plan: UndoPlan, request: UndoRequest) async throws -> [String: Any] {
        let book = try context.currentBook
        let names = Array(Set(plan.steps.map(\.name) + plan.conflicts.map(\.name)))
        let listings = try await store.cardListings(collectionID: book.id, names: names)
        var shown = Dictionary(listings.map { ($0.name, $0.fields.displayName) }, uniquingKeysWith: { first, _ in first })
        for case let .revert(name, version, current) in plan.steps where current == nil && shown[name] == nil {
            // A deleted card: its name as the version to bring back has it.
            shown[name] = version.data.flatMap { try? metadata($0) }?.listing?.displayName
        }
        let devices = try await CardHistory.deviceNames(of: context.user, in: store)
        func label(_ name: String) -> String { shown[name].flatMap { $0.isEmpty ? nil : $0 } ?? name }
        let steps = plan.steps.map { step -> [String: Any] in
            switch step {
            case let .revert(name, version, current):
                return ["name": label(name), "file": name,
                        "what": current == nil ? "comes back (it was deleted)" : "goes back to its version of \(Formatting.time(version.at))"]
            case let .remove(name, _):
                return ["name": label(name), "file": name, "what": "is removed (it was created since; it stays in the trash)"]
            }
        }
        let included = Set(plan.steps.map(\.name))
        let conflicts = plan.conflicts.map { conflict -> [String: Any] in
            let by = Set(conflict.others.map { "\($0.user ?? "—") with \(CardHistory.device(of: $0, names: devices, namesOf: context.user))" })
            return ["name": label(conflict.name), "file": conflict.name, "by": by.sorted().joined(separator: ", "),
                    "included": included.contains(conflict.name)]
        }
        let reverts = plan.steps.filter { if case .revert = $0 { true } else { false } }.count
        return [
            "summary": "\(Formatting.count(reverts, cap: Int.max, noun: "card")) put back, "
                + "\(Formatting.count(plan.steps.count - reverts, cap: Int.max, noun: "card")) removed, "
                + "\(Formatting.count(plan.conflicts.count, cap: Int.max, noun: "conflict"))"
                + (request.includeConflicts ? " undone too." : " left alone."),
            "steps": steps, "hasSteps": !steps.isEmpty, "conflicts": conflicts, "hasConflicts": !conflicts.isEmpty,
            "to": request.to, "device": request.device ?? "", "conflictsIncluded": request.includeConflicts,
        ]
    }

    /// `POST …/undo-changes` (`to`, `device`): the plan carried out as one transaction of
    /// ordinary writes by the signed-in user; a card changed since the plan was shown fails
    /// it whole, and nothing changes.
    func undoChanges(_ context: PageContext) async throws -> WebResponse {
        let book = try context.currentBook
        let request = UndoRequest { context.form[$0] }
        let plan: UndoPlan
        switch try await undoPlan(context, request) {
        case .failure(let refused): return try await undoChangesPage(context, error: refused.description, status: 400)
        case .success(let made): plan = made
        }
        do {
            _ = try await asAuthor(context) { try await CardHistory.apply(plan, collectionID: book.id, in: store) }
        } catch StoreError.preconditionFailed, StoreError.uidConflict {
            return try await undoChangesPage(context, error: "A card changed while the undo ran; nothing was changed. Check the plan again.",
                                             status: 409)
        } catch let refused as CardHistory.RestoreError {
            return try await undoChangesPage(context, error: refused.description + " Nothing was changed.", status: 400)
        }
        let removed = plan.steps.filter { if case .remove = $0 { true } else { false } }.count
        context.tally.wrote(plan.steps.count - removed)
        context.tally.deleted(removed)
        return .redirect(URLs.bookPage(base, book.slug, "undo-changes",
                                       query: [("done", "changes-undone"), ("count", String(plan.steps.count))]))
    }
}
