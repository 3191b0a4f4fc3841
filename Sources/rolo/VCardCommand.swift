import ArgumentParser

struct VCardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "vcard", abstract: "Not implemented yet.")
    func run() async throws { throw ExitCode.failure }
}
