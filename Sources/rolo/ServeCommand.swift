import ArgumentParser

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Not implemented yet.")
    func run() async throws { throw ExitCode.failure }
}
