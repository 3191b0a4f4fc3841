import DAV
import Foundation
import RoloStore

extension RoloServer {
    /// The production wiring: the DAV engine over `store`.
    public static func make(configuration: ServerConfiguration, store: any RoloStore) -> RoloServer {
        // Placeholder until the DAV engine lands: every DAV request answers 501.
        RoloServer(configuration: configuration, store: store) { _ in
            DAVResponse(status: 501, headers: [("Content-Type", "text/plain")], body: Data("DAV engine missing\n".utf8))
        }
    }
}
