/// Polls `condition` every 50 ms until it holds or 30 s pass; the caller's expectations then
/// judge the result. For work the server does after answering (access history, push
/// registrations): a fixed sleep fails on a loaded CI machine and wastes time on an idle one.
func eventually(_ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
}
