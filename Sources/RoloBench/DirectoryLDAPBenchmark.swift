import CardIndexing
import Foundation
import LDAPClient
import LDAPTestSupport
import RoloServer
import RoloSQLite
import RoloStore

/// `RoloBench directory-ldap [PEOPLE]` (issue 32): a throwaway slapd on 127.0.0.1 with
/// PEOPLE generated people (default 2,000; its size limit of 500 makes the listing page),
/// and a directory rebuilt from it into a new SQLite store. Prints the listing alone (paged
/// search and mapping), the first rebuild, a rebuild after one title changed in LDAP, and
/// one that changes nothing: what the hourly rebuild costs the server and the directory.
func runDirectoryLDAPBenchmark(_ arguments: [String]) async {
    let people = arguments.first.flatMap(Int.init) ?? 2000
    func seconds(since start: ContinuousClock.Instant) -> Double { (ContinuousClock.now - start).inSeconds }
    do {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var start = ContinuousClock.now
        try await withTestDirectory(people: people) { directory in
            print(String(format: "slapd with %d people loaded in %.1f s", people, seconds(since: start)))
            var ldap = LDAPSourceSettings(connection: LDAPSettings(url: directory.url), baseDN: TestDirectory.baseDN)
            ldap.bindDN = TestDirectory.serviceDN
            ldap.bindPassword = TestDirectory.servicePassword
            let store = try SQLiteStore(path: folder.appendingPathComponent("rolo.sqlite").path, bcryptCost: 4)
            defer { try? store.close() }
            let rebuild = DirectoryRebuild(store: store, mode: .all, ldap: ldap)

            start = ContinuousClock.now
            let listed = try await LDAPDirectoryPeople.read(ldap)
            print(String(format: "LDAP listing (paged search, mapping): %d people in %.2f s", listed.people.people.count,
                         seconds(since: start)))
            start = ContinuousClock.now
            let first = try await rebuild.run()
            print(String(format: "first rebuild from LDAP: %d cards in %.2f s", first.added.count, seconds(since: start)))
            try directory.modify("""
                dn: uid=\(TestDirectory.personName(1)),ou=people,\(TestDirectory.baseDN)
                changetype: modify
                replace: title
                title: Chief Engineer

                """)
            start = ContinuousClock.now
            let one = try await rebuild.run()
            print(String(format: "rebuild after one LDAP change: %d changed in %.2f s", one.changed.count, seconds(since: start)))
            start = ContinuousClock.now
            let none = try await rebuild.run()
            print(String(format: "rebuild with no change: %@ in %.2f s", none.isEmpty ? "nothing written" : "WROTE",
                         seconds(since: start)))
        }
    } catch {
        FileHandle.standardError.write(Data("directory-ldap benchmark failed: \(error)\n".utf8))
        exit(1)
    }
}
