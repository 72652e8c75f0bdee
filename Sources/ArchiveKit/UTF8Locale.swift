#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs libarchive calls under a UTF-8 character type on the calling thread only.
///
/// libarchive converts path names between the current locale and the UTF-8 of pax and zip headers.
/// A Swift program runs in the "C" locale (ASCII), where any non-ASCII name fails that conversion and
/// ends up flagged as binary. `uselocale` changes the locale of this thread alone, so nothing else in
/// the process is affected.
enum UTF8Locale {
    /// `C.UTF-8` (character type only), or `nil` where the C library has no such locale.
    nonisolated(unsafe) private static let locale: locale_t? = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil)

    /// Runs `body` with the UTF-8 locale installed on this thread, then restores the previous one.
    static func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard let locale else { return try body() }
        let previous = uselocale(locale)
        defer { uselocale(previous) }
        return try body()
    }
}
