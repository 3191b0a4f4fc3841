import ArgumentParser
import Foundation
import RoloStore

/// `--database PATH` (falling back to `ROLO_DATABASE`, then `./rolo-data/rolo.sqlite`),
/// shared by every command that opens the store.
struct DatabaseOptions: ParsableArguments {
    static let defaultPath = "./rolo-data/rolo.sqlite"

    @Option(name: .long, help: "SQLite database file (env ROLO_DATABASE, default \(DatabaseOptions.defaultPath)).")
    var database: String?

    var resolvedPath: String {
        database ?? Environment.value("ROLO_DATABASE") ?? Self.defaultPath
    }

    /// Opens the store, creating the file and its folder when missing.
    func openStore() throws -> SQLiteStore {
        try SQLiteStore(path: resolvedPath)
    }
}

enum Environment {
    /// A non-empty environment variable.
    static func value(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }
}
