import BuildInfo
import DAV
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import RoloStore
import RoloWeb
import ServiceLifecycle

/// The Rolo HTTP server: Hummingbird configured for DAV (every method, streaming body
/// limits, `Expect: 100-continue`, idle timeout) in front of a DAV handler and a store.
public struct RoloServer: Sendable {
    public let configuration: ServerConfiguration
    public let store: any RoloStore
    let handler: DAVHandler
    /// GET and HEAD of cards answered without waiting, in the channel pipeline; nil for none.
    let immediateHandler: ImmediateDAVHandler?
    /// The store lookup a DAV request on a path makes first (`LookupAhead`); nil for none.
    let lookupAhead: LookupAheadMaker?

    /// Makes a request's `LookupAhead` from its decoded path, its method and its headers
    /// (by lower-cased name, repeated fields joined by commas): `DAVService.lookupAhead`.
    typealias LookupAheadMaker = @Sendable (_ path: String, _ method: String, _ header: (String) -> String?) -> LookupAhead?
    /// Forgets the engine's in-memory state (DAV locks) on a test-control reset.
    let resetHandler: @Sendable () async -> Void
    let logger: Logger
    let metrics: ServerMetrics
    /// WebDAV-Push delivery, nil when push is off.
    let push: PushRuntime?

    public init(configuration: ServerConfiguration, store: any RoloStore, handler: @escaping DAVHandler,
                immediateHandler: ImmediateDAVHandler? = nil,
                resetHandler: @escaping @Sendable () async -> Void = {}, logger: Logger? = nil) {
        self.init(configuration: configuration, store: store, handler: handler, immediateHandler: immediateHandler,
                  lookupAhead: nil, resetHandler: resetHandler, logger: logger ?? Self.defaultLogger(configuration),
                  metrics: ServerMetrics(store: store), push: nil)
    }

    init(configuration: ServerConfiguration, store: any RoloStore, handler: @escaping DAVHandler,
         immediateHandler: ImmediateDAVHandler?, lookupAhead: LookupAheadMaker?,
         resetHandler: @escaping @Sendable () async -> Void, logger: Logger, metrics: ServerMetrics, push: PushRuntime?) {
        self.configuration = configuration
        self.store = store
        self.handler = handler
        self.immediateHandler = immediateHandler
        self.lookupAhead = lookupAhead
        self.resetHandler = resetHandler
        self.logger = logger
        self.metrics = metrics
        self.push = push
    }

    static func defaultLogger(_ configuration: ServerConfiguration) -> Logger {
        var logger = Logger(label: "rolo")
        logger.logLevel = configuration.logLevel
        return logger
    }

    /// Runs until SIGTERM or SIGINT, then stops accepting connections and lets in-flight
    /// requests finish. `onRunning` receives the bound port.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let group = ServiceGroup(configuration: .init(
            services: makeServices(onRunning: onRunning),
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }

    /// Starts the server in this process (no signal handling) and returns once it listens.
    /// Its tasks run on threads of their own (`InProcessServerExecutor`), not on the host
    /// program's cooperative pool, which the host's work may hold.
    public func start() async throws -> RunningServer {
        let (ports, continuation) = AsyncThrowingStream.makeStream(of: Int.self)
        let group = ServiceGroup(configuration: .init(
            services: makeServices { port in continuation.yield(port) },
            logger: logger))
        let task = Task(executorPreference: InProcessServerExecutor.shared) {
            do {
                try await group.run()
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
                throw error
            }
        }
        for try await port in ports {
            return RunningServer(port: port, group: group, task: task)
        }
        throw RoloServerError.stoppedBeforeListening
    }

    func makeService(onRunning: @escaping @Sendable (Int) async -> Void) -> any Service {
        makeService(recorder: nil, onRunning: onRunning)
    }

    /// The HTTP service, and beside it the access recorder that must flush when it stops,
    /// the store's upkeep and the push notifier.
    func makeServices(onRunning: @escaping @Sendable (Int) async -> Void) -> [any Service] {
        let recorder = AccessRecorder(store: store, interval: configuration.accessHistoryFlushInterval,
                                      retention: configuration.accessRetention, logger: logger)
        let pushService: [any Service] = push.map { [PushNotifierService(runtime: $0)] } ?? []
        var upkeep = StoreUpkeep(store: store, trashRetention: .seconds(30 * 86_400), sessionIdleLimit: .seconds(2 * 3600),
                                 sessionLifetime: .seconds(7 * 86_400), historyRetention: configuration.historyRetention,
                                 logger: logger)
        if configuration.directory != .off, let directoryStore = store as? any RoloStore & DirectoryStore {
            upkeep.directory = DirectoryRebuild(store: directoryStore, configuration: configuration)
        }
        return [makeService(recorder: recorder, onRunning: onRunning), recorder, upkeep] + pushService
    }

    func makeService(recorder: AccessRecorder?, onRunning: @escaping @Sendable (Int) async -> Void) -> any Service {
        let authenticator = BasicAuthenticator(store: store, cacheLifetime: configuration.credentialCacheLifetime,
                                               throttle: LoginThrottle(configuration.loginThrottle), logger: logger,
                                               sources: configuration.authSources, ldap: configuration.ldap)
        let accessLog = AccessLog(metrics: metrics, logger: logger)
        let responder = RoloResponder(
            configuration: configuration,
            authenticator: authenticator,
            handler: handler,
            lookupAhead: lookupAhead,
            accessLog: accessLog,
            recorder: recorder,
            api: AccountAPI(store: store, clock: store.clock),
            web: makeWebApp(authenticator: authenticator),
            feeds: FeedEndpoint(store: store))
        let limits = configuration.limits
        let idle = TimeAmount.nanoseconds(Int64(configuration.idleTimeout.components.seconds) * 1_000_000_000
            + configuration.idleTimeout.components.attoseconds / 1_000_000_000)
        let front = configuration.frontMiddleware.map { [resetHandler, store] factory in
            factory.makeMiddleware(ServerParts(store: store, limits: limits) {
                await resetHandler()
                authenticator.forgetAll()
            })
        }
        let serverName = "Rolo"
        let date = HTTPDateCache()
        // A front middleware (the test API numbers, records and faults every request) sees
        // every request: none is answered inline then.
        let inlineGets = front == nil && store is any InlineResourceReads ? immediateHandler.map { answer in
            InlineGets(credentials: authenticator.cache, throttle: authenticator.throttle, answer: answer,
                       accessLog: accessLog, recorder: recorder,
                       trustedProxies: configuration.trustedProxies, date: date, serverName: serverName)
        } : nil
        let channelConfiguration = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ExpectContinueHandler(limits: limits)], idleTimeout: idle)
        let address = BindAddress.hostname(configuration.host, port: configuration.port)
        if let front {
            return HTTPService(
                responder: FrontedResponder(front: front, inner: responder), channelConfiguration: channelConfiguration,
                inlineGets: nil, address: address, serverName: serverName, date: date, logger: logger,
                onRunning: onRunning)
        }
        return HTTPService(
            responder: responder, channelConfiguration: channelConfiguration, inlineGets: inlineGets,
            address: address, serverName: serverName, date: date, logger: logger, onRunning: onRunning)
    }
}

extension RoloServer {
    /// The web UI, signing in through the DAV authenticator's throttle; nil (no UI, and `/`
    /// is never redirected) when it is turned off or its templates do not parse.
    func makeWebApp(authenticator: BasicAuthenticator) -> WebApp? {
        guard configuration.webUI else { return nil }
        var web = WebConfiguration(
            pathPrefix: configuration.publicPathPrefix, publicURL: configuration.publicURL,
            davPath: configuration.basePath, version: RoloVersion.current, databasePath: configuration.databasePath,
            maxCardSize: configuration.limits.maxResourceSize, quotaBytes: configuration.limits.quotaBytes,
            profileSigner: configuration.profileSigner)
        web.directory = configuration.directory
        web.directoryFields = configuration.directoryFields
        web.directoryOptOut = configuration.directoryOptOut
        if configuration.directory != .off, let directoryStore = store as? any RoloStore & DirectoryStore {
            let rebuild = DirectoryRebuild(store: directoryStore, configuration: configuration)
            web.rebuildDirectory = { [logger] user in _ = try await rebuild.run(only: user) { logger.warning("directory: \($0)") } }
        }
        do {
            let signOn = configuration.authSources.contains(.oidc)
                ? configuration.oidc.map { OIDCSignOn(provider: $0, store: store, logins: authenticator, logger: logger) } : nil
            return try WebApp(store: store, configuration: web, logError: { [logger] text in logger.error("\(text)") },
                              singleSignOn: signOn, loginFlows: LoginFlows()) { user, password, remote in
                await authenticator.checkWebLogin(user: user, password: password, remoteAddress: remote)
            }
        } catch {
            logger.error("web UI off: its templates do not parse", metadata: ["error": "\(error)"])
            return nil
        }
    }
}

/// A server started in-process; `shutdown()` stops it gracefully.
public final class RunningServer: Sendable {
    /// The port actually bound (useful with configuration port 0).
    public let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port; self.group = group; self.task = task
    }

    /// Stops accepting connections, lets in-flight requests finish, and waits for the end.
    public func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

public enum RoloServerError: Error, Sendable {
    case stoppedBeforeListening
}
