import Authorization
import Foundation
import RoloStore
import Testing

/// The access policy as a table: what each credential may do on each kind of node, and
/// which account actions it may take, for the node's owner (alice), the sharee of her
/// book (bob), a stranger (carol) and an admin who owns nothing here (dave).
///
/// Columns, in order: read, write content, bind, unbind, write properties, ACL (write-acl)
/// | manage shares, manage app passwords, manage users.
/// `Y` allowed; `N` refused (403: the node is visible, the privilege is not held); `H`
/// hidden (404: the node does not exist for this credential).
/// "Manage shares" is sharing alice's book (`manageSharesGiven(owner: alice)`), and on a
/// mounted book ending that share (`removeShare(owner: alice, sharee: bob)`), which either
/// side may. Account actions never depend on an app password's scope: app passwords take none.
@Suite struct AccessPolicyTests {
    enum NodeKind: String, CaseIterable, Sendable {
        case root, principal, home, ownBook, plainCollection, card, mountedReadOnly, mountedReadWrite
    }

    enum Relation: String, CaseIterable, Sendable {
        case owner, sharee, stranger, admin

        var user: String {
            switch self {
            case .owner: "alice"
            case .sharee: "bob"
            case .stranger: "carol"
            case .admin: "dave"
            }
        }
    }

    enum CredentialKind: String, CaseIterable, Sendable {
        case accountPassword, readOnlyAppPassword, scopedInScope, scopedOutOfScope, fullAppPassword
    }

    static let table: [(NodeKind, Relation, CredentialKind, String)] = [
        (.root, .owner, .accountPassword, "Y N N N N N   Y Y N"),
        (.root, .owner, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.root, .owner, .scopedInScope, "Y N N N N N   N N N"),
        (.root, .owner, .scopedOutOfScope, "Y N N N N N   N N N"),
        (.root, .owner, .fullAppPassword, "Y N N N N N   N N N"),
        (.root, .sharee, .accountPassword, "Y N N N N N   N N N"),
        (.root, .sharee, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.root, .sharee, .scopedInScope, "Y N N N N N   N N N"),
        (.root, .sharee, .scopedOutOfScope, "Y N N N N N   N N N"),
        (.root, .sharee, .fullAppPassword, "Y N N N N N   N N N"),
        (.root, .stranger, .accountPassword, "Y N N N N N   N N N"),
        (.root, .stranger, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.root, .stranger, .scopedInScope, "Y N N N N N   N N N"),
        (.root, .stranger, .scopedOutOfScope, "Y N N N N N   N N N"),
        (.root, .stranger, .fullAppPassword, "Y N N N N N   N N N"),
        (.root, .admin, .accountPassword, "Y N N N N N   N N Y"),
        (.root, .admin, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.root, .admin, .scopedInScope, "Y N N N N N   N N N"),
        (.root, .admin, .scopedOutOfScope, "Y N N N N N   N N N"),
        (.root, .admin, .fullAppPassword, "Y N N N N N   N N N"),
        (.principal, .owner, .accountPassword, "Y N N N N N   Y Y N"),
        (.principal, .owner, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.principal, .owner, .scopedInScope, "Y N N N N N   N N N"),
        (.principal, .owner, .scopedOutOfScope, "Y N N N N N   N N N"),
        (.principal, .owner, .fullAppPassword, "Y N N N N N   N N N"),
        (.principal, .sharee, .accountPassword, "Y N N N N N   N N N"),
        (.principal, .sharee, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.principal, .sharee, .scopedInScope, "Y N N N N N   N N N"),
        (.principal, .sharee, .scopedOutOfScope, "Y N N N N N   N N N"),
        (.principal, .sharee, .fullAppPassword, "Y N N N N N   N N N"),
        (.principal, .stranger, .accountPassword, "Y N N N N N   N N N"),
        (.principal, .stranger, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.principal, .stranger, .scopedInScope, "Y N N N N N   N N N"),
        (.principal, .stranger, .scopedOutOfScope, "Y N N N N N   N N N"),
        (.principal, .stranger, .fullAppPassword, "Y N N N N N   N N N"),
        (.principal, .admin, .accountPassword, "Y N N N N N   N N Y"),
        (.principal, .admin, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.principal, .admin, .scopedInScope, "Y N N N N N   N N N"),
        (.principal, .admin, .scopedOutOfScope, "Y N N N N N   N N N"),
        (.principal, .admin, .fullAppPassword, "Y N N N N N   N N N"),
        (.home, .owner, .accountPassword, "Y N Y Y Y N   Y Y N"),
        (.home, .owner, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.home, .owner, .scopedInScope, "Y N N N N N   N N N"),
        (.home, .owner, .scopedOutOfScope, "Y N N N N N   N N N"),
        (.home, .owner, .fullAppPassword, "Y N Y Y Y N   N N N"),
        (.home, .sharee, .accountPassword, "H H H H H H   N N N"),
        (.home, .sharee, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.home, .sharee, .scopedInScope, "H H H H H H   N N N"),
        (.home, .sharee, .scopedOutOfScope, "H H H H H H   N N N"),
        (.home, .sharee, .fullAppPassword, "H H H H H H   N N N"),
        (.home, .stranger, .accountPassword, "H H H H H H   N N N"),
        (.home, .stranger, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.home, .stranger, .scopedInScope, "H H H H H H   N N N"),
        (.home, .stranger, .scopedOutOfScope, "H H H H H H   N N N"),
        (.home, .stranger, .fullAppPassword, "H H H H H H   N N N"),
        (.home, .admin, .accountPassword, "H H H H H H   N N Y"),
        (.home, .admin, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.home, .admin, .scopedInScope, "H H H H H H   N N N"),
        (.home, .admin, .scopedOutOfScope, "H H H H H H   N N N"),
        (.home, .admin, .fullAppPassword, "H H H H H H   N N N"),
        (.ownBook, .owner, .accountPassword, "Y Y Y Y Y Y   Y Y N"),
        (.ownBook, .owner, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.ownBook, .owner, .scopedInScope, "Y Y Y Y Y Y   N N N"),
        (.ownBook, .owner, .scopedOutOfScope, "H H H H H H   N N N"),
        (.ownBook, .owner, .fullAppPassword, "Y Y Y Y Y Y   N N N"),
        (.ownBook, .sharee, .accountPassword, "H H H H H H   N N N"),
        (.ownBook, .sharee, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.ownBook, .sharee, .scopedInScope, "H H H H H H   N N N"),
        (.ownBook, .sharee, .scopedOutOfScope, "H H H H H H   N N N"),
        (.ownBook, .sharee, .fullAppPassword, "H H H H H H   N N N"),
        (.ownBook, .stranger, .accountPassword, "H H H H H H   N N N"),
        (.ownBook, .stranger, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.ownBook, .stranger, .scopedInScope, "H H H H H H   N N N"),
        (.ownBook, .stranger, .scopedOutOfScope, "H H H H H H   N N N"),
        (.ownBook, .stranger, .fullAppPassword, "H H H H H H   N N N"),
        (.ownBook, .admin, .accountPassword, "H H H H H H   N N Y"),
        (.ownBook, .admin, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.ownBook, .admin, .scopedInScope, "H H H H H H   N N N"),
        (.ownBook, .admin, .scopedOutOfScope, "H H H H H H   N N N"),
        (.ownBook, .admin, .fullAppPassword, "H H H H H H   N N N"),
        (.plainCollection, .owner, .accountPassword, "Y Y Y Y Y Y   Y Y N"),
        (.plainCollection, .owner, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.plainCollection, .owner, .scopedInScope, "H H H H H H   N N N"),
        (.plainCollection, .owner, .scopedOutOfScope, "H H H H H H   N N N"),
        (.plainCollection, .owner, .fullAppPassword, "Y Y Y Y Y Y   N N N"),
        (.plainCollection, .sharee, .accountPassword, "H H H H H H   N N N"),
        (.plainCollection, .sharee, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.plainCollection, .sharee, .scopedInScope, "H H H H H H   N N N"),
        (.plainCollection, .sharee, .scopedOutOfScope, "H H H H H H   N N N"),
        (.plainCollection, .sharee, .fullAppPassword, "H H H H H H   N N N"),
        (.plainCollection, .stranger, .accountPassword, "H H H H H H   N N N"),
        (.plainCollection, .stranger, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.plainCollection, .stranger, .scopedInScope, "H H H H H H   N N N"),
        (.plainCollection, .stranger, .scopedOutOfScope, "H H H H H H   N N N"),
        (.plainCollection, .stranger, .fullAppPassword, "H H H H H H   N N N"),
        (.plainCollection, .admin, .accountPassword, "H H H H H H   N N Y"),
        (.plainCollection, .admin, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.plainCollection, .admin, .scopedInScope, "H H H H H H   N N N"),
        (.plainCollection, .admin, .scopedOutOfScope, "H H H H H H   N N N"),
        (.plainCollection, .admin, .fullAppPassword, "H H H H H H   N N N"),
        (.card, .owner, .accountPassword, "Y Y Y Y Y Y   Y Y N"),
        (.card, .owner, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.card, .owner, .scopedInScope, "Y Y Y Y Y Y   N N N"),
        (.card, .owner, .scopedOutOfScope, "H H H H H H   N N N"),
        (.card, .owner, .fullAppPassword, "Y Y Y Y Y Y   N N N"),
        (.card, .sharee, .accountPassword, "H H H H H H   N N N"),
        (.card, .sharee, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.card, .sharee, .scopedInScope, "H H H H H H   N N N"),
        (.card, .sharee, .scopedOutOfScope, "H H H H H H   N N N"),
        (.card, .sharee, .fullAppPassword, "H H H H H H   N N N"),
        (.card, .stranger, .accountPassword, "H H H H H H   N N N"),
        (.card, .stranger, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.card, .stranger, .scopedInScope, "H H H H H H   N N N"),
        (.card, .stranger, .scopedOutOfScope, "H H H H H H   N N N"),
        (.card, .stranger, .fullAppPassword, "H H H H H H   N N N"),
        (.card, .admin, .accountPassword, "H H H H H H   N N Y"),
        (.card, .admin, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.card, .admin, .scopedInScope, "H H H H H H   N N N"),
        (.card, .admin, .scopedOutOfScope, "H H H H H H   N N N"),
        (.card, .admin, .fullAppPassword, "H H H H H H   N N N"),
        (.mountedReadOnly, .owner, .accountPassword, "H H H H H H   Y Y N"),
        (.mountedReadOnly, .owner, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.mountedReadOnly, .owner, .scopedInScope, "H H H H H H   N N N"),
        (.mountedReadOnly, .owner, .scopedOutOfScope, "H H H H H H   N N N"),
        (.mountedReadOnly, .owner, .fullAppPassword, "H H H H H H   N N N"),
        (.mountedReadOnly, .sharee, .accountPassword, "Y N N N N N   Y N N"),
        (.mountedReadOnly, .sharee, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.mountedReadOnly, .sharee, .scopedInScope, "Y N N N N N   N N N"),
        (.mountedReadOnly, .sharee, .scopedOutOfScope, "H H H H H H   N N N"),
        (.mountedReadOnly, .sharee, .fullAppPassword, "Y N N N N N   N N N"),
        (.mountedReadOnly, .stranger, .accountPassword, "H H H H H H   N N N"),
        (.mountedReadOnly, .stranger, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.mountedReadOnly, .stranger, .scopedInScope, "H H H H H H   N N N"),
        (.mountedReadOnly, .stranger, .scopedOutOfScope, "H H H H H H   N N N"),
        (.mountedReadOnly, .stranger, .fullAppPassword, "H H H H H H   N N N"),
        (.mountedReadOnly, .admin, .accountPassword, "H H H H H H   N N Y"),
        (.mountedReadOnly, .admin, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.mountedReadOnly, .admin, .scopedInScope, "H H H H H H   N N N"),
        (.mountedReadOnly, .admin, .scopedOutOfScope, "H H H H H H   N N N"),
        (.mountedReadOnly, .admin, .fullAppPassword, "H H H H H H   N N N"),
        (.mountedReadWrite, .owner, .accountPassword, "H H H H H H   Y Y N"),
        (.mountedReadWrite, .owner, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.mountedReadWrite, .owner, .scopedInScope, "H H H H H H   N N N"),
        (.mountedReadWrite, .owner, .scopedOutOfScope, "H H H H H H   N N N"),
        (.mountedReadWrite, .owner, .fullAppPassword, "H H H H H H   N N N"),
        (.mountedReadWrite, .sharee, .accountPassword, "Y Y Y Y Y N   Y N N"),
        (.mountedReadWrite, .sharee, .readOnlyAppPassword, "Y N N N N N   N N N"),
        (.mountedReadWrite, .sharee, .scopedInScope, "Y Y Y Y Y N   N N N"),
        (.mountedReadWrite, .sharee, .scopedOutOfScope, "H H H H H H   N N N"),
        (.mountedReadWrite, .sharee, .fullAppPassword, "Y Y Y Y Y N   N N N"),
        (.mountedReadWrite, .stranger, .accountPassword, "H H H H H H   N N N"),
        (.mountedReadWrite, .stranger, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.mountedReadWrite, .stranger, .scopedInScope, "H H H H H H   N N N"),
        (.mountedReadWrite, .stranger, .scopedOutOfScope, "H H H H H H   N N N"),
        (.mountedReadWrite, .stranger, .fullAppPassword, "H H H H H H   N N N"),
        (.mountedReadWrite, .admin, .accountPassword, "H H H H H H   N N Y"),
        (.mountedReadWrite, .admin, .readOnlyAppPassword, "H H H H H H   N N N"),
        (.mountedReadWrite, .admin, .scopedInScope, "H H H H H H   N N N"),
        (.mountedReadWrite, .admin, .scopedOutOfScope, "H H H H H H   N N N"),
        (.mountedReadWrite, .admin, .fullAppPassword, "H H H H H H   N N N"),
    ]

    static let bookID: Int64 = 1
    static let plainID: Int64 = 2

    static func collection(_ id: Int64, _ kind: CollectionKind, mount access: ShareAccess? = nil) -> CollectionInfo {
        let date = Date(timeIntervalSince1970: 0)
        let mount = access.map { Mount(shareID: 9, sharee: "bob", name: "family~alice", access: $0, displayName: "family (alice)") }
        return CollectionInfo(id: id, owner: "alice", path: [kind == .addressBook ? "family" : "files"], kind: kind,
                              displayName: nil, description: nil, syncSeq: 0, created: date, modified: date, mount: mount)
    }

    static func target(_ node: NodeKind) -> AccessTarget {
        switch node {
        case .root: .server
        case .principal: .principal("alice")
        case .home: .home(owner: "alice")
        case .ownBook: .collection(collection(bookID, .addressBook))
        case .plainCollection: .collection(collection(plainID, .plain))
        case .card: .member(of: collection(bookID, .addressBook))
        case .mountedReadOnly: .collection(collection(bookID, .addressBook, mount: .readOnly))
        case .mountedReadWrite: .collection(collection(bookID, .addressBook, mount: .readWrite))
        }
    }

    static func credential(_ kind: CredentialKind, user: String) -> Credential {
        switch kind {
        case .accountPassword: .accountPassword(user)
        case .readOnlyAppPassword: Credential(user: user, appPasswordID: 3, scope: CredentialScope(readOnly: true, books: nil))
        // Scoped to the node's book (and the plain collection's id, which still is no book).
        case .scopedInScope: Credential(user: user, appPasswordID: 4, scope: CredentialScope(readOnly: false, books: [bookID, plainID]))
        case .scopedOutOfScope: Credential(user: user, appPasswordID: 5, scope: CredentialScope(readOnly: false, books: [99]))
        case .fullAppPassword: Credential(user: user, appPasswordID: 6, scope: .full)
        }
    }

    static let privilegeColumns: [Privileges] = [.read, .writeContent, .bind, .unbind, .writeProperties, .writeACL]

    static func accountColumns(_ node: NodeKind) -> [AccountAction] {
        let shares: AccountAction = node == .mountedReadOnly || node == .mountedReadWrite
            ? .removeShare(owner: "alice", sharee: "bob") : .manageSharesGiven(owner: "alice")
        return [shares, .manageAppPasswords(of: "alice"), .manageUsers]
    }

    @Test func theTableCoversEveryCombinationOnce() {
        let keys = Set(Self.table.map { "\($0.0)/\($0.1)/\($0.2)" })
        #expect(keys.count == Self.table.count)
        #expect(keys.count == NodeKind.allCases.count * Relation.allCases.count * CredentialKind.allCases.count)
    }

    @Test(arguments: table)
    func accessMatchesThePolicyTable(_ node: NodeKind, _ relation: Relation, _ kind: CredentialKind, _ expected: String) {
        let answers = expected.split(separator: " ").map(String.init)
        #expect(answers.count == 9)
        let credential = Self.credential(kind, user: relation.user)
        let held = Access.privileges(on: Self.target(node), for: credential)
        for (column, privilege) in Self.privilegeColumns.enumerated() {
            let answer = held.map { $0.contains(privilege) ? "Y" : "N" } ?? "H"
            #expect(answer == answers[column], "\(privilege) on \(node) for \(relation) with \(kind)")
        }
        let actor = AccountActor.user(credential, admin: relation == .admin)
        for (column, action) in Self.accountColumns(node).enumerated() {
            let answer = Access.decide(action, by: actor) == .allowed ? "Y" : "N"
            #expect(answer == answers[6 + column], "\(action) on \(node) for \(relation) with \(kind)")
        }
    }

    @Test func theConsoleMayTakeEveryAccountAction() {
        let actions: [AccountAction] = [.manageAccount(of: "bob"), .manageSharesGiven(owner: "bob"),
                                        .manageSharesReceived(sharee: "bob"), .removeShare(owner: "alice", sharee: "bob"),
                                        .manageAppPasswords(of: "bob"), .seeAccessHistory(of: "bob"), .searchUsers,
                                        .manageUsers, .seeAdminPages]
        for action in actions { #expect(Access.decide(action, by: .console) == .allowed, "\(action)") }
    }

    @Test func anAdminManagesOtherUsersSharesOnlyFromTheConsole() {
        let admin = AccountActor.user(.accountPassword("dave"), admin: true)
        #expect(throws: AccessDenied.self) { try Access.require(.manageSharesReceived(sharee: "bob"), by: admin) }
        #expect(throws: AccessDenied.self) { try Access.require(.removeShare(owner: "alice", sharee: "bob"), by: admin) }
        #expect(throws: AccessDenied.self) { try Access.require(.manageAppPasswords(of: "bob"), by: admin) }
        #expect((try? Access.require(.manageUsers, by: admin)) != nil)
    }

    @Test func refusalsSayWhyInWordsAPersonReads() {
        let phone = AccountActor.user(Credential(user: "alice", appPasswordID: 7, scope: .full), admin: true)
        #expect(Access.decide(.manageAccount(of: "alice"), by: phone) == .denied(Access.appPasswordDenied))
        // Even an admin's app password never reaches the admin pages.
        #expect(Access.decide(.seeAdminPages, by: phone) == .denied(Access.appPasswordDenied))
        if case .denied(let denied) = Access.decide(.searchUsers, by: phone) {
            #expect(denied.message == "App passwords cannot search for users; use the account password.")
        } else {
            Issue.record("an app password searched for users")
        }
        let carol = AccountActor.user(.accountPassword("carol"), admin: false)
        #expect(Access.decide(.removeShare(owner: "alice", sharee: "bob"), by: carol)
            == .denied(AccessDenied(.notYours, "Only the owner or the sharee removes a share.")))
        #expect(Access.decide(.seeAdminPages, by: carol) == .denied(AccessDenied(.notAdmin, "Only administrators see this page.")))
    }
}
