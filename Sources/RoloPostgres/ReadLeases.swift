import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// Read leases: with other Rolo processes on the database, the card cache answers GETs at
/// once, without a fence (`NoticesFence`), while this process holds a lease; in exchange a
/// write is acknowledged to its client only once every other process holding one has heard
/// it, or that process's lease has run out.
///
/// A fence costs a round trip to the database on every few GETs: measured, a fenced GET
/// took three to four times the CPU of one answered at once, and two processes served fewer
/// GETs than one (Docs/performance.md). Writes are rarer than reads, so the round trip moves
/// to them, where it overlaps the next batch's commit.
///
/// **Leases.** A process renews its lease by a notice (`lease <id> <n>`) every
/// `renewalInterval` while reads ask for kept answers (`tick`). Every other process
/// acknowledges each renewal it reads (`ack <id> <leaser>@<n>`). Once the leaser has read its
/// own renewal back (it has then read every notice committed before it) and every other
/// process heard has acknowledged it, it serves kept answers without a fence until `length`
/// after it *sent* that renewal (`CardCache.lease(until:)`). Another process takes the lease
/// to last until `length` after it *read* it: never shorter. A process leases only once
/// every process running when it started has acknowledged its announcement, so that none of
/// them still counts itself alone (alone, a process's writes wait for nobody).
///
/// **Writes.** After its commit, a write waits (`wait(for:alone:then:)`) until this process
/// reads the write's own notice back (the book's new seq from its trigger, or a marker of
/// this process's own for a change without a seq: a sign-in or a book's name). It has then
/// read every renewal committed before the write. Each other process whose lease had not run
/// out then must acknowledge the write (`ack <id> …`: the book seqs, and the markers, it has
/// read); one that does not is waited for until `length` after the commit, by when every
/// lease renewed before the write has run out. A renewal committed after the write is read
/// back by its process only after the write's notice, so that lease never misses the write.
///
/// So a write waits for one more round trip through the database (no WAL flush: a
/// transaction that only notifies commits asynchronously), and at most `length` when a
/// process holding a lease stalls, or while this one's notices are not heard.
///
/// **Writes while nobody leases** are answered at once (`noLeaseCanMiss`): when no renewal
/// of another process read here is still running. A renewal this process has not read yet
/// serves nobody before this process acknowledged it, and it acknowledges only after it
/// noted the renewal, under the lock that the write's check also takes: so either the check
/// saw the lease (and the write waits as above), or the acknowledgement was sent after the
/// check, hence after the write's commit, and the leaser reads the write's notice before the
/// acknowledgement that lets it serve. Without acknowledged renewals, every write with
/// another process on the database waited to read its own notice back, leases or none: 30 %
/// off two processes' import (Docs/performance.md).
///
/// **Only among processes that know leases.** A process of a version before leases answers
/// its writes without waiting for anyone. So a process leases only while every process
/// counted on the database (`counted`) has been heard on `channel` within the last two
/// seconds (a process that does not lease says `here <id>` each second), and stops at once
/// when it reads the announcement of a process whose id lacks `idPrefix` (an older version),
/// before it acknowledges it; until a count taken after that shows every process heard again.
/// A process of the first version with leases (its id lacks `acknowledgingPrefix`) serves
/// renewals nobody acknowledged, so while one is heard every write waits as above.
final class ReadLeases: Sendable {
    typealias Done = @Sendable () -> Void

    static let channel = "rolo_leases"
    static let renewalInterval = TimeAmount.milliseconds(100)
    /// How often a process that does not lease says it knows leases.
    static let presenceInterval: Duration = .seconds(1)

    /// How long a renewal lasts, and how long an unheard process still counts as present.
    /// Every process on one database must use the same (each one's writes trust the others'
    /// leases to run out on time), so only tests change it (`Configuration.leaseTiming`): on
    /// a loaded two-core machine a renewal's round trip through the database took longer than
    /// the whole 500 ms, and no lease was ever held.
    struct Timing: Sendable, Equatable {
        /// How long a renewal lasts. A stalled process holds writers up for at most this.
        var length: Duration
        /// What a process is taken to be gone from leases after, unheard.
        var presenceLapse: Duration

        static let standard = Timing(length: .milliseconds(500), presenceLapse: .seconds(2))
    }

    /// This process's lease timing: `Timing.standard` but in tests.
    let timing: Timing
    /// Starts the id of every process that knows leases (its announcement's payload).
    static let idPrefix = "L"
    /// Starts the id of every process that acknowledges renewals, and leases only on
    /// acknowledged ones (`noLeaseCanMiss`).
    /// ("L2-": an older id is "L" and a UUID, whose first group never ends after one digit.)
    static let acknowledgingPrefix = "L2-"

    /// A new session's id.
    static func newID() -> String { acknowledgingPrefix + UUID().uuidString }

    /// What a write waits to read back: its book's new seq, or a marker of its own.
    enum Mark: Sendable, Equatable {
        case book(Int64, seq: Int64)
        case marker(UInt64)
    }

    private struct Wait {
        var mark: Mark
        /// A lease's length after the commit: every lease renewed before it has run out then.
        var deadline: ContinuousClock.Instant
        /// The other processes still to acknowledge; nil until the mark is read back.
        var awaiting: Set<String>?
        var done: Done
    }

    private struct State {
        let timing: Timing
        var connection: PostgresConnection?
        /// This session's id (its announcement's): renewals, markers and acknowledgements name it.
        var me = ""
        /// Whether this process renews a lease (its announcement acknowledged, a cache to serve).
        var leasing = false
        /// `stopLeasing` was called.
        var refused = false
        /// When another process was last heard on `channel`, by its id.
        var heard: [String: ContinuousClock.Instant] = [:]
        /// The processes counted on the database, this one included (`counted`).
        var counted = 1
        /// When an announcement of a process before leases was last read; a count asked
        /// before then does not lift the pause it caused.
        var olderHeardAt: ContinuousClock.Instant?
        var lastPresence = ContinuousClock.Instant.now - .seconds(60)

        /// The other processes heard on `channel` (or announcing themselves) lately.
        func present(at now: ContinuousClock.Instant) -> [String] {
            heard.compactMap { now - $0.value < timing.presenceLapse ? $0.key : nil }
        }
        /// Whether every process counted knows leases, as far as was heard.
        func othersKnowLeases(at now: ContinuousClock.Instant) -> Bool {
            olderHeardAt == nil && present(at: now).count >= counted - 1
        }
        /// Whether no other process can serve a kept answer that misses a write this process
        /// committed before now: none of its renewals read here is running, every other lease
        /// needs this process's acknowledgement first (every process counted was heard, each
        /// acknowledging renewals), and every lease renewed before this session listened is
        /// known or has run out.
        func noLeaseCanMiss(at now: ContinuousClock.Instant) -> Bool {
            guard connection != nil, now >= informedAt, olderHeardAt == nil,
                  others.values.allSatisfy({ $0 <= now }) else { return false }
            let present = present(at: now)
            return present.count >= counted - 1 && present.allSatisfy { $0.hasPrefix(ReadLeases.acknowledgingPrefix) }
        }
        var nextRenewal: UInt64 = 0
        /// When the last renewal was sent.
        var renewedAt: ContinuousClock.Instant?
        /// Whether others may still count a lease of this process: acknowledgements are owed
        /// only then (any other write waits for nobody here). Others count a lease until
        /// `length` after they read it, later than this process does; a renewal read a whole
        /// second late still falls within this.
        func othersMayCountALease(at now: ContinuousClock.Instant) -> Bool {
            leasing && renewedAt.map { now - $0 < timing.length * 3 } ?? false
        }
        /// When each recent renewal was sent, by number.
        var renewalsSent: [UInt64: ContinuousClock.Instant] = [:]
        /// This process's renewal read back, serving once every other process present has
        /// acknowledged it (`grant`).
        var unacknowledged: (number: UInt64, sent: ContinuousClock.Instant)?
        /// The latest renewal of this process each other process acknowledged.
        var acknowledgedRenewals: [String: UInt64] = [:]
        /// Other processes' leases as read here: until `length` after each renewal was read.
        var others: [String: ContinuousClock.Instant] = [:]
        /// Before this, a lease renewed before this session listened may be unknown here.
        var informedAt = ContinuousClock.Instant.now
        /// The highest seq of each book read here this session: a write's notice may be read
        /// before the write's own connection hears of its commit, and so before it waits.
        var readSeqs: [Int64: Int64] = [:]
        /// The highest seq of each book, and marker of this session, each other process acknowledged.
        var ackedSeqs: [String: [Int64: Int64]] = [:]
        var ackedMarkers: [String: UInt64] = [:]
        var nextMarker: UInt64 = 0
        var waits: [UInt64: Wait] = [:]
        var nextWait: UInt64 = 0
        /// Acknowledgements to send at the end of the notices loop's turn.
        var owedSeqs: [Int64: Int64] = [:]
        var owedMarkers: [String: UInt64] = [:]
        var owedRenewals: [String: UInt64] = [:]
        var flushScheduled = false
        /// Whether `sweep` is scheduled: it runs while writes wait.
        var sweeping = false
    }

    /// A waiter for the end of the unknown-lease time: it has no acknowledgement.
    private static let unknown = ""

    private let state: Mutex<State>
    private let cardCache: CardCache
    private let logger: Logger

    init(cardCache: CardCache, timing: Timing = .standard, logger: Logger) {
        self.cardCache = cardCache
        self.timing = timing
        self.logger = logger
        state = Mutex(State(timing: timing))
    }

    // MARK: Sessions

    /// A notices connection listens from now on as `me` (all three channels). Leases renewed
    /// before it may be unknown until `length` from now, or until the announcement is
    /// acknowledged (`informed`).
    func listening(on connection: PostgresConnection, as me: String) {
        state.withLock { state in
            state.connection = connection
            state.me = me
            state.leasing = false
            state.others = [:]
            state.readSeqs = [:]
            state.heard = [:]
            state.olderHeardAt = nil
            state.ackedSeqs = [:]
            state.ackedMarkers = [:]
            state.owedSeqs = [:]
            state.owedMarkers = [:]
            state.owedRenewals = [:]
            state.renewalsSent = [:]
            state.unacknowledged = nil
            state.acknowledgedRenewals = [:]
            state.informedAt = .now + timing.length
        }
    }

    /// Every process listening when this session started has acknowledged it (having renewed
    /// its lease first), or none was: every lease is known here from now on.
    func informed() {
        let ready = state.withLock { state -> [Done] in
            state.informedAt = min(state.informedAt, .now)
            return Self.release(Self.unknown, &state)
        }
        for done in ready { done() }
    }

    /// Renews a lease from now on (every `renewalInterval`, `renew`), unless `stopLeasing`
    /// was called.
    func startLeasing() {
        state.withLock { $0.leasing = !$0.refused }
    }

    /// No lease from now on: GETs go after fences again. For tests of the fence, and of a
    /// book's reads served at the seq a request looked up.
    func stopLeasing() {
        state.withLock { state in
            state.refused = true
            state.leasing = false
            state.unacknowledged = nil
        }
        cardCache.endLease()
    }

    /// This process is closing (a `rolo` command's end, a restart): it stops answering from
    /// memory, then says so (`bye <id>`), so that the others' writes stop waiting for its
    /// lease at once, not when it runs out (half a second of every write after each command).
    func leave() async {
        let send = state.withLock { state -> (PostgresConnection, String)? in
            state.refused = true
            state.leasing = false
            state.unacknowledged = nil
            return state.connection.map { ($0, "bye \(state.me)") }
        }
        cardCache.endLease()
        guard let (connection, payload) = send, let sent = notify(payload, on: connection) else { return }
        _ = await withTimeout(.seconds(1)) { _ = try? await sent.get() }
    }

    /// The notices connection ended: no lease is held or known until the next session.
    func stopped() {
        state.withLock { state in
            state.connection = nil
            state.leasing = false
            state.unacknowledged = nil
            state.others = [:]
        }
    }

    /// The processes listening on the database, this one included, counted by a count
    /// asked at `asked`.
    func counted(_ count: Int, asked: ContinuousClock.Instant) {
        state.withLock { state in
            state.counted = count
            let now = ContinuousClock.now
            // Processes gone (each `rolo` command is one) are forgotten.
            for (process, last) in state.heard where now - last >= timing.presenceLapse && state.others[process].map({ $0 <= now }) ?? true {
                state.heard[process] = nil
                state.others[process] = nil
                state.ackedSeqs[process] = nil
                state.ackedMarkers[process] = nil
                state.acknowledgedRenewals[process] = nil
            }
            if let older = state.olderHeardAt, asked > older,
               state.present(at: now).count >= count - 1 {
                state.olderHeardAt = nil
            }
        }
    }

    /// A process of a version before leases announced itself (`id`): this one stops serving
    /// without a fence now, before it acknowledges the announcement.
    /// A process that acknowledges renewals is present from its announcement on: this
    /// process's later renewals serve only once it acknowledged them too, since it may answer
    /// its writes at once (`noLeaseCanMiss`).
    func heardAnnouncement(of id: String) {
        if id.hasPrefix(Self.acknowledgingPrefix) {
            state.withLock { $0.heard[id] = .now }
            return
        }
        guard !id.hasPrefix(Self.idPrefix) else { return }
        state.withLock { state in
            state.olderHeardAt = .now
            state.unacknowledged = nil
        }
        cardCache.endLease()
    }

    /// Every `renewalInterval`: a renewal while reads want a lease (`CardCache.wantsLease`),
    /// else only this process's presence, each `presenceInterval`. A lease renewed only on
    /// demand keeps an idle process, or one alone on the database, from sending ten notices a
    /// second that every listener of the database reads (a full test run's hundreds of stores,
    /// most of them alone, kept the event loops seconds behind), and from holding others'
    /// writes up for acknowledgements while it serves nothing.
    func tick() {
        renew(wanted: cardCache.wantsLease)
    }

    /// Sends a renewal now, when leasing, wanted, and every process counted knows leases; else
    /// says this process knows them (`here`), at most each `presenceInterval` unless `now`. Sent
    /// before an acknowledgement of another process's announcement, so that the newcomer
    /// knows this lease before it writes.
    func renew(presenceNow: Bool = false, wanted: Bool = true) {
        let send = state.withLock { state -> (PostgresConnection, String)? in
            guard let connection = state.connection else { return nil }
            let now = ContinuousClock.now
            guard state.leasing, wanted || presenceNow, state.othersKnowLeases(at: now) else {
                guard presenceNow || now - state.lastPresence >= Self.presenceInterval else { return nil }
                state.lastPresence = now
                return (connection, "here \(state.me)")
            }
            let number = state.nextRenewal
            state.nextRenewal &+= 1
            state.renewalsSent[number] = now
            state.renewedAt = now
            state.renewalsSent[number &- 64] = nil
            return (connection, "lease \(state.me) \(number)")
        }
        guard let (connection, payload) = send else { return }
        notify(payload, on: connection)
    }

    /// Sends a notice on `channel`, unless `quiet`; the future tells when it was sent.
    @discardableResult
    private func notify(_ payload: String, on connection: PostgresConnection) -> EventLoopFuture<PostgresQueryResult>? {
        guard !isQuiet else { return nil }
        let sent = connection.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
        sent.whenFailure { _ in }
        return sent
    }

    private let quieted = Atomic(false)
    private var isQuiet: Bool { quieted.load(ordering: .relaxed) }

    /// Sends nothing from now on, and leases no more. For tests that hold up the notices
    /// connection: nothing of this process's own is then in flight, and no lease of its own
    /// starts or ends while its notices are held up.
    func quiet() {
        quieted.store(true, ordering: .relaxed)
        stopLeasing()
    }

    // MARK: Writes

    /// Calls `then` once every other process holding a lease has heard `mark` (this process's
    /// write, committed), or its lease ran out; at once when this process is `alone` on the
    /// database, or no lease can miss the write (`noLeaseCanMiss`). A marker's notice is sent here.
    func wait(for mark: Mark?, alone: Bool, then done: @escaping Done) {
        if alone { return done() }
        if state.withLock({ $0.noLeaseCanMiss(at: .now) }) {
            answeredAtOnceCount.add(1, ordering: .relaxed)
            return done()
        }
        var ready: [Done] = []
        let (marker, ended, startSweeping) = state.withLock { state -> ((PostgresConnection, String)?, Bool, Bool) in
            let id = state.nextWait
            state.nextWait &+= 1
            var wait = Wait(mark: mark ?? .marker(state.nextMarker), deadline: .now + timing.length, done: done)
            var marker: (PostgresConnection, String)?
            if mark == nil {
                if let connection = state.connection { marker = (connection, "mark \(state.me) \(state.nextMarker)") }
                state.nextMarker &+= 1
            }
            if state.connection == nil { wait.awaiting = [Self.unknown] }
            state.waits[id] = wait
            // Its notice read already (before its commit's answer): read back now.
            if case .book(let book, let seq) = wait.mark, state.readSeqs[book].map({ $0 >= seq }) ?? false {
                let mark = wait.mark
                ready = Self.readBack(&state) { $0 == mark }
            }
            let ended = state.waits[id] == nil
            if !ended && !state.sweeping {
                state.sweeping = true
                return (marker, ended, true)
            }
            return (marker, ended, false)
        }
        for done in ready { done() }
        if startSweeping { scheduleSweep() }
        if ended { return }
        if let (connection, payload) = marker {
            notify(payload, on: connection)
        }
    }

    /// `wait(for:alone:then:)`, awaited.
    func wait(for mark: Mark?, alone: Bool) async {
        if alone { return }
        await withCheckedContinuation { continuation in
            wait(for: mark, alone: alone) { continuation.resume() }
        }
    }

    /// Ends the waits whose deadline passed, a few times a second while any waits: one timer
    /// for every write, where a timer each woke another thread for each write.
    private static let sweepInterval = TimeAmount.milliseconds(20)

    private func scheduleSweep() {
        MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: Self.sweepInterval) { [self] in sweep() }
    }

    private func sweep() {
        let now = ContinuousClock.now
        let (expired, again) = state.withLock { state -> ([Done], Bool) in
            var expired: [Done] = []
            for (id, wait) in state.waits where wait.deadline <= now {
                state.waits[id] = nil
                expired.append(wait.done)
            }
            state.sweeping = !state.waits.isEmpty
            return (expired, state.sweeping)
        }
        for done in expired { done() }
        if again { scheduleSweep() }
    }

    /// The waits `read` marks read back, each now waiting for the processes then leased.
    private static func readBack(_ state: inout State, where read: (Mark) -> Bool) -> [Done] {
        let now = ContinuousClock.now
        var ready: [Done] = []
        for (id, var wait) in state.waits where wait.awaiting == nil && read(wait.mark) {
            var awaiting = Set<String>()
            for (process, until) in state.others where until > now && !acknowledged(state, wait.mark, by: process) {
                awaiting.insert(process)
            }
            if now < state.informedAt { awaiting.insert(unknown) }
            if awaiting.isEmpty {
                state.waits[id] = nil
                ready.append(wait.done)
            } else {
                wait.awaiting = awaiting
                state.waits[id] = wait
            }
        }
        return ready
    }

    private static func acknowledged(_ state: State, _ mark: Mark, by process: String) -> Bool {
        acknowledged(mark, seqs: state.ackedSeqs[process] ?? [:], marker: state.ackedMarkers[process])
    }

    /// Whether acknowledgements of these book seqs and this marker cover `mark`.
    private static func acknowledged(_ mark: Mark, seqs: [Int64: Int64], marker: UInt64?) -> Bool {
        switch mark {
        case .book(let book, let seq): seqs[book].map { $0 >= seq } ?? false
        case .marker(let number): marker.map { $0 >= number } ?? false
        }
    }

    // MARK: Notices, on the notices connection's event loop as each is read

    /// A book's seq moved (any process's write, this one's too): this process's writes up to
    /// it are read back, and, while leasing with others, another's is owed an acknowledgement.
    func heard(book: Int64, seq: Int64, alone: Bool) {
        let (ready, flush) = state.withLock { state -> ([Done], PostgresConnection?) in
            state.readSeqs[book] = max(state.readSeqs[book] ?? .min, seq)
            var own = false
            let ready = Self.readBack(&state) { mark in
                guard case .book(book, let written) = mark, written <= seq else { return false }
                if written == seq { own = true }
                return true
            }
            guard state.othersMayCountALease(at: .now), !alone, !own else { return (ready, nil) }
            state.owedSeqs[book] = max(state.owedSeqs[book] ?? .min, seq)
            return (ready, Self.scheduleFlush(&state))
        }
        for done in ready { done() }
        if let flush { flush.eventLoop.execute { self.flushAcknowledgements() } }
    }

    /// A notice on `channel`: a renewal, a marker or an acknowledgement.
    func heard(_ payload: String, alone: Bool) {
        let parts = payload.split(separator: " ")
        guard parts.count >= 2 else { return }
        let process = String(parts[1])
        var flush: PostgresConnection?
        var ready: [Done] = []
        state.withLock { state in
            let own = process == state.me
            if !own { state.heard[process] = .now }
            switch parts[0] {
            case "lease" where parts.count == 3:
                guard let number = UInt64(parts[2]) else { return }
                if own {
                    // Not a renewal sent before a pause (an older process announced) or
                    // `stopLeasing`, read back after it.
                    if state.leasing, state.othersKnowLeases(at: .now), let sent = state.renewalsSent[number] {
                        state.unacknowledged = (number, sent)
                        grant(&state)
                    }
                } else {
                    // Noted before it is acknowledged: `noLeaseCanMiss`.
                    state.others[process] = .now + timing.length
                    state.owedRenewals[process] = max(state.owedRenewals[process] ?? 0, number)
                    flush = Self.scheduleFlush(&state)
                }
            case "mark" where parts.count == 3:
                guard let number = UInt64(parts[2]) else { return }
                if own {
                    ready = Self.readBack(&state) { mark in
                        if case .marker(let marked) = mark { return marked <= number }
                        return false
                    }
                } else if state.othersMayCountALease(at: .now), !alone {
                    state.owedMarkers[process] = max(state.owedMarkers[process] ?? 0, number)
                    flush = Self.scheduleFlush(&state)
                }
            case "bye" where !own:
                // It answers nothing from memory any more: no write waits for it, and no
                // renewal for its acknowledgement.
                state.others[process] = nil
                state.heard[process] = nil
                state.acknowledgedRenewals[process] = nil
                ready = Self.release(process, &state)
                grant(&state)
            case "ack" where !own:
                for item in parts.dropFirst(2) {
                    if let at = item.firstIndex(of: "@") {
                        guard item[..<at] == state.me, let number = UInt64(item[item.index(after: at)...]) else { continue }
                        state.acknowledgedRenewals[process] = max(state.acknowledgedRenewals[process] ?? 0, number)
                    } else if let hash = item.firstIndex(of: "#") {
                        guard item[..<hash] == state.me, let number = UInt64(item[item.index(after: hash)...]) else { continue }
                        state.ackedMarkers[process] = max(state.ackedMarkers[process] ?? 0, number)
                    } else if let colon = item.firstIndex(of: ":"), let book = Int64(item[..<colon]),
                              let seq = Int64(item[item.index(after: colon)...]) {
                        state.ackedSeqs[process, default: [:]][book] = max(state.ackedSeqs[process]?[book] ?? .min, seq)
                    }
                }
                let (seqs, marker) = (state.ackedSeqs[process] ?? [:], state.ackedMarkers[process])
                ready = Self.release(process, &state) { wait in Self.acknowledged(wait.mark, seqs: seqs, marker: marker) }
                grant(&state)
            default:
                return
            }
        }
        for done in ready { done() }
        if let flush { flush.eventLoop.execute { self.flushAcknowledgements() } }
    }

    /// Serves from memory on this process's renewal read back, once every other process
    /// present that acknowledges renewals has acknowledged it (or a later one): each noted the
    /// lease before it did, so a write it answers at once (`noLeaseCanMiss`) was committed
    /// before the acknowledgement, and its notice was read here before the acknowledgement. A
    /// process of the first version with leases waits for its own writes' notices, as before.
    private func grant(_ state: inout State) {
        let now = ContinuousClock.now
        guard let renewal = state.unacknowledged, state.leasing, state.othersKnowLeases(at: now),
              state.present(at: now).allSatisfy({ process in
                  !process.hasPrefix(Self.acknowledgingPrefix)
                      || state.acknowledgedRenewals[process].map { $0 >= renewal.number } ?? false
              })
        else { return }
        state.unacknowledged = nil
        cardCache.lease(until: renewal.sent + timing.length)
    }

    /// Stops the waits that `party` holds up (those `releases`), and returns what ends with
    /// that: the waits no one else holds up.
    private static func release(_ party: String, _ state: inout State,
                                where releases: (Wait) -> Bool = { _ in true }) -> [Done] {
        var ready: [Done] = []
        for (id, var wait) in state.waits where wait.awaiting?.contains(party) == true && releases(wait) {
            wait.awaiting?.remove(party)
            if wait.awaiting?.isEmpty == true {
                state.waits[id] = nil
                ready.append(wait.done)
            } else {
                state.waits[id] = wait
            }
        }
        return ready
    }

    private static func scheduleFlush(_ state: inout State) -> PostgresConnection? {
        guard !state.flushScheduled, let connection = state.connection else { return nil }
        state.flushScheduled = true
        return connection
    }

    /// Sends what is owed in one notice, after the notices read in this turn were handled.
    private func flushAcknowledgements() {
        let send = state.withLock { state -> (PostgresConnection, [String])? in
            state.flushScheduled = false
            guard let connection = state.connection,
                  !state.owedSeqs.isEmpty || !state.owedMarkers.isEmpty || !state.owedRenewals.isEmpty else { return nil }
            // A notice's payload holds under 8,000 bytes.
            var payloads: [String] = []
            var payload = ""
            let items = state.owedSeqs.map { " \($0.key):\($0.value)" } + state.owedMarkers.map { " \($0.key)#\($0.value)" }
                + state.owedRenewals.map { " \($0.key)@\($0.value)" }
            for item in items {
                if payload.utf8.count + item.utf8.count > 7_000 {
                    payloads.append(payload)
                    payload = ""
                }
                if payload.isEmpty { payload = "ack \(state.me)" }
                payload += item
            }
            payloads.append(payload)
            state.owedSeqs = [:]
            state.owedMarkers = [:]
            state.owedRenewals = [:]
            return (connection, payloads)
        }
        guard let (connection, payloads) = send else { return }
        for payload in payloads {
            notify(payload, on: connection)
        }
    }

    private let answeredAtOnceCount = Atomic(0)
    /// Writes answered at once with another process on the database (`noLeaseCanMiss`), for tests.
    var answeredAtOnce: Int { answeredAtOnceCount.load(ordering: .relaxed) }
    /// Writes waiting, for tests.
    var waiting: Int { state.withLock { $0.waits.count } }
    /// Other processes' leases known and not run out, for tests.
    var othersLeased: Int { state.withLock { state in state.others.values.filter { $0 > .now }.count } }
}
