import DAV
import Foundation
import Logging
import RoloStore

extension RoloServer {
    /// The production wiring: the DAV engine over `store`, mounted at the configured base
    /// path with the same limits the server enforces on bodies. `logger` as in `init`.
    public static func make(configuration: ServerConfiguration, store: any RoloStore, logger: Logger? = nil) -> RoloServer {
        let engine = DAVService(store: store, configuration: DAVConfiguration(
            basePath: configuration.basePath,
            proxyPrefix: configuration.proxyPrefix,
            maxResourceSize: configuration.limits.maxResourceSize,
            maxXMLBodySize: configuration.limits.maxRequestBodySize,
            publicBaseURL: configuration.publicURL,
            sequentialLockTokens: configuration.deterministic))
        return RoloServer(configuration: configuration, store: store, handler: engine.handle,
                          immediateHandler: engine.immediateResponse, resetHandler: engine.releaseAllLocks,
                          logger: logger)
    }
}
