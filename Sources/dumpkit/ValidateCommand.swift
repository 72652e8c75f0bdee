import ArgumentParser
import DumpKit
import FirebaseRules
import Foundation
import JSONStream

/// `dumpkit validate`: check a dump for CI.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a dump: the database's limits, JSON Schemas per record pattern, security rules.",
        discussion: """
            The database's limits (key characters and length, depth, string size, .value beside children, \
            .sv placeholders, non-finite numbers) are always checked, in one streaming pass. Schemas (JSON \
            Schema 2020-12, or draft-07 when $schema says so) apply to the records their pattern matches. \
            Rules files (comments and multi-line strings allowed) have every .validate evaluated as if the \
            dump were written to an empty database; dumps over --rules-memory-limit are indexed during \
            the same pass and read back from the file instead of held in memory (standard input and \
            compressed dumps are copied to a temporary file first). With --blobs, the dump's blob \
            references are cross-checked against a store as check-blobs does: missing objects and size, \
            SHA-256, MD5 or token mismatches are errors, objects no reference names are warnings \
            (blobs:orphan: a store may hold objects of other dumps).

            A schema pattern that matches no record is an error (schema:unmatched), since a typo in it \
            would make its schema check nothing; --allow-unmatched accepts it (a dump may lack a part).

            $refs are resolved offline, never over the network: against the schema file's folder, by \
            $id among the .json files of that folder and of every --schema-dir (and its subfolders), and \
            through --ref-map prefixes (--ref-map https://json.schemastore.org/=schemas/ reads \
            https://json.schemastore.org/eslintrc.json from schemas/eslintrc.json).

            A --schema-map file is a YAML or JSON map of path patterns to schema files, the files \
            relative to the map's folder:
              /v2/todolist/{id}: todolist/v2.schema.json
              /users/{uid}: user.schema.json

            Exit codes: 0 no error findings, 1 error findings, 2 usage or input errors (reported before any finding).

            Sharded (--index, --shard I/N, -o OUT): each shard checks the limits and schemas over its \
            byte ranges and writes its findings to OUT.part-I-of-N; dumpkit merge OUT prints the report \
            of the unsharded run (same findings, order and exit code). With --blobs, each shard also \
            checks its references into OUT.blobs.part-I-of-N, and merge adds the blob findings (orphans \
            from one listing of the store) after the others. --rules is not sharded (rules may read \
            other records through root). See docs/SCALE-OUT.md.

            Examples:
              dumpkit validate v2.json \\
                  --schema '/v2/todolist/{id}=schemas/todolist/v2.schema.json'
              dumpkit validate dump.json --schema-map schemas.yaml --format junit \\
                  > report.xml
              dumpkit validate dump.json --rules database.rules.json \\
                  --auth '{"uid": "u1"}' --strict
              dumpkit validate dump.json.gz --format github
              dumpkit validate dump.json --json | jq '.findings[] | .pointer'
              dumpkit validate clean.json --blobs bucket/
              dumpkit validate dump.json --schema-map schemas.yaml \\
                  --index dump.dkindex --shard 0/8 -o findings
            """
    )

    @Argument(help: "The dump: a file, - for standard input, or an object s3://BUCKET/KEY or gs://BUCKET/KEY.")
    var input: String

    @Option(
        name: .customLong("schema"), help: "PATTERN=FILE: validate the records PATTERN matches with the JSON Schema in FILE (repeatable).")
    var schemas: [String] = []

    @Option(help: "A YAML or JSON map of path patterns to schema files (relative to the map), as below.")
    var schemaMap: String?

    @Flag(help: "Accept schema patterns that match no record (otherwise a schema:unmatched error).")
    var allowUnmatched = false

    @Option(name: .customLong("schema-dir"), help: "DIR: schemas that $refs may name by their $id, in this folder and below (repeatable).")
    var schemaDirs: [String] = []

    @Option(name: .customLong("ref-map"), help: "URI-PREFIX=DIR: $refs to URIs under URI-PREFIX read the files below DIR (repeatable).")
    var refMaps: [String] = []

    @Option(help: "A database.rules.json whose .validate rules are evaluated over the dump.")
    var rules: String?

    @Option(help: "The auth variable for rules, as JSON (default null).")
    var auth: String?

    @Flag(help: "With --rules: also report data that no .write rule lets this auth write.")
    var strict = false

    @Option(
        help:
            "Check the dump's blob references against this store (a directory mirroring a bucket, or s3://BUCKET/PREFIX, gs://BUCKET/PREFIX)."
    )
    var blobs: String?

    @OptionGroup var stores: StoreOptions

    @Option(name: .customLong("ref-style"), help: "With --blobs, the references: object (default), salada, path or url (see check-blobs).")
    var referenceStyle: BlobReferenceStyle?

    @Option(
        name: .customLong("rules-memory-limit"),
        help: "With --rules: dumps up to this many MiB (default 512) are held in memory, larger ones read from disk.")
    var rulesMemoryLimit: Int?

    @Option(help: "Output: text (the default), json (as --json), junit or github.")
    var format: FindingsReport.Format?

    @OptionGroup var json: JSONSummaryOption

    @Option(help: "Keep at most this many findings in the output (all are counted).")
    var maxFindings: Int = 1000

    @Option(name: .shortAndLong, help: "With --index: the findings' name; a shard writes OUT.part-I-of-N for dumpkit merge OUT.")
    var output: String?

    @OptionGroup var shard: ShardOptions

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if strict && rules == nil { throw ValidationError("--strict needs --rules") }
        if maxFindings < 0 { throw ValidationError("--max-findings must not be negative") }
        if rulesMemoryLimit ?? 0 < 0 { throw ValidationError("--rules-memory-limit must not be negative") }
        if json.json, let format, format != .json {
            throw ValidationError("--json and --format \(format.rawValue) ask for two outputs; give one")
        }
    }

    /// The output format: `--format`, or json for `--json`, else text.
    private var reportFormat: FindingsReport.Format { format ?? (json.json ? .json : .text) }

    /// Warns of options that do nothing without the option they go with.
    private func warnUnused() {
        if rules == nil {
            if auth != nil { warn("--auth has no effect without --rules (it is the auth variable of the rules)") }
            if rulesMemoryLimit != nil { warn("--rules-memory-limit has no effect without --rules") }
        }
        if blobs == nil && referenceStyle != nil { warn("--ref-style has no effect without --blobs") }
        if schemas.isEmpty && schemaMap == nil {
            if allowUnmatched { warn("--allow-unmatched has no effect without --schema or --schema-map") }
            if !schemaDirs.isEmpty || !refMaps.isEmpty {
                warn("--schema-dir and --ref-map have no effect without --schema or --schema-map")
            }
        }
    }

    func run() throws {
        warnUnused()
        let report = try reportingErrors { () throws -> FindingsReport? in
            var job = ValidateJob(input: input)
            job.maxFindings = maxFindings
            job.strict = strict
            job.allowUnmatched = allowUnmatched
            if let rulesMemoryLimit { job.rulesMemoryLimit = Int64(rulesMemoryLimit) << 20 }
            if let blobs {
                job.blobs = ValidateJob.BlobCheck(store: blobs)
                job.blobs?.openStore = stores.openStore
                if let referenceStyle { job.blobs?.style = referenceStyle }
            }
            let catalog = SchemaCatalog()
            for dir in schemaDirs { try catalog.addDirectory(dir, recursive: true) }
            for m in refMaps {
                guard let eq = m.firstIndex(of: "="), eq != m.startIndex else {
                    throw UsageError("--ref-map takes URI-PREFIX=DIR, got '\(m)'")
                }
                catalog.addPrefix(String(m[..<eq]), directory: String(m[m.index(after: eq)...]))
            }
            for s in schemas {
                guard let eq = s.firstIndex(of: "=") else { throw UsageError("--schema takes PATTERN=FILE, got '\(s)'") }
                let file = String(s[s.index(after: eq)...])
                job.schemas.append(try SchemaBinding.load(pattern: String(s[..<eq]), file: file, catalog: catalog))
            }
            if let schemaMap { job.schemas += try SchemaBinding.loadMap(schemaMap, catalog: catalog) }
            if let rules { job.rules = try RulesFile(contentsOfFile: rules) }
            if let auth {
                do {
                    job.auth = try JSONReader(source: MemoryByteSource(auth)).readValue()
                } catch {
                    throw UsageError("--auth is not JSON: \(error)")
                }
            }
            if let spec = try shard.spec() {
                guard let output else { throw UsageError("a validate shard writes its findings to OUT.part-I-of-N: pass -o OUT") }
                let m = try job.runShard(spec, indexPath: shard.index!, output: output, progress: common.progress())
                reportShard(m, output: output)
                return nil
            }
            if output != nil { warn("-o has no effect without --index: the report goes to standard output") }
            return try job.run(progress: common.progress())
        }
        guard let report else { return }
        FileHandle.standardOutput.write(Data(report.render(reportFormat).utf8))
        if report.errorCount > 0 { throw Exit.findings }
    }

    /// Tells what a shard wrote (its findings are reported by merge).
    private func reportShard(_ m: ShardManifest, output: String) {
        let part = ShardManifest.partPath(output: output, shard: m.shard, of: m.shards)
        common.note(
            "wrote \(part): \(counted(m.counts["findings"] ?? 0, "finding")) in \(counted(m.records, "record")); "
                + "dumpkit merge \(output) reports them with the other shards'")
    }
}

extension FindingsReport.Format: ExpressibleByArgument {}
