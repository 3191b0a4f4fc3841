import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files that hold everyone's contacts (the database, its log, backups, exports) and the
/// server's keys (kept in the database) are created readable by their owner alone: 0600,
/// folders 0700, whatever the umask. Outside a systemd unit with `UMask=0077` the usual
/// umask 022 would leave them readable by every local account.
public enum PrivateFiles {
    /// Creates `folder` and any missing parents with mode 0700; folders that exist are left
    /// as they are (they may be shared, as /var/lib is).
    public static func createFolder(_ folder: String) throws {
        var missing: [String] = []
        var current = URL(fileURLWithPath: folder).standardizedFileURL
        while !FileManager.default.fileExists(atPath: current.path), current.path != "/" {
            missing.append(current.path)
            current.deleteLastPathComponent()
        }
        for path in missing.reversed() {
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw FileCreationError(path: path, errno: errno, what: "create the folder")
            }
            // mkdir's mode passes through the umask: set it outright.
            _ = chmod(path, 0o700)
        }
    }

    /// Creates the empty file `path` with mode 0600 (and its folder, 0700) unless it exists.
    /// SQLite gives the log and shared-memory files (-wal, -shm) the mode of the database
    /// file, so creating it this way before SQLite opens it keeps all three private.
    public static func createFile(_ path: String) throws {
        // An existing file is left as it is (on a read-only file system too, where O_CREAT fails).
        if FileManager.default.fileExists(atPath: path) { return }
        try createFolder(URL(fileURLWithPath: path).deletingLastPathComponent().path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            if errno == EEXIST { return }
            throw FileCreationError(path: path, errno: errno, what: "create")
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else { throw FileCreationError(path: path, errno: errno, what: "create") }
    }

    /// Writes `data` to `path` through a 0600 temporary file in the same folder, renamed over
    /// `path` once complete: a reader sees the old file or the whole new one, never a part.
    public static func write(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try createFolder(url.deletingLastPathComponent().path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString.prefix(8)).tmp").path
        do {
            try createFile(temporary)
        } catch let error as FileCreationError {
            // Named by the file asked for, not the temporary one beside it.
            throw FileCreationError(path: path, errno: error.errno, what: "write")
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
            guard rename(temporary, path) == 0 else { throw FileCreationError(path: path, errno: errno, what: "write") }
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Whether accounts other than the owner may read `path` (a group or world read bit).
    public static func isReadableByOthers(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return info.st_mode & (S_IRGRP | S_IROTH) != 0
    }
}

/// A file or folder that could not be made, in words: which, what was tried, why.
public struct FileCreationError: Error, CustomStringConvertible {
    public var path: String
    public var errno: Int32
    public var what: String

    public var description: String {
        "cannot \(what) \(path): \(FileProblem.reason(errno: errno, path: path))"
    }
}

/// Why a path cannot be written, in the words of what to do about it.
public enum FileProblem {
    /// A sentence for `errno` met while writing `path` (or creating it).
    public static func reason(errno code: Int32, path: String) -> String {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        switch code {
        case EROFS: return "the folder \(folder) is read-only (a read-only file system); choose a writable location"
        case EACCES, EPERM:
            return "permission denied; run rolo as the user that owns \(folder), or give that user write access"
        case ENOSPC, EDQUOT: return "the disk is full; free some space"
        case ENOENT: return "the folder \(folder) does not exist"
        case ENOTDIR: return "a part of the path is a file, not a folder"
        case EISDIR: return "it is a folder, not a file"
        default: return String(cString: strerror(code))
        }
    }

    /// Why `path` (a file that may not exist yet) cannot be written now, or nil when nothing
    /// in the file system stands in the way: a read-only file system, a file or folder
    /// without write permission, a missing folder.
    public static func writeProblem(at path: String) -> String? {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            if isFolder.boolValue { return "it is a folder, not a database file" }
            if access(path, W_OK) != 0 { return reason(errno: errno, path: path) }
        }
        // The folder must take new files: SQLite creates the -wal and -shm files beside it.
        var folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        if access(folder.path, W_OK) != 0 { return reason(errno: errno, path: folder.appendingPathComponent("x").path) }
        return nil
    }
}
