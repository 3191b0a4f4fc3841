import Foundation

/// Built two ways. With `-D ROLO_FUZZING` and `--sanitize fuzzer` (scripts/fuzz.sh),
/// libFuzzer provides `main` and calls `LLVMFuzzerTestOneInput` with each input; the
/// target is named by the `ROLO_FUZZ_TARGET` environment variable, so one instrumented
/// binary serves every target. In a plain `swift build` it is a replay tool instead:
/// `rolo-fuzz TARGET FILE-OR-FOLDER...` runs the same checks on saved inputs (a crash
/// file from a fuzz run, or a corpus), which is how a finding is reproduced in a debugger.

#if ROLO_FUZZING
/// The target, read once: libFuzzer calls the entry point millions of times.
private let selectedTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["ROLO_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        fatalError("set ROLO_FUZZ_TARGET to one of: \(names)")
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    selectedTarget.run(bytes)
    return 0
}
#else
@main
enum Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("usage: rolo-fuzz \(names) FILE-OR-FOLDER...\n".utf8))
            exit(2)
        }
        var count = 0
        for path in arguments.dropFirst() {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                target.run(Array(data))
                count += 1
            }
        }
        print("\(target.rawValue): \(count) inputs, no finding")
    }

    /// The file itself, or the regular files in a folder (not recursive), sorted.
    static func files(at path: String) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return [] }
        guard isFolder.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }.filter {
            var folder: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &folder) && !folder.boolValue
        }
    }
}
#endif
