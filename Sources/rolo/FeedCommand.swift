import ArgumentParser
import Authorization
import Foundation
import RoloStore

/// `rolo feed add|list|revoke` (issue 33): feeds at secret URLs for calendar apps and desk
/// phones. Feeds are credentials of a kind (whoever has the URL reads the books), so the
/// command takes the same account action as app passwords.
struct FeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed", abstract: "Create, list and revoke a user's feeds (birthday calendar, desk-phone phone books).",
        subcommands: [Add.self, List.self, Revoke.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a feed; prints its URL alone on the last line, shown once.",
            discussion: """
                KIND is birthdays (an iCalendar feed of birthdays and anniversaries), yealink, \
                fritzbox or snom (phone-book XML). Without --book the feed covers every book the \
                user can read when it is read, books made or shared later included; with --book \
                only the books named (own books such as `default`, or shared ones as they appear \
                in the user's home, such as `family~alice`). The URL is built from --public-url \
                (or ROLO_PUBLIC_URL, or public_url in the --config file, as `rolo serve` takes it); \
                without one, the path is printed.
                """)
        @Argument(help: "User name.") var user: String
        @Argument(help: "birthdays, yealink, fritzbox or snom.") var kind: String
        @Option(name: .customLong("book"), help: "Limit it to this book (repeat for several).") var books: [String] = []
        @Option(name: .customLong("public-url"), help: "URL clients use, e.g. https://example.org/carddav (env ROLO_PUBLIC_URL).")
        var publicURL: String?
        @Option(help: "The `rolo serve` TOML file whose public_url is used when neither of the above is given (env ROLO_CONFIG).")
        var config: String?
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            guard let feedKind = FeedKind(rawValue: kind) else {
                throw ValidationError("Unknown feed kind \(kind): use birthdays, yealink, fritzbox or snom.")
            }
            let settings = LayeredSettings(file: try (config ?? Environment.value("ROLO_CONFIG")).map(ConfigFile.init(path:)) ?? ConfigFile())
            let base = try FeedURL.base(settings.string(publicURL, env: "ROLO_PUBLIC_URL", key: "public_url"))
            try authorize(.manageAppPasswords(of: user))
            try await options.withStore { store in
                try await store.requireUser(user)
                guard let feeds = store as? any FeedStore else { throw CLIError("This database does not keep feeds.") }
                let created: NewFeed
                do {
                    created = try await feeds.createFeed(user: user, kind: feedKind, books: books)
                } catch {
                    throw CLIError.from(error, notFound: "No user \(user).", noSuchUser: "No user \(user).",
                                        refused: "Cannot create the feed")
                }
                print("Created \(kind) feed \(created.feed.id) for \(user): \(FeedURL.books(created.feed)).")
                print("Anyone with the URL can read it, without a password; revoke it with rolo feed revoke \(user) \(created.feed.id).")
                if base == nil {
                    print("No public URL is set (--public-url, ROLO_PUBLIC_URL or public_url in --config): put the server's address before this path.")
                }
                print("It is shown once: Rolo keeps only a hash of it.")
                print((base ?? "") + "/feeds/" + created.secret)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's feeds: id, kind, books, created, last read (times in UTC; never the URL).")
        @Argument(help: "User name.") var user: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageAppPasswords(of: user))
            try await options.withStore { store in
                try await store.requireUser(user)
                guard let feeds = store as? any FeedStore else { throw CLIError("This database does not keep feeds.") }
                let list = try await feeds.feeds(user: user)
                guard !list.isEmpty else {
                    print("\(user) has no feeds.")
                    return
                }
                var table = TextTable([("ID", .right), ("KIND", .left), ("BOOKS", .left), ("CREATED", .left), ("LAST READ", .left)])
                for feed in list {
                    table.add([String(feed.id), feed.kind.rawValue, FeedURL.books(feed), CLIDate.minute(feed.created),
                               feed.lastRead.map(CLIDate.minute) ?? "never"])
                }
                table.lines().forEach { print($0) }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a feed: its URL answers 404 from now on.")
        @Argument(help: "User name.") var user: String
        @Argument(help: "The feed's id, as `rolo feed list` shows it.") var id: Int64
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageAppPasswords(of: user))
            try await options.withStore { store in
                try await store.requireUser(user)
                guard let feeds = store as? any FeedStore else { throw CLIError("This database does not keep feeds.") }
                do {
                    try await feeds.revokeFeed(user: user, id: id)
                } catch {
                    throw CLIError.from(error, notFound: "\(user) has no feed \(id).", noSuchUser: "No user \(user).")
                }
                print("Revoked feed \(id) of \(user): its URL answers 404 from now on.")
            }
        }
    }
}

enum FeedURL {
    /// The public URL without a trailing slash, or nil when none is set.
    static func base(_ text: String?) throws -> String? {
        guard let text else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("Public URL \(text) is not an absolute http(s) URL.")
        }
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// "all books" or "default, family~alice" ("no books left" once every chosen one went).
    static func books(_ feed: Feed) -> String {
        if feed.bookIDs.isEmpty { return "all books" }
        return feed.bookNames.isEmpty ? "no books left" : feed.bookNames.joined(separator: ", ")
    }
}
