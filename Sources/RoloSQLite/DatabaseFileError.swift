import Foundation
import GRDB

/// An SQLite database file that could not be opened, created or written, said as a person
/// can act on it ("cannot write /var/lib/rolo/rolo.sqlite: the folder … is read-only"),
/// never as `SQLite error 14` alone.
public struct DatabaseFileError: Error, CustomStringConvertible {
    public var path: String
    /// The whole sentence, path included.
    public var problem: String

    public var description: String { problem }
}

extension SQLiteStore {
    /// Runs `body`, turning an SQLite error about the file (cannot open, read-only, I/O, disk
    /// full, not a database) into a `DatabaseFileError` naming `path` and what stands in the way.
    static func describingFileErrors<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw describe(error, path: path) ?? error
        }
    }

    /// Any error from this store's work, with SQLite's errors about its file put in words
    /// (`DatabaseFileError`); others unchanged.
    public func describingFileErrors(_ error: any Error) -> any Error {
        guard let databaseError = error as? DatabaseError else { return error }
        return Self.describe(databaseError, path: path) ?? error
    }

    static func describe(_ error: DatabaseError, path: String) -> DatabaseFileError? {
        switch error.resultCode {
        case .SQLITE_NOTADB:
            return DatabaseFileError(path: path, problem: "cannot open \(path): it is not an SQLite database (a wrong --database path, or a damaged file)")
        case .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_IOERR:
            let reason = FileProblem.writeProblem(at: path) ?? error.message ?? "\(error.resultCode)"
            return DatabaseFileError(path: path, problem: "cannot write \(path): \(reason)")
        case .SQLITE_FULL:
            return DatabaseFileError(path: path, problem: "cannot write \(path): the disk is full; free some space")
        default:
            return nil
        }
    }
}
