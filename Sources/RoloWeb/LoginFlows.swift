import Foundation
import RoloStore

/// Nextcloud Login Flow v2, as DAVx5, Thunderbird's CardBook and other clients use it to get
/// an app password through the browser: a client starts a flow (`POST /index.php/login/v2`,
/// answered by the server), sends the person to the flow's page in the web UI, where the
/// signed-in user grants it access (an app password named after the client is made), and
/// polls until it gets that password, exactly once.
///
/// Flows live in memory for 20 minutes, not in the store: they are short, a restart only
/// makes the client start over, and no migration is needed. The poll token, the only secret
/// that yields the password, is kept as its SHA-256 alone. The cost: behind a round-robin
/// pair of processes (deploy/scale-out) a flow is known only to the process that started
/// it, so that set-up needs sticky routing for `/index.php/login/` and `/web/login-flow/`.
public actor LoginFlows {
    public static let lifetime: Duration = .seconds(20 * 60)
    /// Flows under way at most (anyone may start one): beyond it the oldest is dropped.
    static let maximum = 10_000

    struct Flow {
        var client: String
        var pollHash: String
        var started: ContinuousClock.Instant
        var granted: Grant?
    }

    public struct Grant: Sendable, Equatable {
        public var user: String
        public var appPassword: String
    }

    /// By login ID (the last segment of the flow's page).
    private var flows: [String: Flow] = [:]

    public init() {}

    /// A new flow for the client `userAgent` names: its poll token and login ID.
    public func start(client: String) -> (pollToken: String, loginID: String) {
        prune()
        let pollToken = Tokens.random(bytes: 32), loginID = Tokens.random(bytes: 24)
        flows[loginID] = Flow(client: Self.clientName(client), pollHash: Tokens.sha256Hex(pollToken), started: .now)
        return (pollToken, loginID)
    }

    /// The client a flow names, while it waits for a grant.
    func client(loginID: String) -> String? {
        prune()
        guard let flow = flows[loginID], flow.granted == nil else { return nil }
        return flow.client
    }

    /// Hands the flow its app password; false when it has expired or was granted already.
    func grant(loginID: String, _ grant: Grant) -> Bool {
        prune()
        guard flows[loginID]?.granted == nil, flows[loginID] != nil else { return false }
        flows[loginID]?.granted = grant
        return true
    }

    /// The granted password for `pollToken`, once: the flow ends when it is read. Nil (404)
    /// for an unknown, expired or not yet granted flow.
    public func poll(token: String) -> Grant? {
        prune()
        let hash = Tokens.sha256Hex(token)
        guard let found = flows.first(where: { Tokens.constantTimeEquals($0.value.pollHash, hash) }),
              let grant = found.value.granted else { return nil }
        flows[found.key] = nil
        return grant
    }

    /// The app password's name: the client's User-Agent without control characters, cut to
    /// the store's 200 bytes (`AccountRules.appPasswordName`).
    static func clientName(_ userAgent: String) -> String {
        var name = String(userAgent.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }
            .map(Character.init)).trimmingCharacters(in: .whitespaces)
        if name.isEmpty || name.lowercased() == "account password" { name = "Login Flow client" }
        while name.utf8.count > 180 { name.removeLast() }
        return name
    }

    private func prune() {
        let now = ContinuousClock.now
        flows = flows.filter { now - $0.value.started < Self.lifetime }
        if flows.count >= Self.maximum, let oldest = flows.min(by: { $0.value.started < $1.value.started })?.key {
            flows[oldest] = nil
        }
    }
}

extension WebApp {
    /// `GET /web/login-flow/<id>`: asks the signed-in user to grant the client access;
    /// `POST` grants it: an app password named after the client, handed to the flow.
    func loginFlowPage(_ context: PageContext, loginID: String, method: String) async throws -> WebResponse {
        guard let loginFlows else { throw WebError.notFound }
        var model = context.layout(title: "Connect a device")
        model["loginID"] = loginID
        model["name"] = context.user
        guard let client = await loginFlows.client(loginID: loginID) else {
            model["gone"] = true
            return .html(renderer.render("login-flow", model), status: 404)
        }
        model["client"] = client
        guard method == "POST" else {
            model["pending"] = true
            return .html(renderer.render("login-flow", model))
        }
        try context.require(.manageAppPasswords(of: context.user))
        let created = try await createFlowPassword(user: context.user, client: client)
        guard await loginFlows.grant(loginID: loginID, LoginFlows.Grant(user: context.user, appPassword: created.secret)) else {
            try? await store.revokeAppPassword(user: context.user, name: created.appPassword.name)
            model["gone"] = true
            return .html(renderer.render("login-flow", model), status: 404)
        }
        model["granted"] = true
        return .html(renderer.render("login-flow", model))
    }

    /// An app password named after the client; a second device of the same kind gets the
    /// name with its date and a number, since names are unique per user.
    private func createFlowPassword(user: String, client: String) async throws -> NewAppPassword {
        let taken = Set(try await store.appPasswords(user: user).map(\.name))
        var name = client, number = 2
        while taken.contains(name) {
            name = "\(client) (\(number))"
            number += 1
        }
        return try await store.createAppPassword(user: user, name: name, readOnly: false, books: nil)
    }
}
