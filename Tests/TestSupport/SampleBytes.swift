/// Test inputs, generated deterministically so that failures reproduce.
public enum SampleBytes {
    /// 5 MB: 2.5 MB of pseudo-random bytes followed by 2.5 MB of JSON-like text.
    public static let mixed: [UInt8] = random(count: 2_500_000, seed: 1) + text(count: 2_500_000)

    /// `count` pseudo-random bytes (`SplitMix64` from `seed`), incompressible.
    public static func random(count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for i in words.indices { words[i] = generator.next() }
        return words.withUnsafeBytes { Array($0.prefix(count)) }
    }

    /// `count` bytes of repetitive JSON-like text, very compressible.
    public static func text(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 100)
        var i = 0
        while bytes.count < count {
            bytes += Array(#"{"id":"-K\#(i)","title":"todo number \#(i)","done":\#(i % 3 == 0)},"#.utf8)
            i += 1
        }
        return Array(bytes.prefix(count))
    }
}
