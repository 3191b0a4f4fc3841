import Foundation
import Testing
@testable import RoloStore

@Suite(.closesStores) struct PreconditionRaceTests {
    @Test(arguments: StoreBackend.cardBackends)
    func exactlyOneOfTwoRacingIfMatchPutsWins(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        for round in 0..<40 {
            let base = try await fixture.put("race.vcf", fn: "Base \(round)")
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for contender in 0..<2 {
                    group.addTask {
                        do {
                            try await fixture.put("race.vcf", fn: "Round \(round) contender \(contender)",
                                                  precondition: .ifMatch([base.etag]))
                            return true
                        } catch StoreError.preconditionFailed {
                            return false
                        } catch {
                            Issue.record("unexpected \(error)")
                            return false
                        }
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1, "round \(round)")
            #expect(try await fixture.cards.collection(id: fixture.book.id)?.syncSeq == Int64(round * 2 + 2))
        }
    }

    @Test(arguments: StoreBackend.cardBackends)
    func exactlyOneOfTwoRacingCreatesWins(_ backend: StoreBackend) async throws {
        let fixture = try await StoreFixture.make(backend)
        defer { fixture.close() }
        for round in 0..<40 {
            let wins = await withTaskGroup(of: Int.self) { group in
                for contender in 0..<2 {
                    group.addTask {
                        (try? await fixture.put("new\(round).vcf", fn: "c\(contender)", precondition: .ifNoneMatchAny)) == nil ? 0 : 1
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(wins == 1, "round \(round)")
        }
    }
}
