/// Settings of the test-control API under `/_rolo/`, which exists only when this is set
/// (`rolo serve --test-api`): harnesses reset state, read the request log and inject faults.
public struct TestAPIConfiguration: Sendable {
    /// Bearer token every `/_rolo/` request must carry (`Authorization: Bearer <token>`).
    public var token: String
    /// Fixture folders loaded at start; `POST /_rolo/reset` erases the store and loads them again.
    public var fixtures: [FixtureSet]

    public init(token: String, fixtures: [FixtureSet] = []) {
        self.token = token; self.fixtures = fixtures
    }
}
