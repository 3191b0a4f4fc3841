import Foundation
import ProcessLaunch
import Testing
@testable import RoloSQLite
@testable import RoloStore

/// `RoloBench store-crash-writer`, built beside the test bundle by `swift build --build-tests`.
private let crashWriter: URL? = {
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("RoloBench"),
        packageRoot.appendingPathComponent(".build/debug/RoloBench"),
    ]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
}()

/// Mirrors `crashCardBody` in Sources/RoloBench/StoreBenchmark.swift (an executable target
/// cannot be imported).
private func expectedBody(_ index: Int) -> Data {
    Data("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:crash-\(index)\r\nFN:Crash \(index)\r\nNOTE:\(String(repeating: "x", count: index % 500))\r\nEND:VCARD\r\n".utf8)
}

@Suite(.serialized) struct CrashDurabilityTests {
    /// One writer, then eight at once (whose puts share transactions through group commit).
    @Test(.enabled(if: crashWriter != nil, "RoloBench not built: run swift build --build-tests"), arguments: [1, 8])
    func everyAcknowledgedPutSurvivesSIGKILLWhole(writers: Int) async throws {
        var acknowledgedInAllRounds = 0
        for round in 0..<4 {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-crash-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("crash.sqlite").path

            let process = try SpawnedProcess(crashWriter!.path, ["store-crash-writer", path, String(writers)])
            let printedSoFar = PrintedLines(process.standardOutput!)
            // Killed at a random moment once the writer has acknowledged its first put (a fixed
            // delay from the launch killed it before it started on a loaded machine).
            let started = ContinuousClock.now
            while printedSoFar.lines == 0, ContinuousClock.now - started < .seconds(60) {
                try await Task.sleep(for: .milliseconds(5))
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...400) + 100 * round))
            process.send(SIGKILL)
            await process.exited()
            #expect(process.terminationReason == .uncaughtSignal)
            let printed = String(decoding: await printedSoFar.all(), as: UTF8.self)
                .split(separator: "\n").map(String.init)
            acknowledgedInAllRounds += printed.count

            guard FileManager.default.fileExists(atPath: path) else {
                #expect(printed.isEmpty)
                continue
            }
            let store = try SQLiteStore(path: path, bcryptCost: 4)
            defer { try? store.close() }
            #expect(try await store.integrityCheck() == [], "round \(round)")
            guard let book = try await store.collection(owner: "crash", path: ["default"]) else {
                #expect(printed.isEmpty)
                continue
            }
            let stored = try await store.allResources(collectionID: book.id)
            let storedNames = Set(stored.map(\.info.name))
            for name in printed { #expect(storedNames.contains(name), "acknowledged \(name) lost in round \(round)") }
            // At most one put per writer committed before its name was printed.
            #expect(stored.count <= printed.count + writers)
            let changes = try await store.changes(collectionID: book.id, since: 0, limit: nil)
            #expect(Set(changes.changes.map(\.name)) == storedNames)
            for resource in stored {
                let index = Int(resource.info.name.dropFirst("crash-".count).dropLast(".vcf".count))!
                #expect(resource.data == expectedBody(index), "\(resource.info.name) half-written")
                let indexed = try await store.query(
                    collectionID: book.id,
                    predicate: .textMatch(property: "FN", text: "crash \(index)", collation: .asciiCasemap, match: .equals, negate: false),
                    limit: nil)
                #expect(indexed == [resource.info.name], "index rows of \(resource.info.name)")
            }
        }
        #expect(acknowledgedInAllRounds > 0, "the writer never got a put through before the kill")
    }
}

/// What the crash writer prints, read on a thread of its own as it comes (EINTR-safe reads).
private final class PrintedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var ended = false

    init(_ descriptor: Int32) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = readChunk(descriptor)
                lock.withLock { if chunk.isEmpty { ended = true } else { data.append(chunk) } }
                if chunk.isEmpty {
                    close(descriptor)
                    return
                }
            }
        }
    }

    /// Complete lines so far.
    var lines: Int { lock.withLock { data.count(where: { $0 == UInt8(ascii: "\n") }) } }

    /// Everything, once the pipe has ended (the writer is dead, so it ends at once).
    func all() async -> Data {
        while !lock.withLock({ ended }) { try? await Task.sleep(for: .milliseconds(5)) }
        return lock.withLock { data }
    }
}
