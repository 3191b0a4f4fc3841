import ArgumentParser
import Authorization
import Foundation
import RoloStore

/// `rolo share add|accept|remove|list`: one user's address book shared with another.
struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share", abstract: "Share address books between users.",
        discussion: """
            A share stays pending until its sharee accepts it: only then does the book appear in \
            the sharee's home (as <book>~<owner>), and so on their devices. `--accept` accepts on \
            the sharee's behalf.
            """,
        subcommands: [Add.self, Accept.self, Remove.self, List.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Share OWNER's book BOOK with SHAREE (read-only unless --read-write; pending unless --accept).",
            discussion: "Sharing a book already shared with SHAREE changes the share's access.")
        @Argument(help: "The user who owns the book.") var owner: String
        @Argument(help: "The book's name in the owner's home (as `rolo book list` shows it).") var book: String
        @Argument(help: "The user to share it with.") var sharee: String
        @Flag(help: "Let the sharee add, change and delete cards (default: read-only).") var readWrite = false
        @Flag(help: "Accept the share on the sharee's behalf: it appears in their home at once.") var accept = false
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageSharesGiven(owner: owner))
            try await options.withStore { store in
                guard owner != sharee else {
                    throw CLIError("Cannot share \(owner)/\(book) with \(sharee): a book cannot be shared with its own owner.")
                }
                try await store.requireUser(owner)
                try await store.requireUser(sharee)
                let existing = try await store.shares(of: owner)
                    .first { $0.owner == owner && $0.book == book && $0.sharee == sharee }
                let share: Share
                do {
                    share = try await store.shareBook(owner: owner, book: book, with: sharee,
                                                      access: readWrite ? .readWrite : .readOnly, accepted: accept)
                } catch {
                    throw CLIError.from(error, notFound: "No address book \(owner)/\(book).", noSuchUser: "No user \(owner).",
                                        refused: "Cannot share \(owner)/\(book) with \(sharee)")
                }
                print("\(existing == nil ? "Shared" : "Updated the share of") \(owner)/\(book) with \(sharee) "
                      + "(\(ShareText.access(share.access)), \(ShareText.state(share))).")
            }
        }
    }

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accept OWNER's share of BOOK for SHAREE (as an admin, on their behalf).",
            discussion: "The arguments come in the order of `share add` and `share remove`: OWNER BOOK SHAREE.")
        @Argument(help: "The user who owns the book.") var owner: String
        @Argument(help: "The book's name in the owner's home.") var book: String
        @Argument(help: "The user the book is shared with.") var sharee: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageSharesReceived(sharee: sharee))
            try await options.withStore { store in
                try await Self.refuseTheOldOrder(owner: owner, book: book, sharee: sharee, in: store)
                try await store.requireUser(owner)
                try await store.requireUser(sharee)
                let before = try await store.shares(of: sharee)
                    .first { $0.owner == owner && $0.book == book && $0.sharee == sharee }
                let share: Share
                do {
                    share = try await store.acceptShare(sharee: sharee, owner: owner, book: book)
                } catch {
                    throw CLIError.from(error, notFound: "No share of \(owner)/\(book) with \(sharee).",
                                        noSuchUser: "No user \(sharee).", refused: "Cannot accept")
                }
                let already = before?.state == .accepted ? "already accepted" : "accepted"
                print("Share of \(owner)/\(book) with \(sharee) \(already): \(sharee) sees it as \(share.mountName) "
                      + "(\(ShareText.access(share.access))).")
            }
        }

        /// Until issue 29 this command took SHAREE OWNER BOOK. Arguments that read as that order
        /// (the first user has no book BOOK, while BOOK is a user with a book named like the
        /// third argument) are refused with the order to use, so an old script or habit fails
        /// loudly instead of accepting nothing or something else.
        static func refuseTheOldOrder(owner: String, book: String, sharee: String, in store: any RoloStore) async throws {
            guard try await store.collection(owner: owner, path: [book]) == nil,
                  try await store.account(name: book) != nil,
                  try await store.collection(owner: book, path: [sharee]) != nil else { return }
            throw CLIError("The order is OWNER BOOK SHAREE: \(owner) has no book \(book), but \(book) has a book "
                           + "\(sharee). Did you mean `rolo share accept \(book) \(sharee) \(owner)`?")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a share: the book disappears from the sharee's home at once.",
            discussion: "Cards already synced to the sharee's devices stay there: removing stops future access only.")
        @Argument(help: "The user who owns the book.") var owner: String
        @Argument(help: "The book's name in the owner's home.") var book: String
        @Argument(help: "The user the book is shared with.") var sharee: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.removeShare(owner: owner, sharee: sharee))
            try await options.withStore { store in
                try await store.requireUser(owner)
                try await store.requireUser(sharee)
                do {
                    try await store.removeShare(owner: owner, book: book, sharee: sharee)
                } catch {
                    throw CLIError.from(error, notFound: "No share of \(owner)/\(book) with \(sharee).")
                }
                print("Removed the share of \(owner)/\(book) with \(sharee).")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the shares USER gave and received: book, sharee, access, state, mount name.")
        @Argument(help: "User name.") var user: String
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try authorize(.manageAccount(of: user))
            try await options.withStore { store in
                try await store.requireUser(user)
                let shares = try await store.shares(of: user)
                guard !shares.isEmpty else {
                    print("\(user) has no shares.")
                    return
                }
                var table = TextTable([("BOOK", .left), ("SHAREE", .left), ("ACCESS", .left), ("STATE", .left),
                                       ("MOUNT", .left)])
                for share in shares {
                    var mount = share.mountName
                    if let name = share.mountDisplayName { mount += " \"\(name)\"" }
                    table.add(["\(share.owner)/\(share.book)", share.sharee, ShareText.access(share.access),
                               share.state.rawValue, mount])
                }
                table.lines().forEach { print($0) }
            }
        }
    }
}

enum ShareText {
    static func access(_ access: ShareAccess) -> String {
        switch access {
        case .readOnly: "read-only"
        case .readWrite: "read-write"
        }
    }

    static func state(_ share: Share) -> String {
        switch share.state {
        case .pending: "pending: \(share.sharee) must accept it"
        case .accepted: "accepted: in \(share.sharee)'s home as \(share.mountName)"
        }
    }
}
