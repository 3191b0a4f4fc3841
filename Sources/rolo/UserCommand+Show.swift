import ArgumentParser
import Authorization
import Foundation
import RoloStore

extension UserCommand {
    /// `rolo user show USER`: everything the store keeps about one account, one `key: value`
    /// line each (the keys `user set` prints, in the same words), for reading and for grep.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a user's settings, books, shares and app passwords, one `key: value` line each.",
            discussion: """
                "last request" is the latest hour (or, past the hourly retention, day) of the user's own \
                requests in the access history, which a running server writes once a minute: a request \
                in the last minute may not show yet.
                """)
        @Argument(help: "User name.") var name: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageUsers)
            try await options.withStore { store in
                guard let account = try await store.account(name: name) else { throw CLIError("No user \(name).") }
                for (key, value) in try await UserText.details(of: account, in: store) { print("\(key): \(value)") }
            }
        }
    }
}

/// What `user show` and `user list --long` say about an account.
enum UserText {
    /// The user's own address books, each with its card count (`book list`'s numbers).
    static func books(of user: String, in store: any RoloStore) async throws -> [(book: CollectionInfo, cards: Int)] {
        var books: [(CollectionInfo, Int)] = []
        for book in try await store.childCollections(owner: user, parentPath: []) where book.kind == .addressBook {
            books.append((book, try await store.listResources(collectionID: book.id).count))
        }
        return books
    }

    static func details(of account: UserAccount, in store: any RoloStore) async throws -> [(String, String)] {
        let name = account.name
        let books = try await books(of: name, in: store).map { book, cards in
            book.path.joined(separator: "/") + (book.displayName.map { " \"\($0)\"" } ?? "") + " (\(cards) cards)"
        }
        let shares = try await store.shares(of: name)
        let given = shares.filter { $0.owner == name }.map {
            "\($0.book) with \($0.sharee) (\(ShareText.access($0.access)), \($0.state.rawValue))"
        }
        let received = shares.filter { $0.sharee == name }.map {
            "\($0.owner)/\($0.book) as \($0.mountName) (\(ShareText.access($0.access)), \($0.state.rawValue))"
        }
        let passwords = try await store.appPasswords(user: name)
        let live = passwords.filter { $0.revoked == nil }
        let lastUse = live.compactMap(\.lastUsed).max()
        let lastRequest = try await store.accessHistory(user: name, since: .distantPast)
            .filter { $0.user == name }.max { $0.start < $1.start }
        return [
            ("user", name),
            ("source", account.source),
            ("display name", account.displayName ?? "-"),
            ("email", account.email ?? "-"),
            ("admin", "\(account.admin)"),
            ("disabled", "\(account.disabled)"),
            ("app passwords only", "\(account.appPasswordsOnly)"),
            ("created", account.created.map(CLIDate.minute) ?? "unknown"),
            ("last request", lastRequest.map { record in
                record.period == .hour ? "\(CLIDate.minute(record.start)) (the hour of the access history)"
                    : "\(CLIDate.day(record.start)) (the day of the access history)"
            } ?? "none recorded"),
            ("books", books.isEmpty ? "none" : books.joined(separator: ", ")),
            ("shares given", given.isEmpty ? "none" : given.joined(separator: ", ")),
            ("shares received", received.isEmpty ? "none" : received.joined(separator: ", ")),
            ("app passwords", "\(live.count) live, \(passwords.count - live.count) revoked"
                + (lastUse.map { ", last used \(CLIDate.minute($0))" } ?? "")),
        ]
    }
}
