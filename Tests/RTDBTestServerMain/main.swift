import Foundation
import RTDBTestServer

/// `rtdb-test-server`: the tests' Realtime Database REST server as a process, for benchmarks and by-hand
/// runs. It listens on 127.0.0.1 and a free port, prints `127.0.0.1:PORT` (the value for
/// `FIREBASE_DATABASE_EMULATOR_HOST`) and serves until it is terminated.
///
///     rtdb-test-server [--namespace NS] [--load FILE | --serve FILE [--index-depth N]] [--max-response-bytes N]
///                      [--max-write-bytes N] [--discard-writes]
///
/// `--discard-writes` checks and answers writes without keeping them, to measure an import of more
/// data than memory holds; `--serve` answers reads from a canonical file without loading it (its
/// objects indexed `--index-depth` levels down, 3 by default) and refuses writes, to measure an
/// export of more data than memory holds.
var configuration = RTDBDatabase.Configuration()
var load: String?
var serve: String?
var indexDepth = 3
var arguments = CommandLine.arguments.dropFirst()
@MainActor func value(_ name: String) -> String {
    guard let v = arguments.popFirst() else {
        FileHandle.standardError.write(Data("rtdb-test-server: \(name) needs a value\n".utf8))
        exit(2)
    }
    return v
}
while let argument = arguments.popFirst() {
    switch argument {
    case "--namespace": configuration.namespace = value(argument)
    case "--load": load = value(argument)
    case "--serve": serve = value(argument)
    case "--index-depth": indexDepth = Int(value(argument)) ?? indexDepth
    case "--max-response-bytes": configuration.maxResponseBytes = Int(value(argument)) ?? configuration.maxResponseBytes
    case "--max-write-bytes": configuration.maxWriteBytes = Int(value(argument)) ?? configuration.maxWriteBytes
    case "--discard-writes": configuration.discardsWrites = true
    default:
        FileHandle.standardError.write(Data("rtdb-test-server: unknown argument \(argument)\n".utf8))
        exit(2)
    }
}
do {
    let server = try RTDBTestServer(configuration: configuration)
    if let load { try server.database.load(file: load) }
    if let serve { try server.database.serve(file: serve, indexDepth: indexDepth) }
    FileHandle.standardOutput.write(Data((server.host + "\n").utf8))
    signal(SIGTERM) { _ in exit(0) }
    while true { sleep(3600) }
} catch {
    FileHandle.standardError.write(Data("rtdb-test-server: \(error)\n".utf8))
    exit(1)
}
