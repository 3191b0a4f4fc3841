import Foundation
import Logging
import RoloStore
import WebPush

/// How the notifier paces and judges deliveries.
public struct PushNotifierSettings: Sendable {
    /// A book's message waits until its changes have been quiet this long: a burst of
    /// writes (an import, a client's sync) becomes one message carrying the last token.
    public var quietPeriod: Duration
    /// ...but never longer than this after the first change, so that a book written to
    /// without pause still notifies.
    public var maximumDelay: Duration
    /// Deliveries in flight at once: one slow push service does not hold up the others.
    public var concurrency: Int
    /// RFC 8030 `TTL`: how long a push service keeps an undelivered message (seconds).
    public var ttl: Int
    public var urgency: String
    /// A registration whose push service has failed since this long ago (no success in
    /// between) is dropped; the client registers again when it next runs.
    public var dropAfter: TimeInterval
    /// Refusals (4xx other than 404/410/429) in a row after which a registration is dropped.
    public var maximumRefusals: Int
    /// First back-off after a 429, 5xx or network error; doubled per failure up to an hour.
    public var firstBackoff: TimeInterval

    public init(quietPeriod: Duration = .milliseconds(300), maximumDelay: Duration = .seconds(5), concurrency: Int = 8,
                ttl: Int = 86_400, urgency: String = "normal", dropAfter: TimeInterval = 3 * 86_400,
                maximumRefusals: Int = 10, firstBackoff: TimeInterval = 30) {
        self.quietPeriod = quietPeriod; self.maximumDelay = maximumDelay; self.concurrency = max(concurrency, 1)
        self.ttl = ttl; self.urgency = urgency; self.dropAfter = dropAfter
        self.maximumRefusals = max(maximumRefusals, 1); self.firstBackoff = firstBackoff
    }
}

/// What happened to one delivery, for metrics and logs.
public enum PushEvent: String, Sendable {
    case sent, failed, dropped
}

/// Sends WebDAV-Push messages for committed changes. It takes books from the store's
/// `BookChangeFeed` (so it sees every write path: DAV, import, the web UI, shares, and on
/// PostgreSQL other processes' writes; `StoreCoordination.followBookChanges`), waits
/// for a book's burst to end, then sends each live registration one encrypted
/// `push-message` with the book's topic and current sync token. Nothing here runs on a
/// request's path: a hanging push service delays only its own deliveries.
public actor PushNotifier {
    private let store: any CardStore & PushStore & StoreCoordination
    private let deliver: @Sendable (PushDelivery) async -> PushDeliveryResult
    private let syncToken: @Sendable (_ collectionID: Int64, _ seq: Int64) -> String
    private let settings: PushNotifierSettings
    private let logger: Logger
    private let onEvent: @Sendable (PushEvent) -> Void
    /// Paces bursts and retries.
    private let clock = ContinuousClock()
    /// The store's clock: back-off times and failure ages are compared with what the store
    /// stamps (a test server may live in another year).
    private let wallClock: StoreClock

    /// Books with changes not yet announced.
    private var pending: [Int64: PendingBook] = [:]
    /// Registrations to try again (after a 429, 5xx or network error), by id.
    private var retries: [String: Retry] = [:]
    /// When expired registrations were last swept away (they are never used before that:
    /// the store lists live ones only).
    private var lastPrune: ContinuousClock.Instant?

    private struct PendingBook {
        var exclusion: PushExclusion
        /// The latest seq among the changes (what a registration they all leave out is
        /// spared up to).
        var seq: Int64
        var first: ContinuousClock.Instant
        var last: ContinuousClock.Instant
    }

    private struct Retry {
        var collectionID: Int64
        var due: ContinuousClock.Instant
    }

    public init(store: any CardStore & PushStore & StoreCoordination, clock wallClock: StoreClock = .system,
                settings: PushNotifierSettings = PushNotifierSettings(), logger: Logger,
                syncToken: @escaping @Sendable (_ collectionID: Int64, _ seq: Int64) -> String,
                onEvent: @escaping @Sendable (PushEvent) -> Void = { _ in },
                deliver: @escaping @Sendable (PushDelivery) async -> PushDeliveryResult) {
        self.store = store; self.wallClock = wallClock; self.settings = settings; self.logger = logger
        self.syncToken = syncToken; self.onEvent = onEvent; self.deliver = deliver
    }

    /// Runs until cancelled: takes changes as they are published and sends what is due.
    public func run() async {
        let feed = store.bookChanges
        feed.open()
        defer { feed.close() }
        await withTaskGroup(of: Void.self) { group in
            // Changes committed by other processes on the same database (PostgreSQL).
            group.addTask { [store] in await store.followBookChanges() }
            group.addTask { [self] in
                while !Task.isCancelled {
                    let changes = await feed.take()
                    await self.accept(changes)
                }
            }
            group.addTask { [self] in
                while !Task.isCancelled {
                    await self.sendDue()
                    await self.pruneHourly()
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            await group.waitForAll()
        }
    }

    private func accept(_ changes: [BookChange]) {
        let now = clock.now
        for change in changes {
            if var book = pending[change.collectionID] {
                book.exclusion = book.exclusion.merged(with: change.exclusion)
                book.seq = max(book.seq, change.seq)
                book.last = now
                pending[change.collectionID] = book
            } else {
                pending[change.collectionID] = PendingBook(exclusion: change.exclusion, seq: change.seq, first: now, last: now)
            }
        }
    }

    /// Sends every book whose burst is over (and every retry that is due), at most
    /// `concurrency` deliveries at a time.
    private func sendDue() async {
        let now = clock.now
        let dueBooks = pending.filter { _, book in
            now - book.last >= settings.quietPeriod || now - book.first >= settings.maximumDelay
        }
        for id in dueBooks.keys { pending[id] = nil }
        let dueRetries = retries.filter { $0.value.due <= now }
        for id in dueRetries.keys { retries[id] = nil }
        guard !dueBooks.isEmpty || !dueRetries.isEmpty else { return }

        var jobs: [(PushRegistration, PushDelivery)] = []
        var retryBooks: [Int64: Set<String>] = [:]
        for (id, retry) in dueRetries { retryBooks[retry.collectionID, default: []].insert(id) }
        let books = Set(dueBooks.keys).union(retryBooks.keys)
        for collectionID in books {
            do {
                guard let book = try await store.collection(id: collectionID) else { continue }
                let topic = try await store.pushTopic(collectionID: collectionID)
                let message = Self.pushMessage(topic: topic, syncToken: syncToken(collectionID, book.syncSeq))
                let exclusion = dueBooks[collectionID]?.exclusion
                let sparedUpTo = dueBooks[collectionID]?.seq ?? 0
                let retrying = retryBooks[collectionID] ?? []
                for registration in try await store.pushRegistrations(collectionID: collectionID) {
                    var changed = exclusion.map { !$0.excludes(registration) } ?? false
                    // Every process serving the database hears of the change: the one that
                    // claims this seq for the registration sends, the others skip it. A retry
                    // is of a message this notifier claimed before.
                    if changed {
                        changed = try await store.claimPushDelivery(registrationID: registration.id, seq: book.syncSeq)
                    } else if exclusion != nil {
                        // Left out by Push-Dont-Notify: nothing is owed for these changes, so a
                        // process catching up after a lost connection does not send it either
                        // (only up to their seq: a later change is still announced).
                        _ = try await store.claimPushDelivery(registrationID: registration.id, seq: sparedUpTo)
                    }
                    guard changed || retrying.contains(registration.id) else { continue }
                    // In back-off: the message waits for the end of it rather than being lost.
                    if let retryAfter = registration.retryAfter, retryAfter > wallClock.now {
                        scheduleRetry(registration.id, collectionID: collectionID,
                                      in: retryAfter.timeIntervalSince(wallClock.now))
                        continue
                    }
                    guard let endpoint = URL(string: registration.pushResource),
                          let keys = try? SubscriptionKeys(publicKey: registration.publicKey, authSecret: registration.authSecret)
                    else {
                        // Stored before a stricter check, or damaged: it can never be delivered.
                        try await store.recordPushOutcome(id: registration.id, .gone)
                        onEvent(.dropped)
                        continue
                    }
                    jobs.append((registration, PushDelivery(endpoint: endpoint, keys: keys, topic: topic,
                                                            plaintext: message, ttl: settings.ttl, urgency: settings.urgency)))
                }
            } catch {
                logger.error("push: reading book \(collectionID) failed: \(error)")
            }
        }
        await withTaskGroup(of: (PushRegistration, PushDeliveryResult).self) { group in
            var next = 0
            func startNext() {
                guard next < jobs.count else { return }
                let (registration, delivery) = jobs[next]
                next += 1
                group.addTask { [deliver] in (registration, await deliver(delivery)) }
            }
            for _ in 0..<min(settings.concurrency, jobs.count) { startNext() }
            while let (registration, result) = await group.next() {
                await record(result, for: registration)
                startNext()
            }
        }
    }

    private func pruneHourly() async {
        if let lastPrune, clock.now - lastPrune < .seconds(3600) { return }
        lastPrune = clock.now
        do {
            // One process at a time (a maintenance lease); the others skip this hour.
            _ = try await store.withMaintenanceLease("prune-push-registrations") { [store, logger] in
                let pruned = try await store.prunePushRegistrations()
                if pruned > 0 { logger.info("push: \(pruned) expired registrations removed") }
            }
        } catch is CancellationError {
        } catch {
            logger.error("push: removing expired registrations failed: \(error)")
        }
    }

    private func record(_ result: PushDeliveryResult, for registration: PushRegistration) async {
        let origin = VAPIDKey.origin(of: URL(string: registration.pushResource)!) ?? "?"
        do {
            switch result {
            case .delivered:
                try await store.recordPushOutcome(id: registration.id, .delivered)
                onEvent(.sent)
            case .gone:
                logger.info("push: \(origin) says registration \(registration.id) is gone; dropped")
                try await store.recordPushOutcome(id: registration.id, .gone)
                onEvent(.dropped)
            case .retry(let after):
                if failingTooLong(registration) {
                    logger.notice("push: \(origin) has failed since \(registration.firstFailure!); registration \(registration.id) dropped")
                    try await store.recordPushOutcome(id: registration.id, .gone)
                    onEvent(.dropped)
                    return
                }
                let backoff = after ?? min(settings.firstBackoff * pow(2, Double(min(registration.failures, 10))), 3600)
                try await store.recordPushOutcome(id: registration.id, .failed(retryAfter: wallClock.now.addingTimeInterval(backoff)))
                scheduleRetry(registration.id, collectionID: registration.collectionID, in: backoff)
                onEvent(.failed)
                logger.info("push: \(origin) failed for registration \(registration.id); again in \(Int(backoff)) s")
            case .rejected(let status, let reason):
                if failingTooLong(registration) || registration.failures + 1 >= settings.maximumRefusals {
                    logger.notice("push: \(origin) keeps refusing registration \(registration.id) (\(status) \(reason)); dropped")
                    try await store.recordPushOutcome(id: registration.id, .gone)
                    onEvent(.dropped)
                    return
                }
                try await store.recordPushOutcome(id: registration.id, .failed(retryAfter: nil))
                onEvent(.failed)
                logger.warning("push: \(origin) refused registration \(registration.id): \(status) \(reason)")
            }
        } catch is CancellationError {
            // Shutting down: the outcome is not recorded, and the next change tries again.
        } catch {
            logger.error("push: recording a delivery failed: \(error)")
        }
    }

    private func failingTooLong(_ registration: PushRegistration) -> Bool {
        guard let first = registration.firstFailure else { return false }
        return wallClock.now.timeIntervalSince(first) > settings.dropAfter
    }

    private func scheduleRetry(_ id: String, collectionID: Int64, in seconds: TimeInterval) {
        let due = clock.now + .milliseconds(Int64(max(seconds, 0) * 1000))
        if let existing = retries[id], existing.due <= due { return }
        retries[id] = Retry(collectionID: collectionID, due: due)
    }

    /// The draft's `push-message` for a content update: the topic names the book, the
    /// token lets a client that already has it skip the sync.
    static func pushMessage(topic: String, syncToken: String) -> Data {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
        }
        return Data(("<?xml version=\"1.0\" encoding=\"utf-8\"?>"
            + "<push-message xmlns=\"https://bitfire.at/webdav-push\" xmlns:D=\"DAV:\">"
            + "<topic>\(escaped(topic))</topic>"
            + "<content-update><D:sync-token>\(escaped(syncToken))</D:sync-token></content-update>"
            + "</push-message>").utf8)
    }
}
