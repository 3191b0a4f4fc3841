import ArgumentParser
import Foundation
import RoloStore

/// `--database PATH` (falling back to `ROLO_DATABASE`, then `./rolo-data/rolo.sqlite`),
/// shared by every command that opens the store.
struct DatabaseOptions: ParsableArguments {
    static let defaultPath = "./rolo-data/rolo.sqlite"

    @Option(name: .long, help: "SQLite database file (env ROLO_DATABASE, default \(DatabaseOptions.defaultPath)).")
    var database: String?

    var resolvedPath: String { resolvedPath(configured: nil) }

    /// Flag, then `ROLO_DATABASE`, then `configured` (the serve config file), then the default.
    func resolvedPath(configured: String?) -> String {
        database ?? Environment.value("ROLO_DATABASE") ?? configured ?? Self.defaultPath
    }

    /// Opens the store, creating the file and its folder when missing.
    func openStore(path: String? = nil) throws -> SQLiteStore {
        try SQLiteStore(path: path ?? resolvedPath)
    }
}

enum Environment {
    /// A non-empty environment variable.
    static func value(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }
}
