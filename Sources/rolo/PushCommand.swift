import ArgumentParser
import Foundation
import RoloStore
import WebPush

/// `rolo push list|rotate-key`: WebDAV-Push registrations and the server's VAPID key.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "WebDAV-Push: list a user's registrations, replace the server's key.",
        subcommands: [List.self, RotateKey.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's push registrations: book, push service, expiry, last success, failures.",
            discussion: """
                A phone registers once per book it syncs and renews about daily; expired rows stay \
                listed until the server's hourly sweep removes them. Only the push service's origin \
                is shown: the rest of its URL identifies the device.
                """)
        @Argument(help: "User name.") var user: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try await options.withStore { store in
                try await store.requireUser(user)
                let registrations = try await store.pushRegistrations(user: user)
                guard !registrations.isEmpty else {
                    print("\(user) has no push registrations.")
                    return
                }
                let credentials = Dictionary(uniqueKeysWithValues: try await store.appPasswords(user: user).map { ($0.id, $0.name) })
                let now = store.clock.now
                var table = TextTable([("BOOK", .left), ("PUSH SERVICE", .left), ("CREDENTIAL", .left), ("EXPIRES", .left),
                                       ("LAST SUCCESS", .left), ("FAILURES", .right)])
                for registration in registrations {
                    var book = "#\(registration.collectionID)"
                    if let info = try await store.collection(id: registration.collectionID) {
                        let path = info.path.joined(separator: "/")
                        book = info.owner == user ? path : "\(path) (\(info.owner))"
                    }
                    let origin = URL(string: registration.pushResource).flatMap(VAPIDKey.origin(of:)) ?? "?"
                    let credential = registration.credentialID == 0
                        ? "account password" : credentials[registration.credentialID] ?? "#\(registration.credentialID)"
                    let expires = CLIDate.minute(registration.expires) + (registration.expires <= now ? " (expired)" : "")
                    table.add([book, origin, credential, expires, registration.lastSuccess.map(CLIDate.minute) ?? "never",
                               String(registration.failures)])
                }
                table.lines().forEach { print($0) }
            }
        }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Replace the server's VAPID key and drop every push registration.",
            discussion: """
                Push services accept messages only under the key a registration was made for, so \
                every registration goes with the old key. Clients register again with the new key \
                when they next refresh their collection list (DAVx5: daily). Restart running \
                servers afterwards: they keep the key they started with.
                """)
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try await options.withStore { store in
                let key = VAPIDKey()
                try await store.rotatePushKey(to: key.rawRepresentation)
                print("New VAPID public key: \(key.publicKeyBase64URL)")
                print("Every push registration was dropped; restart the server to use the new key.")
            }
        }
    }
}
