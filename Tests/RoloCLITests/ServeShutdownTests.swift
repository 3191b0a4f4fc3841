import Foundation
import LoopbackSockets
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `rolo serve` on SIGTERM, as a service manager stops it: the request in flight is
/// answered, new connections are refused, the write-ahead log ends up in the database
/// (checkpointed and truncated), and the process exits 0.
@Suite struct ServeShutdownTests {
    static func card(_ uid: String) -> String {
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:Card \(uid)\r\nN:\(uid);Card;;;\r\nEND:VCARD\r\n"
    }

    @Test func sigtermFinishesTheRequestInFlightTruncatesTheLogAndExitsZero() async throws {
        let (folder, database) = try temporaryDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await ImportInterruptionTests.addUser("sam", database: database)
        let serve = try ServeProcess(database: database)
        defer { if serve.process.isRunning { serve.process.send(SIGKILL) } }
        let port = try await serve.waitUntilListening()
        let book = "/dav/addressbooks/sam/default/"

        let first = try await curlStatus(["-u", "sam:pw-12345678", "-X", "PUT", "-H", "Content-Type: text/vcard",
                                          "--data-binary", Self.card("before"), "http://127.0.0.1:\(port)\(book)before.vcf"])
        #expect(first == 201)
        let wal = database + "-wal"
        let walBefore = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
        #expect(walBefore > 0, "a write leaves frames in the log")

        // A PUT whose head the server has read (it answered 100 Continue) and whose body has
        // not come yet: in flight when SIGTERM arrives.
        let body = Array(Self.card("during").utf8)
        let socket = try LoopbackSocket.connect(port: port)
        defer { close(socket) }
        let head = "PUT \(book)during.vcf HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Basic \(Data("sam:pw-12345678".utf8).base64EncodedString())\r\n"
            + "Content-Type: text/vcard\r\nContent-Length: \(body.count)\r\nExpect: 100-continue\r\n\r\n"
        try Self.send(Array(head.utf8), to: socket)
        #expect(try Self.readHead(from: socket).hasPrefix("HTTP/1.1 100"))

        serve.process.send(SIGTERM)
        // Shutdown has begun once the listener is gone.
        var refused = false
        for _ in 0..<500 where !refused {
            do {
                close(try LoopbackSocket.connect(port: port))
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                refused = true
            }
        }
        #expect(refused, "the server stops accepting connections on SIGTERM")
        #expect(serve.process.isRunning, "it waits for the request in flight")

        try Self.send(body, to: socket)
        let answer = try Self.readHead(from: socket)
        #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer)")

        // No second signal: the exit must come from the first one.
        for _ in 0..<500 where serve.process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!serve.process.isRunning, "exits within seconds of SIGTERM")
        if serve.process.isRunning { serve.process.send(SIGKILL) }
        serve.process.waitUntilExit()
        #expect(serve.process.terminationReason == .exit)
        #expect(serve.process.terminationStatus == 0, "\(serve.stderr.current)")
        let walAfter = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
        #expect(walAfter == 0, "the log is checkpointed into the database and truncated (or removed)")

        let exported = try await RoloBinary.run(["export", "sam", "default", "--database", database])
        #expect(exported.stdout == Self.card("before") + Self.card("during"))
    }

    static func send(_ bytes: [UInt8], to socket: Int32) throws {
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, 0) }
            guard written > 0 else { throw ServeError(message: "send failed") }
            sent += written
        }
    }

    /// Reads one response head (through its blank line) and returns it.
    static func readHead(from socket: Int32) throws -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while !bytes.suffix(4).elementsEqual([13, 10, 13, 10]) {
            guard recv(socket, &byte, 1, 0) == 1 else { throw ServeError(message: "connection ended: \(bytes)") }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
