import ArgumentParser
import DumpKit
import Foundation
import ObjectStores

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
            ArchiveCommand.self, BackupCommand.self, ListCommand.self, VerifyCommand.self, RestoreCommand.self, CopyCommand.self,
            IndexCommand.self, MergeCommand.self,
            ExportCommand.self, ImportCommand.self,
        ]
    )

    /// The subcommands' names.
    static var commandNames: [String] {
        var names: [String] = []
        for command in configuration.subcommands { names.append(command._commandName) }
        return names
    }

    /// Parses the arguments and runs the subcommand. Usage errors (the parser's and the commands'
    /// `validate()`) exit 2 and start with `dumpkit: error:`, as every other error does; the parser
    /// alone would exit 64 with `Error:`.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let names = commandNames
        if let first = arguments.first, !first.hasPrefix("-"), first != "help", !names.contains(first) {
            let list = names.joined(separator: ", ")
            FileHandle.standardError.write(
                Data("dumpkit: error: unknown command '\(first)'; the commands are \(list) (dumpkit help COMMAND)\n".utf8))
            exit(withError: Exit.input)
        }
        do {
            var command = try parseAsRoot(arguments)
            // Dump inputs and outputs may be bucket objects (s3://, gs://), reached with the
            // command's store options where it has them, else with the environment's.
            let stores = (command as? UsesStores)?.stores.objectStores ?? ObjectStoreOptions()
            RemoteInput.register { try ObjectInput.open($0, options: stores) }
            RemoteOutput.register { try ObjectOutput.open($0, options: stores) }
            PositionalInput.register { location in
                try ObjectRanges.open(location, options: stores).map { .init(source: $0, size: $0.size, version: $0.versionName) }
            }
            BucketParts.register(BucketShardParts(options: stores))
            try command.run()
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            let message = fullMessage(for: error)
            let text = message.hasPrefix("Error: ") ? message.dropFirst("Error: ".count) : Substring(message)
            FileHandle.standardError.write(Data("dumpkit: error: \(text)\n".utf8))
            exit(withError: Exit.input)
        }
    }
}
