import JSONStream
import LiveDatabase
import XCTest

/// `ExportJob.KeySearch` against a database simulated by its answers: a probe `[from, bound]` is
/// refused exactly when the child sought is at or before `bound` in the database's order.
final class KeySearchTests: XCTestCase {
    /// Runs a search for `target` (`nil`: no child) from `from`; the outcome and the probes it took.
    private func search(_ target: String?, from: String?) -> (ExportJob.KeySearch.Step, probes: Int, bounds: [String]) {
        let search = ExportJob.KeySearch(from: from)
        var bounds: [String] = []
        while bounds.count < 10_000 {
            let bound = search.probe.bound
            bounds.append(bound)
            let refused = target.map { !DatabaseKeyOrder.less(bound, $0) } ?? false
            let step = search.advance(atOrBefore: refused)
            if step != .searching { return (step, bounds.count, bounds) }
        }
        return (.searching, bounds.count, bounds)
    }

    func testEveryKindOfKeyIsFoundAndPrintableASCIITakesAboutEightProbesACharacter() {
        let keys = [
            "-NxYz012abcDEF_ghiJK", "a", "ab", "ab ", "a~", "~", " ", "z!", "é", "日本", "🙂", "k\u{10FFFF}", "\u{FFFF}x", "\u{E000}",
            "\u{D7FF}", "007", "-0", "2147483648", "0", "-2147483648", "2147483647", "41", String(repeating: "w", count: 768),
        ]
        for key in keys {
            let from: String? = DatabaseKeyOrder.integerValue(key.utf8) != nil ? nil : (key == " " ? nil : " ")
            let (step, probes, bounds) = search(key, from: from)
            XCTAssertEqual(step, .found(key), key)
            XCTAssertTrue(bounds.allSatisfy { $0.utf8.count <= 768 }, "\(key): a bound longer than any key")
            if key.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value <= 0x7E }), DatabaseKeyOrder.integerValue(key.utf8) == nil {
                XCTAssertLessThanOrEqual(probes, 9 * key.unicodeScalars.count + 9, key)
            }
        }
        // From an integer key, integers are searched from there.
        let (step, probes, bounds) = search("42", from: "42")
        XCTAssertEqual(step, .found("42"))
        XCTAssertTrue(bounds.dropFirst().allSatisfy { Int($0).map { $0 >= 42 } ?? true }, "\(bounds)")
        XCTAssertLessThanOrEqual(probes, 33)
    }

    func testAChildThatIsGoneEndsTheSearchSoon() {
        for from in [nil, " ", "abc ", "17"] {
            let (step, probes, _) = search(nil, from: from)
            XCTAssertEqual(step, .vanished, "from \(from ?? "the start")")
            XCTAssertLessThan(probes, 30, "from \(from ?? "the start")")
        }
        // Every probe refused from a key that is not an integer: no key fits.
        let search = ExportJob.KeySearch(from: "m ")
        var step = ExportJob.KeySearch.Step.searching
        var probes = 0
        while step == .searching, probes < 100 {
            step = search.advance(atOrBefore: true)
            probes += 1
        }
        XCTAssertEqual(step, .vanished)
    }
}
