import DAV
import Foundation
import Testing

/// Figures, not assertions: run with `ROLO_DAV_BENCH=1 swift test --filter EngineBenchmark`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["ROLO_DAV_BENCH"] != nil))
struct EngineBenchmark {
    @Test func propfindAndMultigetOverAThousandCards() async throws {
        let dav = try await TestDAV()
        for index in 0..<1000 {
            await dav.putCard(uid: "b\(index)", fn: "Person \(index)", extra: "EMAIL:p\(index)@example.com\nTEL:+1 555 \(index)")
        }
        let clock = ContinuousClock()
        let propfind = await clock.measure {
            let response = await dav.propfind("/dav/addressbooks/alice/default/", depth: "1",
                                              props: ["{DAV:}getetag", "{DAV:}getcontenttype", "{DAV:}resourcetype"])
            #expect(response.status == 207)
        }
        let hrefs = (0..<500).map { "/dav/addressbooks/alice/default/b\($0).vcf" }
        let body = AddressbookMultigetTests.multiget(hrefs)
        let multiget = await clock.measure {
            let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/", body: body)
            #expect(response.status == 207)
        }
        let sync = await clock.measure {
            let response = await dav.send("REPORT", "/dav/addressbooks/alice/default/", body: SyncCollectionTests.sync())
            #expect(response.status == 207)
        }
        print("BENCH propfind depth 1 x1000: \(propfind); multiget x500 with address-data: \(multiget); initial sync x1000: \(sync)")
    }
}
