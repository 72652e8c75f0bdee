import ArgumentParser
import DumpKit

/// The `dumpkit` root command.
@main
struct DumpKitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dumpkit",
        abstract: "Migrate, clean, validate, back up and restore Realtime-Database dumps and Storage buckets.",
        version: DumpKitVersion.string,
        subcommands: [
            ConvertCommand.self, StatsCommand.self, MigrateCommand.self, ValidateCommand.self,
            ExtractBlobsCommand.self, InlineBlobsCommand.self, CheckBlobsCommand.self,
            ArchiveCommand.self, BackupCommand.self, ListCommand.self, VerifyCommand.self, RestoreCommand.self,
        ]
    )
}
