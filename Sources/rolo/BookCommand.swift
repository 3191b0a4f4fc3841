import ArgumentParser

struct BookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "book", abstract: "Not implemented yet.")
    func run() async throws { throw ExitCode.failure }
}
