import Foundation
import PostgresNIO
import RoloStore

/// The inline GET's cache (`CardCache`): what keeps it true, heard from the database and
/// noted at this process's own commits.
extension PostgresStore {
    /// Where the triggers announce a change that every cached answer may depend on: a user's
    /// sign-in (password, disabled, app passwords only, name, removal) or a book's path,
    /// kind, name, description or removal (v14-card-cache-notices).
    static let signInChangesChannel = "rolo_sign_in_changes"

    /// A write to a book committed: the cache stops serving the book's cards as read before,
    /// then push hears of it. Every write that moves a book's seq calls it after its commit
    /// and before it answers, so this process never serves its own older state.
    func committed(_ change: BookChange) {
        cardCache.bookChanged(change.collectionID, seq: change.seq)
        bookChanges.publish(change)
    }

    /// `committed` for the current task's write, with its `PushExclusion`.
    func committed(collectionID: Int64, seq: Int64) {
        committed(BookChange(collectionID: collectionID, seq: seq, exclusion: PushExclusion.current ?? .nobody))
    }

    /// This process changed a user's sign-in or a book's path, name or existence: nothing
    /// cached is served any more. Called after the commit, before the change is answered.
    func changedSignInOrBooks() {
        cardCache.forgetAll()
    }

    /// Starts hearing the notices the first time a GET asks (a server; the CLI never does).
    func startCardCacheOnce() {
        guard cardCache.isEnabled, !cacheNoticesStarted.load(ordering: .relaxed) else { return }
        cacheNotices.withLock { task in
            // Under the lock, so that `close()` either sees the task or keeps it from starting.
            guard !cacheNoticesStarted.load(ordering: .relaxed) else { return }
            cacheNoticesStarted.store(true, ordering: .relaxed)
            task = Task { [self] in await followCacheNotices() }
        }
    }

    /// Listens for both channels on a connection of its own to the current primary, and feeds
    /// the cache; the cache serves only while this listens. A lost connection turns it off
    /// and tries again each second.
    func followCacheNotices() async {
        var attempt = 0
        while !Task.isCancelled {
            let server = primary.currentIndex
            do {
                let connection = try await PostgresConnection.connect(configuration: try connectionConfiguration(),
                                                                      id: 2, logger: logger)
                do {
                    try await connection.listen(on: Self.bookChangesChannel) { books in
                        try await connection.listen(on: Self.signInChangesChannel) { others in
                            attempt = 0
                            cardCache.startedListening(to: server)
                            try await withThrowingTaskGroup(of: Void.self) { group in
                                group.addTask { [cardCache] in
                                    for try await notice in books {
                                        if let change = Self.bookChange(fromPayload: notice.payload) {
                                            cardCache.bookChanged(change.collectionID, seq: change.seq)
                                        } else {
                                            cardCache.forgetAll()
                                        }
                                    }
                                }
                                group.addTask { [cardCache] in
                                    for try await _ in others { cardCache.forgetAll() }
                                }
                                // Calls went to another server (a failover): listen there.
                                group.addTask { [primary] in
                                    while primary.currentIndex == server { try await Task.sleep(for: .seconds(1)) }
                                }
                                // The first two end only with the connection.
                                try await group.next()
                                group.cancelAll()
                            }
                        }
                    }
                } catch {
                    cardCache.stoppedListening()
                    try? await connection.close()
                    throw error
                }
                cardCache.stoppedListening()
                try? await connection.close()
            } catch {
                cardCache.stoppedListening()
                if Task.isCancelled { return }
                attempt += 1
                if attempt == 1 || attempt % 60 == 0 {
                    logger.warning("card cache: listening for changes failed; GETs read the database meanwhile",
                                   metadata: ["error": "\(Self.describe(error))"])
                }
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
