import DumpKit
import XCTest

final class PrintableTextTests: XCTestCase {
    func testControlCharactersAreWrittenAsEscapes() {
        XCTAssertEqual("/a\u{1B}[31mred/b\u{7}\n\u{7F}\u{9B}".escapingControlCharacters, #"/a\u001B[31mred/b\u0007\u000A\u007F\u009B"#)
        XCTAssertEqual("plain/キー/😀 é".escapingControlCharacters, "plain/キー/😀 é")
    }
}
