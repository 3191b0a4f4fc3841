import Foundation
import Logging

/// A swift-log handler writing one JSON object per line to stderr (`timestamp`, `level`,
/// `label`, `message`, `metadata`), so log collectors can index fields such as the access
/// log's `status` or `remote` without parsing free text.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    /// `write` receives each line (newline included); by default it goes to stderr.
    public init(label: String, logLevel: Logger.Level = .info,
                write: @escaping @Sendable (String) -> Void = JSONLogHandler.writeToStandardError) {
        self.label = label
        self.logLevel = logLevel
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let object: [String: Any] = [
            "timestamp": Self.timestamp(),
            "level": event.level.rawValue,
            "label": label,
            "message": event.message.description,
            "metadata": merged.mapValues(Self.jsonValue),
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        write(String(decoding: data, as: UTF8.self) + "\n")
    }

    public static let writeToStandardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// ISO 8601 in UTC with milliseconds.
    static func timestamp() -> String {
        Date.now.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    static func jsonValue(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(jsonValue)
        case .dictionary(let dictionary): dictionary.mapValues(jsonValue)
        }
    }
}
