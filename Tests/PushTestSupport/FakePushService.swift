import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// A push service inside the test process, on a free 127.0.0.1 port: it records every POST
/// and answers each path as told (201 by default), so delivery can be tested offline.
public final class FakePushService: Sendable {
    /// One POST as it arrived.
    public struct Received: Sendable {
        public var path: String
        /// Header names lower-cased; a repeated header keeps its last value.
        public var headers: [String: String]
        public var body: Data
    }

    /// How to answer a path.
    public enum Answer: Sendable {
        case status(Int, headers: [String: String] = [:])
        /// Sleep this long, then answer 201: longer than the sender's timeout, it is a hang.
        case delay(Duration)
    }

    public let port: Int
    private let recorder: Recorder
    private let task: Task<Void, any Error>

    private init(port: Int, recorder: Recorder, task: Task<Void, any Error>) {
        self.port = port; self.recorder = recorder; self.task = task
    }

    /// Starts listening; `stop()` ends it.
    public static func start() async throws -> FakePushService {
        let recorder = Recorder()
        let router = Router()
        router.post("**") { request, _ -> Response in
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let body = try await request.body.collect(upTo: 1 << 20)
            switch recorder.record(Received(path: request.uri.path, headers: headers, body: Data(body.readableBytesView))) {
            case .status(let code, let extra):
                var fields = HTTPFields()
                for (name, value) in extra { if let name = HTTPField.Name(name) { fields[name] = value } }
                return Response(status: .init(code: code), headers: fields)
            case .delay(let duration):
                try await Task.sleep(for: duration)
                return Response(status: .created)
            }
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "fake-push-service")
        logger.logLevel = .critical
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in
                                  portContinuation.yield(channel.localAddress?.port ?? 0)
                                  portContinuation.finish()
                              }, logger: logger)
        // Off the cooperative pool: see `ServiceThread`.
        let task = Task(executorPreference: ServiceThread.shared) {
            defer { portContinuation.finish() }
            try await app.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            try await task.value
            throw CancellationError()
        }
        return FakePushService(port: port, recorder: recorder, task: task)
    }

    /// Stops listening; requests still in a `.delay` are cut off.
    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String = "/push/1") -> URL {
        URL(string: "\(origin)\(path)")!
    }

    /// `http://127.0.0.1:<port>`: the `aud` a sender must sign for `url(_:)`.
    public var origin: String { "http://127.0.0.1:\(port)" }

    /// Answers POSTs to `path` with `answer` from now on.
    public func answer(_ path: String, with answer: Answer) {
        recorder.state.withLock { $0.answers[path] = answer }
    }

    /// Every POST so far, in arrival order.
    public var received: [Received] { recorder.state.withLock { $0.received } }

    /// Waits until at least `count` POSTs have arrived or `timeout` passes, then returns
    /// them all.
    public func waitForRequests(count: Int, timeout: Duration = .seconds(10)) async -> [Received] {
        let id = UUID()
        await withTaskGroup(of: Void.self) { [recorder] group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let arrived = recorder.state.withLock { state -> Bool in
                        // Cancelled: the timeout won before this ran, and `release` may be past.
                        if state.received.count >= count || Task.isCancelled { return true }
                        state.waiters.append(Waiter(id: id, count: count, continuation: continuation))
                        return false
                    }
                    if arrived { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
            // On a timeout the waiter is still parked: release it so the group can end.
            recorder.release(id)
        }
        return received
    }

    private struct Waiter {
        var id: UUID
        var count: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var received: [Received] = []
        var answers: [String: Answer] = [:]
        var waiters: [Waiter] = []
    }

    /// What the route and the test share.
    private final class Recorder: Sendable {
        let state = Mutex(State())

        func record(_ received: Received) -> Answer {
            let (answer, ready) = state.withLock { state -> (Answer, [Waiter]) in
                state.received.append(received)
                let total = state.received.count
                let ready = state.waiters.filter { $0.count <= total }
                state.waiters.removeAll { $0.count <= total }
                return (state.answers[received.path] ?? .status(201), ready)
            }
            for waiter in ready { waiter.continuation.resume() }
            return answer
        }

        func release(_ id: UUID) {
            let parked = state.withLock { state -> [Waiter] in
                let parked = state.waiters.filter { $0.id == id }
                state.waiters.removeAll { $0.id == id }
                return parked
            }
            for waiter in parked { waiter.continuation.resume() }
        }
    }
}

/// Runs `body` with a fresh fake push service and always stops it.
public func withFakePushService<T>(isolation: isolated (any Actor)? = #isolation,
                                   _ body: (FakePushService) async throws -> T) async throws -> T {
    let service = try await FakePushService.start()
    do {
        let result = try await body(service)
        await service.stop()
        return result
    } catch {
        await service.stop()
        throw error
    }
}
