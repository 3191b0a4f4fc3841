import ArgumentParser

@main
struct Rolo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rolo",
        abstract: "Rolo, a CardDAV contacts server.")
}
