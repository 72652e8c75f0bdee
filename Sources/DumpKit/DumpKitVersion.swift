/// The tool's version, as `dumpkit --version` prints it and manifests and reports record it.
public enum DumpKitVersion {
    public static let string = "0.1.0"
}
