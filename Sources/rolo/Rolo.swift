import ArgumentParser
import BuildInfo

/// The one command: serve, administer, import/export, debug vCards (started by `EntryPoint`).
struct Rolo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rolo",
        abstract: "Rolo, a CardDAV contacts server.",
        version: RoloVersion.current,
        subcommands: [ServeCommand.self, UserCommand.self, BookCommand.self, ShareCommand.self, TokenCommand.self, FeedCommand.self,
                      DeviceProfileCommand.self, HistoryCommand.self, RestoreCommand.self,
                      AccessCommand.self, DirectoryCommand.self, PushCommand.self, ImportCommand.self, ExportCommand.self,
                      CheckCommand.self, BackupCommand.self, MigrateCommand.self, AuthCommand.self,
                      VCardCommand.self])
}
