/// The options of an `extract-blobs` step, which moves inline images out of records into a blob
/// store. The plan engine only reads and checks them: `PlanRunner.blobExtractions` hands them on, and
/// `ExtractStepBlobs` runs `ExtractBlobs` with them after the other steps on the records the step matches.
///
/// ```yaml
/// - extract-blobs: { match: data-uri, fields: [images], min-bytes: 1024, name: "todolist/{id}/{sha256}.{ext}", ref-style: object }
/// ```
public struct ExtractBlobsOptions: Hashable, Sendable, CustomStringConvertible {
    /// The operation's name in plan files.
    public static let name = "extract-blobs"

    /// Which strings count as inline blobs.
    public enum Match: String, Sendable, CaseIterable {
        /// `data:<type>;base64,...` strings only.
        case dataURI = "data-uri"
        /// Data URIs and bare base64 whose decoded bytes start like a known file type.
        case base64
    }

    /// What replaces an extracted string.
    public enum RefStyle: String, Sendable, CaseIterable {
        /// A reference object: `{path, contentType, size, sha256, md5}`.
        case object
        /// A Salada era-2 File value: `{name, url, mimeType}` (needs the bucket of the download URLs).
        case saladaFile = "salada-file"
        /// The object name as a string.
        case name
    }

    /// Placeholders `name` may use besides the step pattern's captures.
    public static let placeholders = ["sha256", "ext", "field", "key", "path", "record"]

    /// Which strings are blobs.
    public var match: Match
    /// Fields to look in; empty means every string in the record.
    public var fields: [FieldPath]
    /// Decoded size below which a blob stays inline.
    public var minBytes: Int
    /// The object name template, e.g. `todolist/{id}/{sha256}.{ext}`.
    public var nameTemplate: String
    /// What replaces an extracted string.
    public var refStyle: RefStyle
    /// Where the operation is written.
    public var location: PlanLocation

    init(_ options: PlanNode?, _ context: OperationContext) throws(PlanError) {
        let d = context.decoder
        let o = try d.options(
            options ?? PlanNode(content: .mapping([]), location: context.location), operation: Self.name,
            allowed: ["match", "fields", "min-bytes", "name", "ref-style"], required: [])
        match = Match(
            rawValue: try o["match"].map { n throws(PlanError) in try d.choice(n, "'match'", Match.allCases.map(\.rawValue)) } ?? "data-uri"
        )!
        fields = try o["fields"].map { n throws(PlanError) in try d.fields(n, "'fields'") } ?? []
        minBytes = try o["min-bytes"].map { n throws(PlanError) in try d.integer(n, "'min-bytes'") } ?? 0
        refStyle = RefStyle(
            rawValue: try o["ref-style"].map { n throws(PlanError) in try d.choice(n, "'ref-style'", RefStyle.allCases.map(\.rawValue)) }
                ?? "object")!
        let nameNode = o["name"]
        nameTemplate = try nameNode.map { n throws(PlanError) in try d.string(n, "'name'") } ?? "blobs/{sha256}.{ext}"
        location = context.location
        let captures =
            context.patterns.first?.captureNames.filter { name in context.patterns.allSatisfy { $0.captureNames.contains(name) } } ?? []
        let known = Self.placeholders + captures
        for placeholder in try Self.placeholders(in: nameTemplate, d, nameNode?.location ?? o.location) where !known.contains(placeholder) {
            throw d.error(
                nameNode?.location ?? o.location,
                "'name' uses {\(placeholder)}, which is neither a capture of the step's pattern nor one of {\(Self.placeholders.joined(separator: "}, {"))}"
            )
        }
        if !["{sha256}", "{key}", "{field}", "{path}"].contains(where: { nameTemplate.contains($0) }) {
            throw d.error(
                nameNode?.location ?? o.location,
                "'name' must contain {sha256}, {key}, {field} or {path}, or every blob would get the same name")
        }
    }

    /// The `{placeholder}` names in a template.
    private static func placeholders(in template: String, _ d: PlanDecoder, _ location: PlanLocation) throws(PlanError) -> [String] {
        var out: [String] = []
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { throw d.error(location, "unclosed '{' in 'name'") }
            let name = String(rest[rest.index(after: open)..<close])
            if name.isEmpty { throw d.error(location, "empty '{}' in 'name'") }
            out.append(name)
            rest = rest[rest.index(after: close)...]
        }
        if rest.contains("}") { throw d.error(location, "unmatched '}' in 'name'") }
        return out
    }

    public var description: String {
        "extract-blobs \(match.rawValue)" + (fields.isEmpty ? "" : " in \(fields.map(\.description).joined(separator: ", "))")
            + " of at least \(minBytes) bytes as \(nameTemplate) (\(refStyle.rawValue))"
    }
}
