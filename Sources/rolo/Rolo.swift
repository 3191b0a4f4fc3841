import ArgumentParser

/// The one entry point: serve, administer, import/export, debug vCards.
@main
struct Rolo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rolo",
        abstract: "Rolo, a CardDAV contacts server.",
        subcommands: [ServeCommand.self, UserCommand.self, BookCommand.self, ImportCommand.self, ExportCommand.self,
                      CheckCommand.self, BackupCommand.self,
                      VCardCommand.self])
}
