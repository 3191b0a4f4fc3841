import Foundation
@testable import RoloWeb
import Testing

/// Login Flow v2's flows in memory: the poll gets nothing before the grant, the password
/// once after it, nothing again; a flow is granted once; the client's name is made fit to
/// name an app password.
@Suite struct LoginFlowsTests {
    @Test func thePollGetsThePasswordExactlyOnceAfterTheGrant() async {
        let flows = LoginFlows()
        let flow = await flows.start(client: "DAVx5/4.4")
        #expect(await flows.poll(token: flow.pollToken) == nil)
        #expect(await flows.client(loginID: flow.loginID) == "DAVx5/4.4")
        let grant = LoginFlows.Grant(user: "carol", appPassword: "rolo_1_secret")
        #expect(await flows.grant(loginID: flow.loginID, grant))
        #expect(await flows.grant(loginID: flow.loginID, LoginFlows.Grant(user: "mallory", appPassword: "x")) == false)
        #expect(await flows.client(loginID: flow.loginID) == nil)
        #expect(await flows.poll(token: "made-up") == nil)
        #expect(await flows.poll(token: flow.pollToken) == grant)
        #expect(await flows.poll(token: flow.pollToken) == nil)
    }

    @Test func tokensAreRandomAndTheLoginIDIsNotThePollToken() async {
        let flows = LoginFlows()
        let first = await flows.start(client: "a"), second = await flows.start(client: "a")
        #expect(first.pollToken != second.pollToken && first.loginID != second.loginID)
        #expect(first.pollToken != first.loginID && first.pollToken.count >= 40)
        // The login ID in the page's URL does not poll.
        #expect(await flows.grant(loginID: first.loginID, LoginFlows.Grant(user: "u", appPassword: "p")))
        #expect(await flows.poll(token: first.loginID) == nil)
    }

    @Test func theClientNameFitsAnAppPasswordName() {
        #expect(LoginFlows.clientName("Mozilla/5.0\u{0}\n(evil)") == "Mozilla/5.0(evil)")
        #expect(LoginFlows.clientName("") == "Login Flow client")
        #expect(LoginFlows.clientName("Account Password") == "Login Flow client")
        #expect(LoginFlows.clientName(String(repeating: "é", count: 300)).utf8.count <= 180)
    }
}
