import ArgumentParser

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "user", abstract: "Not implemented yet.")
    func run() async throws { throw ExitCode.failure }
}
