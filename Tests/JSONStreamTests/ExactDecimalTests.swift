import JSONStream
import XCTest

/// Exact decimals and `JSONValue` equivalence: the one number model behind plans' conversions and
/// comparisons and JSON Schema's `const`, `enum`, limits and `multipleOf`.
final class ExactDecimalTests: XCTestCase {
    func testParsingNormalisesAndIsStrictUnlessLenient() {
        XCTAssertEqual(ExactDecimal("1.50"), ExactDecimal("1.5"))
        XCTAssertEqual(ExactDecimal("15e-1"), ExactDecimal("1.5"))
        XCTAssertEqual(ExactDecimal("0.1e1"), ExactDecimal("1"))
        XCTAssertNil(ExactDecimal("007"))
        XCTAssertEqual(ExactDecimal(" +007 ", lenient: true)?.text, "7")
        XCTAssertNil(ExactDecimal("1."))
        XCTAssertNil(ExactDecimal(".5"))
        XCTAssertNil(ExactDecimal("1e"))
        XCTAssertNil(ExactDecimal("٣", lenient: true))
        XCTAssertEqual(ExactDecimal("-0")!.text, "0")
        XCTAssertFalse(ExactDecimal("-0")!.negative)
    }

    func testConversionsDoNotRound() {
        XCTAssertEqual(ExactDecimal("1482814956.1234")!.shifted(by: 3).text, "1482814956123.4")
        XCTAssertEqual(ExactDecimal("-0.0005")!.shifted(by: 3).rounded().text, "-1")
        XCTAssertEqual(ExactDecimal("9.99")!.rounded().text, "10")
        XCTAssertEqual(ExactDecimal("0.4")!.rounded().text, "0")
        XCTAssertEqual(ExactDecimal("1e2")!.text, "100")
        XCTAssertEqual(ExactDecimal("123456789012345678901234567890")!.int64Value, nil)
        XCTAssertEqual(ExactDecimal("9e18")!.int64Value, 9_000_000_000_000_000_000)
        // Exponents too large for plain digits are written with an exponent, never a million zeros.
        XCTAssertEqual(ExactDecimal("12e99999999999999")!.text, "12e1099511627776")
        XCTAssertEqual(ExactDecimal("1e999999")!.text.utf8.count, 1_000_000)
        XCTAssertEqual(ExactDecimal("5e-2000000")!.text, "5e-2000000")
    }

    func testComparisonAndMultiples() {
        XCTAssertEqual(ExactDecimal("1e2")!.compare(ExactDecimal("100.0")!), 0)
        XCTAssertEqual(ExactDecimal("-1e-400")!.compare(ExactDecimal("0")!), -1)
        XCTAssertEqual(ExactDecimal("1e400")!.compare(ExactDecimal("9.99e399")!), 1)
        XCTAssertTrue(ExactDecimal("0.0075")!.isMultiple(of: ExactDecimal("0.0001")!))
        XCTAssertFalse(ExactDecimal("0.00751")!.isMultiple(of: ExactDecimal("0.0001")!))
        XCTAssertFalse(ExactDecimal("1e308")!.isMultiple(of: ExactDecimal("7e-1")!))
    }

    func testEquivalenceIsByValueMembersAndCodePoints() throws {
        func json(_ text: String) throws -> JSONValue { try JSONReader(bytes: Array(text.utf8)).readValue() }
        XCTAssertTrue(try json(#"{"a": [1.0, 2e0], "b": null}"#).isEquivalent(to: try json(#"{"b": null, "a": [1, 2]}"#)))
        XCTAssertFalse(try json(#"{"a": 1}"#).isEquivalent(to: try json(#"{"a": 1, "b": 2}"#)))
        XCTAssertFalse(try json(#"[1, 2]"#).isEquivalent(to: try json(#"[2, 1]"#)))
        // Canonically equivalent strings are different data.
        XCTAssertFalse(JSONValue.string("é").isEquivalent(to: .string("e\u{301}")))
        // Equivalent values hash alike.
        func hash(_ v: JSONValue) -> Int {
            var h = Hasher()
            v.hashEquivalence(into: &h)
            return h.finalize()
        }
        XCTAssertEqual(hash(try json(#"{"x": 1.50, "y": [true]}"#)), hash(try json(#"{"y": [true], "x": 15e-1}"#)))
    }
}
