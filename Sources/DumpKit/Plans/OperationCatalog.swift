/// What an operation's decoder knows besides its options: the decoder (for errors) and the step's
/// source patterns.
struct OperationContext {
    var decoder: PlanDecoder
    /// The patterns of the step the operation belongs to.
    var patterns: [PathPattern]
    /// Where the operation is written.
    var location: PlanLocation
}

/// The operations plan files can name, and how each reads its options.
enum OperationCatalog {
    /// Operation names in plan files, with the name `extract-blobs`, which the runner hands on.
    static let names = [
        MoveOperation.name, RenameOperation.name, ConvertOperation.name, MapOperation.name, DefaultOperation.name,
        DropOperation.name, DeleteOperation.name, CollectOperation.name, SpreadOperation.name, BackfillOperation.name,
        NormalizeFileOperation.name, ExtractBlobsOptions.name,
    ]

    /// Reads the operation `name` from its options node (`nil` for operations written without options).
    static func decode(_ name: String, _ options: PlanNode?, _ context: OperationContext) throws(PlanError) -> any PlanOperation {
        let empty = PlanNode(content: .mapping([]), location: context.location)
        switch name {
        case MoveOperation.name: return try MoveOperation(options ?? empty, context)
        case RenameOperation.name: return try RenameOperation(options ?? empty, context)
        case ConvertOperation.name: return try ConvertOperation(options ?? empty, context)
        case MapOperation.name: return try MapOperation(options ?? empty, context)
        case DefaultOperation.name: return try DefaultOperation(options ?? empty, context)
        case DropOperation.name: return try DropOperation(options ?? empty, context)
        case DeleteOperation.name: return try DeleteOperation(options, context)
        case CollectOperation.name: return try CollectOperation(options ?? empty, context)
        case SpreadOperation.name: return try SpreadOperation(options ?? empty, context)
        case BackfillOperation.name: return try BackfillOperation(options ?? empty, context)
        case NormalizeFileOperation.name: return try NormalizeFileOperation(options ?? empty, context)
        default:
            throw context.decoder.error(context.location, "unknown operation '\(name)'" + context.decoder.suggestion(name, names))
        }
    }
}
