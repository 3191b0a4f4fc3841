import Logging

/// Holds a logger's metadata itself and hands it to `Inner` only when a line is written.
/// swift-log's `StreamLogHandler` formats its metadata each time it is set, and Hummingbird
/// tags every request's logger with a request id: that was a formatted string per request
/// (about 3% of a cached GET) even when nothing is logged.
public struct DeferredMetadataLogHandler<Inner: LogHandler>: LogHandler {
    private var inner: Inner
    public var metadata: Logger.Metadata

    public init(_ inner: Inner) {
        self.inner = inner
        self.metadata = inner.metadata
    }

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var handler = inner
        handler.metadata = metadata
        handler.log(event: event)
    }
}
