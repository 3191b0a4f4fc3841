import Authorization
import DAV
import Foundation
import Logging
import RoloStore
import ServiceLifecycle
import Synchronization

/// Adds up what each credential did on each book in memory and writes it to the access
/// history in one batch a minute (and on shutdown), so a GET costs a dictionary update under
/// a lock, never a database write. Also notes when and from where each app password was last
/// used (the address truncated first), and once an hour prunes the history to its retention.
final class AccessRecorder: Service, Sendable {
    private struct Key: Hashable {
        var user: String
        var credentialID: Int64
        var bookID: Int64
        var hour: Int64
    }

    private struct Pending {
        var tallies: [Key: AccessTally] = [:]
        var uses: [Int64: CredentialUse] = [:]
    }

    private let store: any AccountStore & StoreCoordination
    private let interval: Duration
    private let retention: AccessRetention
    private let logger: Logger
    private let pending = Mutex(Pending())
    private let lastPrune = Mutex<ContinuousClock.Instant?>(nil)

    init(store: any AccountStore & StoreCoordination, interval: Duration, retention: AccessRetention, logger: Logger) {
        self.store = store; self.interval = interval; self.retention = retention; self.logger = logger
    }

    /// Counts one answered request.
    func record(_ credential: Credential, counts: RequestTally.Counts, address: @autoclosure () -> String,
                userAgent: String?, now: Date = Date()) {
        let hour = Int64(now.timeIntervalSince1970) / 3600 * 3600
        let key = Key(user: credential.user, credentialID: credential.appPasswordID, bookID: counts.bookID ?? 0, hour: hour)
        let use = credential.isAppPassword
            ? CredentialUse(credentialID: credential.appPasswordID, at: now, address: ClientAddress.historyPrefix(of: address()), userAgent: userAgent)
            : nil
        pending.withLock { pending in
            var tally = pending.tallies[key]
                ?? AccessTally(user: key.user, credentialID: key.credentialID, bookID: key.bookID, hour: key.hour)
            tally.requests += 1
            tally.cardsRead += counts.cardsRead
            tally.cardsWritten += counts.cardsWritten
            tally.cardsDeleted += counts.cardsDeleted
            tally.fullDownload = tally.fullDownload || counts.fullDownload
            pending.tallies[key] = tally
            if let use { pending.uses[use.credentialID] = use }
        }
    }

    /// Writes what has been counted since the last flush.
    func flush() async {
        let batch = pending.withLock { pending in
            defer { pending = Pending() }
            return pending
        }
        guard !batch.tallies.isEmpty || !batch.uses.isEmpty else { return }
        do {
            try await store.recordAccess(Array(batch.tallies.values), uses: Array(batch.uses.values))
        } catch {
            logger.error("access history not written", metadata: ["error": "\(error)"])
        }
    }

    func run() async throws {
        // Flushes until shutdown, then once more.
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
            await flush()
            await pruneHourly()
        }
        await flush()
    }

    private func pruneHourly() async {
        let now = ContinuousClock.now
        let due = lastPrune.withLock { last in
            guard last.map({ now - $0 >= .seconds(3600) }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        do {
            // One process at a time prunes (a maintenance lease); the others skip this hour.
            _ = try await store.withMaintenanceLease("prune-access-history") { [store, retention] in
                try await store.pruneAccessHistory(now: Date(), retention: retention)
            }
        } catch is CancellationError {
            // The server is stopping (or never bound its port): nothing went wrong.
        } catch {
            logger.error("access history not pruned", metadata: ["error": "\(error)"])
        }
    }
}
