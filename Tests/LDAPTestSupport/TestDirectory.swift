import Foundation
import LoopbackSockets
import ProcessLaunch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway OpenLDAP server (Debian's `slapd`) for the LDAP tests: started as a normal
/// process on a free loopback port, from a `slapd.conf` in a temporary folder (mdb backend,
/// the memberof overlay), with the small directory in `TestDirectory.ldif`; never a system
/// instance. With `tls`, it also answers `ldaps://` on a second port and StartTLS on the
/// first, with a certificate for 127.0.0.1 from a throwaway CA made by `openssl` (`caFile`). `withTestDirectory` stops it and removes its folder however the test ends; a
/// watcher stops it too if the test process dies first. No slapd installed is a failure,
/// never a skip (`scripts/install-deps.sh --test` installs it).
public final class TestDirectory: Sendable {
    public static let baseDN = "dc=example,dc=org"
    /// The account Rolo searches with; not an administrator of the directory.
    public static let serviceDN = "cn=rolo-service,dc=example,dc=org"
    public static let servicePassword = "service-secret"
    /// The directory's own administrator, used only to load the entries.
    static let rootDN = "cn=admin,dc=example,dc=org"
    static let rootPassword = "admin-secret"

    /// The users, each `uid=<name>,ou=people,dc=example,dc=org` with the password `<name>-password`
    /// (`carol@example.org` has `carol@example.org-password`).
    public static let users = ["alice", "bob", "carol@example.org"]

    /// The entries: the service account, the users, groupOfNames `rolo-users` (alice, carol)
    /// and `rolo-admins` (alice), and posixGroup `staff` (memberUid bob). The memberof overlay
    /// gives members of the groupOfNames groups a `memberOf` attribute.
    public static let ldif = """
        dn: dc=example,dc=org
        objectClass: dcObject
        objectClass: organization
        dc: example
        o: Example

        dn: ou=people,dc=example,dc=org
        objectClass: organizationalUnit
        ou: people

        dn: ou=groups,dc=example,dc=org
        objectClass: organizationalUnit
        ou: groups

        dn: cn=rolo-service,dc=example,dc=org
        objectClass: organizationalRole
        objectClass: simpleSecurityObject
        cn: rolo-service
        userPassword: service-secret

        dn: uid=alice,ou=people,dc=example,dc=org
        objectClass: inetOrgPerson
        uid: alice
        cn: Alice Archer
        sn: Archer
        mail: alice@example.org
        userPassword: alice-password

        dn: uid=bob,ou=people,dc=example,dc=org
        objectClass: inetOrgPerson
        uid: bob
        cn: Bob Baker
        sn: Baker
        mail: bob@example.org
        userPassword: bob-password

        dn: uid=carol@example.org,ou=people,dc=example,dc=org
        objectClass: inetOrgPerson
        uid: carol@example.org
        cn: Carol Carter
        sn: Carter
        mail: carol@example.org
        userPassword: carol@example.org-password

        dn: cn=rolo-users,ou=groups,dc=example,dc=org
        objectClass: groupOfNames
        cn: rolo-users
        member: uid=alice,ou=people,dc=example,dc=org
        member: uid=carol@example.org,ou=people,dc=example,dc=org

        dn: cn=rolo-admins,ou=groups,dc=example,dc=org
        objectClass: groupOfNames
        cn: rolo-admins
        member: uid=alice,ou=people,dc=example,dc=org

        dn: cn=staff,ou=groups,dc=example,dc=org
        objectClass: posixGroup
        cn: staff
        gidNumber: 5000
        memberUid: bob

        """

    /// `count` generated people for the directory tests (issue 32): `person0001`... below
    /// ou=people, each with the password `<uid>-password` and every attribute the directory
    /// maps (display name, e-mail, work and mobile phones, title, department, organisation),
    /// in ten departments `dept-0`...`dept-9`.
    public static func peopleLDIF(_ count: Int) -> String {
        (0..<count).map { offset in
            let index = offset + 1
            let uid = personName(index)
            let number = String(format: "%04d", index)
            return """
                dn: uid=\(uid),ou=people,dc=example,dc=org
                objectClass: inetOrgPerson
                uid: \(uid)
                cn: Person \(index)
                sn: Number\(index)
                displayName: Person Number\(index)
                mail: \(uid)@example.org
                telephoneNumber: +1 555 \(number)
                mobile: +1 666 \(number)
                title: Engineer \(index % 7)
                departmentNumber: dept-\(index % 10)
                o: Example
                userPassword: \(uid)-password

                """
        }.joined(separator: "\n")
    }

    /// The name of generated person `index` (1-based): `person0001`.
    public static func personName(_ index: Int) -> String { "person" + String(format: "%04d", index) }

    /// The DN of user `name`.
    public static func userDN(_ name: String) -> String { "uid=\(name),ou=people,\(baseDN)" }
    /// The password of user `name`.
    public static func password(of name: String) -> String { "\(name)-password" }

    public let port: Int
    /// The `ldaps://` port, for a directory started with `tls`.
    public let tlsPort: Int?
    public let folder: String
    private let process: SpawnedProcess
    /// The ports of a stopped server, bound (not listening) until `stop()`, so that a test
    /// of a directory gone away finds nobody there rather than whoever took the port next.
    private let heldPorts = Mutex<[Int32]>([])

    /// `ldap://127.0.0.1:<port>`.
    public var url: String { "ldap://127.0.0.1:\(port)" }
    /// `ldaps://127.0.0.1:<tlsPort>`, for a directory started with `tls`.
    public var tlsURL: String? { tlsPort.map { "ldaps://127.0.0.1:\($0)" } }
    /// The throwaway CA's certificate (PEM), for a directory started with `tls`.
    public var caFile: String { "\(folder)/ca.crt" }

    private init(port: Int, tlsPort: Int?, folder: String, process: SpawnedProcess) {
        self.port = port
        self.tlsPort = tlsPort
        self.folder = folder
        self.process = process
    }

    /// A started server holding `ldif` (with `tls`, also on `ldaps://` and with StartTLS).
    /// The caller stops it (`withTestDirectory` does).
    /// With `people`, that many generated people too (`peopleLDIF`).
    public static func start(tls: Bool = false, people: Int = 0) async throws -> TestDirectory {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("rolo-slapd-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: "\(folder)/data", withIntermediateDirectories: true)
        do {
            if tls { try await offThread { try makeCertificates(folder: folder) } }
            try configuration(folder: folder, tls: tls).write(toFile: "\(folder)/slapd.conf", atomically: true, encoding: .utf8)
            try (ldif + (people > 0 ? "\n" + peopleLDIF(people) : "")).write(toFile: "\(folder)/directory.ldif",
                                                                              atomically: true, encoding: .utf8)
            // A port free a moment ago may be taken before slapd binds it: try a few.
            var lastFailure: Error = TestDirectoryError("slapd did not start")
            for _ in 0..<3 {
                let port = try LoopbackSocket.freePort()
                let tlsPort = tls ? try LoopbackSocket.freePort() : nil
                do {
                    let directory = try await launch(folder: folder, port: port, tlsPort: tlsPort)
                    do {
                        try await offThread { try directory.load() }
                        return directory
                    } catch {
                        _ = try? await offThread { directory.stop() }
                        throw error
                    }
                } catch let failure as TestDirectoryError where failure.retryable {
                    lastFailure = failure
                }
            }
            throw lastFailure
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its folder. Idempotent.
    public func stop() {
        endProcess()
        heldPorts.withLock { descriptors in
            descriptors.forEach { close($0) }
            descriptors = []
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Stops the server but keeps its folder and holds its ports until `stop()` (for a test
    /// of a directory gone away: a connection is refused, never answered by another test's
    /// server that took the port, nor connected to itself).
    public func stopServer() {
        guard process.isRunning else { return }
        endProcess()
        let reserved = ([port] + (tlsPort.map { [$0] } ?? [])).compactMap(LoopbackSocket.reserve(port:))
        heldPorts.withLock { $0 += reserved }
    }

    private func endProcess() {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<50 where process.isRunning { usleep(100_000) }
        if process.isRunning { process.send(SIGKILL) }
        process.waitUntilExit()
    }

    private static func configuration(folder: String, tls: Bool) -> String {
        (tls ? """
        TLSCACertificateFile \(folder)/ca.crt
        TLSCertificateFile \(folder)/server.crt
        TLSCertificateKeyFile \(folder)/server.key

        """ : "") + """
        include /etc/ldap/schema/core.schema
        include /etc/ldap/schema/cosine.schema
        include /etc/ldap/schema/inetorgperson.schema
        include /etc/ldap/schema/nis.schema
        # The default limit of a plain search, as a real directory has one; a paged search
        # (RFC 2696) may list more, as Active Directory and 389-DS allow.
        sizelimit size.soft=500 size.hard=500 size.prtotal=unlimited
        pidfile \(folder)/slapd.pid
        argsfile \(folder)/slapd.args
        modulepath /usr/lib/ldap
        moduleload back_mdb
        moduleload memberof
        database mdb
        maxsize 16777216
        suffix "\(baseDN)"
        rootdn "\(rootDN)"
        rootpw \(rootPassword)
        directory \(folder)/data
        overlay memberof
        access to attrs=userPassword by anonymous auth by * none
        access to * by * read

        """
    }

    /// Starts slapd in the foreground (`-d 0`: no detaching, so this process owns it) and
    /// waits until its port accepts.
    private static func launch(folder: String, port: Int, tlsPort: Int?) async throws -> TestDirectory {
        let listeners = ["ldap://127.0.0.1:\(port)/"] + (tlsPort.map { ["ldaps://127.0.0.1:\($0)/"] } ?? [])
        let process = try SpawnedProcess("/usr/sbin/slapd", ["-d", "0", "-f", "\(folder)/slapd.conf",
                                                            "-h", listeners.joined(separator: " ")],
                                         stdout: .null, stderr: .file("\(folder)/slapd.log"))
        let directory = TestDirectory(port: port, tlsPort: tlsPort, folder: folder, process: process)
        // Stops slapd if this process dies before `stop()` (a crash, a killed test run).
        _ = try? SpawnedProcess("/bin/sh", ["-c", "while kill -0 \(getpid()) 2>/dev/null && kill -0 \(process.processIdentifier) 2>/dev/null; do sleep 1; done; kill \(process.processIdentifier) 2>/dev/null"],
                                stdout: .null, stderr: .null)
        for _ in 0..<200 {
            guard process.isRunning else {
                let log = (try? String(contentsOfFile: "\(folder)/slapd.log", encoding: .utf8)) ?? ""
                throw TestDirectoryError("slapd exited: \(log)", retryable: log.contains("Address already in use"))
            }
            if let socketFD = try? LoopbackSocket.connect(port: tlsPort ?? port) {
                close(socketFD)
                return directory
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        directory.endProcess()
        throw TestDirectoryError("slapd did not listen on port \(port) within 10 s")
    }

    /// A CA and a certificate it signs for 127.0.0.1 (and localhost), made by `openssl`.
    private static func makeCertificates(folder: String) throws {
        try run(["/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                 "-subj", "/CN=Rolo test CA", "-keyout", "\(folder)/ca.key", "-out", "\(folder)/ca.crt"])
        try run(["/usr/bin/openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                 "-keyout", "\(folder)/server.key", "-out", "\(folder)/server.csr"])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: "\(folder)/san.ext", atomically: true, encoding: .utf8)
        try run(["/usr/bin/openssl", "x509", "-req", "-in", "\(folder)/server.csr", "-CA", "\(folder)/ca.crt",
                 "-CAkey", "\(folder)/ca.key", "-CAcreateserial", "-days", "2", "-extfile", "\(folder)/san.ext",
                 "-out", "\(folder)/server.crt"])
    }

    /// Runs a tool to its end; its error output in the failure.
    private static func run(_ command: [String]) throws {
        let child = try SpawnedProcess(command[0], Array(command.dropFirst()), stdout: .null, stderr: .pipe)
        let errors = String(decoding: readToEnd(child.standardError!), as: UTF8.self)
        child.waitUntilExit()
        guard child.terminationStatus == 0 else { throw TestDirectoryError("\(command[0]) failed: \(errors)") }
    }

    /// Applies `ldif` (changetype records: delete an entry, drop a member) as the directory's
    /// administrator, for a test of a user who leaves the directory or a group.
    public func modify(_ ldif: String) throws {
        let file = "\(folder)/change-\(UUID().uuidString).ldif"
        try ldif.write(toFile: file, atomically: true, encoding: .utf8)
        try Self.run(["/usr/bin/ldapmodify", "-x", "-H", url, "-D", Self.rootDN, "-w", Self.rootPassword, "-f", file])
    }

    /// Adds `ldif` through the running server (so the memberof overlay sees the groups).
    private func load() throws {
        try Self.run(["/usr/bin/ldapadd", "-x", "-H", url, "-D", Self.rootDN, "-w", Self.rootPassword,
                      "-f", "\(folder)/directory.ldif"])
    }
}

/// Runs `body` with a started directory, stopped after it however it ends.
public func withTestDirectory<T>(tls: Bool = false, people: Int = 0,
                                 _ body: (TestDirectory) async throws -> T) async throws -> T {
    let directory = try await TestDirectory.start(tls: tls, people: people)
    do {
        let result = try await body(directory)
        try await offThread { directory.stop() }
        return result
    } catch {
        _ = try? await offThread { directory.stop() }
        throw error
    }
}

public struct TestDirectoryError: Error, CustomStringConvertible {
    public var description: String
    var retryable: Bool
    init(_ description: String, retryable: Bool = false) {
        self.description = description
        self.retryable = retryable
    }
}
