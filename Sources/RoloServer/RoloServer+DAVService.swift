import DAV
import Foundation
import Logging
import RoloStore

extension RoloServer {
    /// The production wiring: the DAV engine over `store`, mounted at the configured base
    /// path with the same limits the server enforces on bodies, and push when the public
    /// URL is known (which makes the VAPID key on a first start). `logger` as in `init`.
    public static func make(configuration: ServerConfiguration, store: any RoloStore,
                            logger: Logger? = nil) async throws -> RoloServer {
        let logger = logger ?? defaultLogger(configuration)
        let metrics = ServerMetrics(store: store)
        let push = try await PushRuntime.make(settings: configuration.push, publicURL: configuration.publicURL,
                                              store: store, logger: logger, onEvent: metrics.record(push:))
        var davConfiguration = DAVConfiguration(
            basePath: configuration.basePath,
            proxyPrefix: configuration.proxyPrefix,
            maxResourceSize: configuration.limits.maxResourceSize,
            maxXMLBodySize: configuration.limits.maxRequestBodySize,
            quotaBytes: configuration.limits.quotaBytes,
            publicBaseURL: configuration.publicURL,
            sequentialLockTokens: configuration.deterministic)
        davConfiguration.push = push?.engine
        davConfiguration.directoryQueryLimit = configuration.directoryQueryLimit
        davConfiguration.directoryGatewayOnly = configuration.directory == .gateway
        let engine = DAVService(store: store, configuration: davConfiguration)
        return RoloServer(configuration: configuration, store: store, handler: engine.handle,
                          immediateHandler: engine.inlineResponse,
                          lookupAhead: store.readsLookupsAhead ? engine.lookupAhead(forPath:method:header:) : nil,
                          resetHandler: engine.releaseAllLocks,
                          logger: logger, metrics: metrics, push: push)
    }
}
