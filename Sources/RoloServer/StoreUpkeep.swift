import CardIndexing
import Foundation
import Logging
import RoloStore
import ServiceLifecycle
import VCard

/// Store housekeeping that needs the server's knowledge of vCards or its clock: gives cards
/// stored before schema v9 their list rows (once, at start: the store cannot parse
/// vCards), and every hour empties trash older than `trashRetention` and ends web sessions
/// idle or old past their limits, and card versions past `historyRetention` (issue 31). Each job runs under a maintenance lease: with several
/// processes on one PostgreSQL database, one at a time does it and the others skip that turn.
struct StoreUpkeep: Service {
    let store: any WebStore & StoreCoordination
    let trashRetention: Duration
    let sessionIdleLimit: Duration
    let sessionLifetime: Duration
    var historyRetention: HistoryRetention = .default
    let logger: Logger
    /// The organisation's directory to rebuild at start and every hour (issue 32), if on.
    var directory: DirectoryRebuild?

    func run() async throws {
        do {
            _ = try await store.withMaintenanceLease("backfill-card-listings") { [store, logger] in
                let given = try await store.backfillCardListings(Self.listing(of:))
                if given > 0 { logger.info("list rows given to cards stored before the web UI", metadata: ["cards": "\(given)"]) }
            }
        } catch {
            logger.error("list rows not backfilled", metadata: ["error": "\(error)"])
        }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await rebuildDirectory()
            await tidy()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(3600)) }
        }
    }

    /// A card's list row, read leniently: a card a client once stored is listed even if it
    /// breaks a rule the strict parser enforces today.
    @Sendable static func listing(of data: Data) -> CardListingFields? {
        guard let card = try? VCardParser.parse(Array(data), mode: .lenient).first else { return nil }
        return CardListingFields(card: card)
    }

    /// `DirectorySync` under a lease: one process of several on one database rebuilds.
    func rebuildDirectory() async {
        guard let directory else { return }
        do {
            _ = try await store.withMaintenanceLease("directory") { [logger] in
                let report = try await directory.run { logger.warning("directory: \($0)") }
                if !report.isEmpty {
                    logger.info("directory rebuilt", metadata: [
                        "added": "\(report.added.count)", "changed": "\(report.changed.count)",
                        "removed": "\(report.removed.count)", "mounted": "\(report.mounted.count)",
                        "unmounted": "\(report.unmounted.count)"])
                }
            }
        } catch is CancellationError {
        } catch {
            logger.error("directory not rebuilt", metadata: ["error": "\(error)"])
        }
    }

    func tidy() async {
        let now = Date()
        do {
            _ = try await store.withMaintenanceLease("tidy") { [store, trashRetention, sessionIdleLimit, sessionLifetime] in
                try await store.purgeTrash(olderThan: now.addingTimeInterval(-trashRetention.seconds))
                try await store.pruneWebSessions(idleSince: now.addingTimeInterval(-sessionIdleLimit.seconds),
                                                 createdBefore: now.addingTimeInterval(-sessionLifetime.seconds))
            }
        } catch is CancellationError {
            // The server is stopping (or never bound its port): nothing went wrong.
        } catch {
            logger.error("trash or sessions not tidied", metadata: ["error": "\(error)"])
        }
        guard let history = store as? any CardHistoryStore else { return }
        do {
            _ = try await store.withMaintenanceLease("prune-card-versions") { [historyRetention] in
                try await history.pruneCardVersions(now: now, retention: historyRetention)
            }
        } catch is CancellationError {
        } catch {
            logger.error("card versions not pruned", metadata: ["error": "\(error)"])
        }
    }
}

extension Duration {
    /// The duration in seconds, as `Date` arithmetic takes it.
    var seconds: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
